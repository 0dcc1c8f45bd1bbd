//! ISAs without an asm counter: none; memlat times with the monotonic clock.

use super::counter::IsaCounter;

pub(super) fn best() -> Result<IsaCounter, String> {
    Err("this ISA has no cycle counter support in memlat; using the monotonic clock".into())
}
