//! aarch64 per-load timing: the generic timer's virtual count after each
//! group of dependent loads. `dsb ishld` waits for the loads to complete and
//! `isb` keeps the counter read from being taken early; the `isb` after it
//! keeps the next group from starting before the read.

use std::arch::asm;

/// The timer the distribution kernel reads.
pub(crate) const TIMESTAMP: Option<&str> = Some("cntvct_el0");

fn cntvct() -> u64 {
    let value: u64;
    // SAFETY: Linux sets CNTKCTL_EL1.EL0VCTEN, so EL0 may read the virtual count.
    unsafe { asm!("isb", "mrs {}, cntvct_el0", out(reg) value, options(nostack, nomem)) };
    value
}

/// Timer ticks per nanosecond: the frequency the firmware publishes, else timed.
pub(crate) fn timestamp_ticks_per_ns() -> Option<f64> {
    let frequency: u64;
    // SAFETY: cntfrq_el0 is readable at EL0 whenever cntvct_el0 is.
    unsafe { asm!("mrs {}, cntfrq_el0", out(reg) frequency, options(nostack, nomem)) };
    Some(if frequency > 0 {
        frequency as f64 / 1e9
    } else {
        crate::platform::clock::counter::calibrate_ticks_per_ns(&cntvct)
    })
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
            "dsb ishld",
            "isb",
            "mrs {prev}, cntvct_el0",
            "isb",
            "2:",
            "mov {g}, {group}",
            "3:",
            "ldr {p}, [{p}]",
            "subs {g}, {g}, #1",
            "b.ne 3b",
            "dsb ishld",
            "isb",
            "mrs {t}, cntvct_el0",
            "isb",
            "sub {d}, {t}, {prev}",
            "mov {prev}, {t}",
            "str {d:w}, [{out}], #4",
            "subs {n}, {n}, #1",
            "b.ne 2b",
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
