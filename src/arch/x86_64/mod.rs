//! x86_64: the `asm!` that differs on this ISA (chase and load-use
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
pub(crate) const CLOCK_CHAIN_INSTRUCTIONS: [&str; 2] = ["add r64, r64", "imul r64, r64"];

/// What this ISA's cores document of the clock chain's multiply.
pub(crate) const MULTIPLY: crate::platform::clock::Multiply =
    crate::platform::clock::Multiply::X86_64;

/// This ISA has hand-written kernels.
pub(crate) const HAS_ASM: bool = true;

/// CPUID leaf and subleaf: (eax, ebx, ecx, edx).
pub(crate) fn cpuid(leaf: u32, subleaf: u32) -> Option<(u32, u32, u32, u32)> {
    // SAFETY: CPUID exists on every x86_64 processor and has no side effects
    // (the intrinsic is an unsafe fn before Rust 1.87, a safe one after).
    #[allow(unused_unsafe)]
    let r = unsafe { core::arch::x86_64::__cpuid_count(leaf, subleaf) };
    Some((r.eax, r.ebx, r.ecx, r.edx))
}
