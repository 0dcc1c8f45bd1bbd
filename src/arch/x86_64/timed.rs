//! x86_64 per-load timing: `rdtscp` after each group of dependent loads.
//! `rdtscp` waits until every earlier load has completed; the `lfence` after
//! it keeps the next group's loads from starting before the read, so the
//! timer's cost is whole in every delta and subtracts cleanly.

use std::arch::asm;

/// The timer the distribution kernel reads.
pub(crate) const TIMESTAMP: Option<&str> = Some("rdtscp");

fn rdtscp() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp is unprivileged on Linux (CR4.TSD clear) and only writes `aux`.
    unsafe { core::arch::x86_64::__rdtscp(&mut aux) }
}

/// Timer ticks per nanosecond, timed against the monotonic clock.
pub(crate) fn timestamp_ticks_per_ns() -> Option<f64> {
    Some(crate::platform::clock::counter::calibrate_ticks_per_ns(
        &rdtscp,
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
            "rdtscp",
            "lfence",
            "shl rdx, 32",
            "or rax, rdx",
            "mov {prev}, rax",
            "2:",
            "mov {g}, {group}",
            "3:",
            "mov {p}, qword ptr [{p}]",
            "dec {g}",
            "jnz 3b",
            "rdtscp",
            "lfence",
            "shl rdx, 32",
            "or rax, rdx",
            "mov rdx, rax",
            "sub rax, {prev}",
            "mov {prev}, rdx",
            "mov dword ptr [{out}], eax",
            "add {out}, 4",
            "dec {n}",
            "jnz 2b",
            p = inout(reg) p,
            group = in(reg) group,
            g = out(reg) _,
            prev = out(reg) _,
            out = inout(reg) out => _,
            n = inout(reg) timings => _,
            out("rax") _,
            out("rdx") _,
            out("rcx") _,
            options(nostack),
        );
    }
    Some(p)
}
