//! Where the chain lives: mmap'd buffers with the page backing asked for and
//! read back from /proc/self/smaps, NUMA binding, CPU pinning.

mod buffer;
mod cpu;
mod numa;

pub use buffer::{Buffer, PageBacking, PageRequest, mem_available_bytes};
pub use cpu::{allowed_cpus, current_cpu, pin_to_cpu};
pub use numa::{bind_to_node, node_exists};
