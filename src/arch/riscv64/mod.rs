//! riscv64: the `asm!` that differs on this ISA (chase and load-use
//! kernels, clock chains, the empty loop, user-space counters).

mod chase;
mod counter;
mod load_use;
mod timed;

pub(crate) use chase::{
    add_chain, chase_index, chase_pointer, empty_loop, load_pointer, mul_chain,
};
pub(crate) use counter::{best_counter, tsc_ghz};
pub(crate) use load_use::load_use;
pub(crate) use timed::{TIMESTAMP, timed_chase, timestamp_ticks_per_ns};

/// The clock chains' instructions, as the ISA writes them.
pub(crate) const CLOCK_CHAIN_INSTRUCTIONS: [&str; 2] = ["add x, x, x", "mul x, x, x"];

/// The multiply's documented latency on every core of this ISA, if one
/// number holds for all (it does not: 2 to 5 cycles, by core).
pub(crate) const MUL_CYCLES: Option<f64> = None;

/// The whole numbers of cycles a 64-bit multiply takes on this ISA's cores:
/// 2 (Neoverse V2) to 5 (Cortex-A72); RISC-V and others alike.
pub(crate) const MUL_CYCLES_RANGE: (f64, f64) = (2.0, 5.0);

/// This ISA has hand-written kernels.
pub(crate) const HAS_ASM: bool = true;

/// CPUID is x86 only.
pub(crate) fn cpuid(_leaf: u32, _subleaf: u32) -> Option<(u32, u32, u32, u32)> {
    None
}

/// No flush instruction memlat may use here: `cbo.flush` needs Zicbom and
/// the kernel's consent, which memlat does not probe yet (line size falls
/// back to conflict eviction).
pub(crate) const FLUSH_INSTRUCTION: Option<&str> = None;

/// No flush here: does nothing and returns `false`.
///
/// # Safety
/// None needed: it touches nothing.
pub(crate) unsafe fn flush_lines(_lines: &[*const u64]) -> bool {
    false
}
