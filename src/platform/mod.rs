//! What the machine is and lets memlat do: buffers and their page backing,
//! CPU affinity, NUMA binding, the caches the system claims (sysfs, CPUID,
//! a --machine profile), clocks and perf counters, prefetcher MSRs, the
//! processor's name and the operating system's settings. These are claims
//! and conditions, shown beside measurements, never reported as measured.

pub mod affinity;
pub mod buffer;
pub mod caches;
pub mod clock;
pub mod core_kind;
pub mod counters;
pub mod cpuid;
pub mod host;
pub mod numa;
pub mod prefetch;
pub mod system;
pub mod topology;
pub mod uarch;

pub use affinity::{allowed_cpus, current_cpu, pin_to_cpu};
pub use buffer::{Buffer, PageBacking, PageRequest, mem_available_bytes};
pub use numa::{bind_to_node, node_exists};
