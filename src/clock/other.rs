//! ISAs without an asm counter: none; memlat times with the monotonic clock.

use super::counter::IsaCounter;

pub(super) fn best() -> Result<IsaCounter, String> {
    Err("this ISA has no cycle counter support in memlat; using the monotonic clock".into())
}

/// Only x86 has a TSC whose rate says something about the core clock.
pub(super) fn tsc_ghz() -> Option<f64> {
    None
}
