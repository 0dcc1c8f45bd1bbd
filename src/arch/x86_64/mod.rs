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

/// The multiply's latency where the chains disagree (a renamer folding
/// adds): imul r64, r64 takes 3 cycles on every Intel core since Sandy
/// Bridge and every AMD Zen, the cores whose renamers fold.
pub(crate) const MUL_CYCLES: Option<f64> = Some(3.0);

/// The whole numbers of cycles imul r64, r64 takes on x86 cores: 3 on Intel
/// since Sandy Bridge and AMD Zen, up to 6 on AMD Jaguar and Bulldozer.
pub(crate) const MUL_CYCLES_RANGE: (f64, f64) = (3.0, 6.0);

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
