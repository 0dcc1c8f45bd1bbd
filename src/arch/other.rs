//! ISAs without `asm!` kernels: the portable (volatile-read) kernels, no
//! user-space counter (memlat times with the monotonic clock), no load-use
//! kernels, no CPUID.

use crate::platform::clock::counter::IsaCounter;

pub(crate) use super::portable::{
    add_chain, chase_index, chase_pointer, empty_loop, load_pointer, mul_chain,
};

/// The portable clock chains: register adds and multiplies, each operand
/// loaded off the chain ([`super::portable::add_chain`]).
pub(crate) const CLOCK_CHAIN_INSTRUCTIONS: [&str; 2] = ["wrapping_add", "wrapping_mul"];

/// What this ISA's cores document of the clock chains' add and multiply.
#[cfg(target_arch = "powerpc64")]
pub(crate) const MULTIPLY: crate::platform::clock::Multiply =
    crate::platform::clock::Multiply::POWER;
#[cfg(not(target_arch = "powerpc64"))]
pub(crate) const MULTIPLY: crate::platform::clock::Multiply =
    crate::platform::clock::Multiply::OTHERS;

/// This ISA has no hand-written kernels.
pub(crate) const HAS_ASM: bool = false;

pub(crate) fn best_counter() -> Result<IsaCounter, String> {
    Err("this ISA has no cycle counter support in memlat; using the monotonic clock".into())
}

/// Only x86 has a TSC whose rate says something about the core clock.
pub(crate) fn tsc_ghz() -> Option<f64> {
    None
}

/// No load-use kernels without `asm!`; never called (`HAS_ASM` is false).
///
/// # Safety
/// None needed: it reads nothing.
pub(crate) unsafe fn load_use<const N: usize, const U: usize>(
    p: *const u64,
    _trips: u64,
) -> *const u64 {
    unreachable!("load-use kernels exist only where HAS_ASM is true ({p:?})")
}

/// CPUID is x86 only.
pub(crate) fn cpuid(_leaf: u32, _subleaf: u32) -> Option<(u32, u32, u32, u32)> {
    None
}

/// No per-load timer without `asm!`: `--distribution` needs one.
pub(crate) const TIMESTAMP: Option<&str> = None;

/// No per-load timer without `asm!`.
pub(crate) fn timestamp_ticks_per_ns() -> Option<f64> {
    None
}

/// No per-load timing without `asm!`: always `None`.
///
/// # Safety
/// None needed: it reads nothing.
pub(crate) unsafe fn timed_chase(
    _start: *const u64,
    _group: u64,
    _out: *mut u32,
    _timings: u64,
) -> Option<*const u64> {
    None
}

/// No flush instruction memlat may use here: this ISA has no `asm!` in memlat (line size falls
/// back to conflict eviction).
pub(crate) const FLUSH_INSTRUCTION: Option<&str> = None;

/// No flush here: does nothing and returns `false`.
///
/// # Safety
/// None needed: it touches nothing.
pub(crate) unsafe fn flush_lines(_lines: &[*const u64]) -> bool {
    false
}
