//! riscv64 per-load timing: `rdtime` after each group of dependent loads.
//! The `xor` uses the last loaded value, so an in-order core stalls there
//! until the load returns, and the `fence` orders it before the time read.
//! `rdtime` ticks at the platform timer's rate (often 10-25 MHz): groups
//! are chosen long enough for it.

use std::arch::asm;

/// The timer the distribution kernel reads.
pub(crate) const TIMESTAMP: Option<&str> = Some("rdtime");

fn rdtime() -> u64 {
    let value: u64;
    // SAFETY: Linux always enables user reads of the time CSR (the vDSO needs it).
    unsafe { asm!("rdtime {}", out(reg) value, options(nostack, nomem)) };
    value
}

/// Timer ticks per nanosecond, timed against the monotonic clock.
pub(crate) fn timestamp_ticks_per_ns() -> Option<f64> {
    Some(crate::platform::clock::counter::calibrate_ticks_per_ns(
        &rdtime,
    ))
}

/// Follows `timings * group` pointers from `start`, writing the timer ticks
/// each group of `group` loads took to `out[0..timings]`; returns the end.
///
/// # Safety
/// Every node reachable from `start` holds the address of the next one;
/// `out` is valid for `timings` u32 writes; `group` and `timings` are >= 1.
pub(crate) unsafe fn timed_chase(
    start: *const u64,
    group: u64,
    out: *mut u32,
    timings: u64,
) -> Option<*const u64> {
    let mut p = start;
    // SAFETY: the caller guarantees the chain and the output slots; the asm
    // reads only chain nodes and writes only `out[0..timings]`.
    unsafe {
        asm!(
            "fence rw, rw",
            "rdtime {prev}",
            "2:",
            "mv {g}, {group}",
            "3:",
            "ld {p}, 0({p})",
            "addi {g}, {g}, -1",
            "bnez {g}, 3b",
            "xor {t}, {p}, {p}",
            "fence rw, rw",
            "rdtime {t}",
            "fence rw, rw",
            "sub {d}, {t}, {prev}",
            "mv {prev}, {t}",
            "sw {d}, 0({out})",
            "addi {out}, {out}, 4",
            "addi {n}, {n}, -1",
            "bnez {n}, 2b",
            p = inout(reg) p,
            group = in(reg) group,
            g = out(reg) _,
            prev = out(reg) _,
            t = out(reg) _,
            d = out(reg) _,
            out = inout(reg) out => _,
            n = inout(reg) timings => _,
            options(nostack),
        );
    }
    Some(p)
}
