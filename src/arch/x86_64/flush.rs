//! x86_64: dropping a line from every cache level. `clflush` is part of
//! SSE2, so every x86_64 core has it, and it is unprivileged.

/// The instruction that drops a line from every level.
pub(crate) const FLUSH_INSTRUCTION: Option<&str> = Some("clflush");

/// Writes back and invalidates, in every cache level, the line holding each
/// of `lines`, then waits (`mfence`) until the flushes are done, so a load
/// after this call finds none of them cached. Returns `true`: this ISA can.
///
/// # Safety
/// Every pointer lies within memory mapped readable by this process.
pub(crate) unsafe fn flush_lines(lines: &[*const u64]) -> bool {
    for &p in lines {
        // SAFETY: the caller guarantees `p` is mapped; clflush changes no data.
        unsafe { core::arch::x86_64::_mm_clflush(p.cast()) };
    }
    // SAFETY: a fence has no preconditions.
    unsafe { core::arch::x86_64::_mm_mfence() };
    true
}
