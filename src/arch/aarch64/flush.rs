//! aarch64: dropping a line from every cache level. `dc civac` cleans and
//! invalidates to the point of coherence; Linux lets user space run it
//! (SCTLR_EL1.UCI is set), and `dsb ish` waits for it to finish.

use std::arch::asm;

/// The instruction that drops a line from every level.
pub(crate) const FLUSH_INSTRUCTION: Option<&str> = Some("dc civac");

/// Cleans and invalidates, to the point of coherence, the line holding each
/// of `lines`, then waits (`dsb ish`) until done. Returns `true`: this ISA can.
///
/// # Safety
/// Every pointer lies within memory mapped readable by this process.
pub(crate) unsafe fn flush_lines(lines: &[*const u64]) -> bool {
    for &p in lines {
        // SAFETY: the caller guarantees `p` is mapped; the clean changes no data.
        unsafe { asm!("dc civac, {p}", p = in(reg) p, options(nostack, preserves_flags)) };
    }
    // SAFETY: a barrier has no preconditions.
    unsafe { asm!("dsb ish", options(nostack, preserves_flags)) };
    true
}
