//! aarch64: the `asm!` that differs on this ISA (chase and load-use
//! kernels, clock chains, the empty loop, user-space counters).

mod chase;
mod counter;
mod flush;
mod load_use;
mod timed;

pub(crate) use chase::{
    add_chain, chase_index, chase_pointer, empty_loop, load_pointer, mul_chain,
};
pub(crate) use counter::{best_counter, tsc_ghz};
pub(crate) use flush::{FLUSH_INSTRUCTION, flush_lines};
pub(crate) use load_use::load_use;
pub(crate) use timed::{TIMESTAMP, timed_chase, timestamp_ticks_per_ns};

/// The clock chains' instructions, as the ISA writes them.
pub(crate) const CLOCK_CHAIN_INSTRUCTIONS: [&str; 2] = ["add x, x, x", "mul x, x, x"];

/// What this ISA's cores document of the clock chain's multiply.
pub(crate) const MULTIPLY: crate::platform::clock::Multiply =
    crate::platform::clock::Multiply::OTHERS;

/// This ISA has hand-written kernels.
pub(crate) const HAS_ASM: bool = true;

/// CPUID is x86 only.
pub(crate) fn cpuid(_leaf: u32, _subleaf: u32) -> Option<(u32, u32, u32, u32)> {
    None
}
