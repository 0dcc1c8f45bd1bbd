//! x86_64 counters: `rdpmc` when perf grants user access, else `rdtsc`.

use std::arch::asm;

use crate::platform::clock::counter::{Counts, IsaCounter, calibrate_ticks_per_ns};
use crate::platform::counters::SelfMonitor;

fn rdtsc() -> u64 {
    // SAFETY: rdtsc is unprivileged on Linux (CR4.TSD clear) and has no side effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

fn rdpmc(index: u32) -> u64 {
    let (low, high): (u32, u32);
    // SAFETY: only called for the counter index the kernel published with
    // cap_user_rdpmc set, which makes rdpmc legal in user space.
    unsafe {
        asm!("rdpmc", in("ecx") index, out("eax") low, out("edx") high, options(nostack, nomem));
    }
    ((high as u64) << 32) | low as u64
}

/// `rdpmc` of a cycles event when the PMU and perf allow it; else the TSC, a
/// constant-rate time base (not core cycles: turbo and power states change their ratio).
pub(crate) fn best_counter() -> Result<IsaCounter, String> {
    if let Ok(monitor) = SelfMonitor::open_cycles(0)
        && let Some(index) = monitor.user_counter()
    {
        let width = monitor.width().clamp(1, 64) as u32;
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        return Ok(IsaCounter::new(
            "rdpmc",
            Counts::CoreCycles,
            Box::new(move || rdpmc(index) & mask),
            Some(monitor),
        ));
    }
    let ticks_per_ns = calibrate_ticks_per_ns(&rdtsc);
    let mut counter = IsaCounter::new(
        "rdtsc",
        Counts::Time { ticks_per_ns },
        Box::new(rdtsc),
        None,
    );
    counter.note = Some(
        "no user-space core-cycle counter (rdpmc needs a hardware PMU and /sys/bus/event_source/devices/cpu/rdpmc = 1 or 2); rdtsc is a time base".into(),
    );
    Ok(counter)
}

/// The TSC's rate timed against the monotonic clock, GHz (a time base's
/// rate: on Intel the nominal frequency, on AMD the P0 frequency).
pub(crate) fn tsc_ghz() -> Option<f64> {
    Some(calibrate_ticks_per_ns(&rdtsc))
}
