//! aarch64 counters: `pmccntr_el0` when the kernel grants user access, else `cntvct_el0`.

use std::arch::asm;

use crate::platform::clock::counter::{
    Counts, IsaCounter, calibrate_ticks_per_ns, exit_with_advice_on_sigill, sysctl,
};
use crate::platform::counters::SelfMonitor;

fn cntvct() -> u64 {
    let value: u64;
    // SAFETY: Linux sets CNTKCTL_EL1.EL0VCTEN, so EL0 may read the virtual count.
    unsafe { asm!("isb", "mrs {}, cntvct_el0", out(reg) value, options(nostack, nomem)) };
    value
}

fn cntfrq() -> u64 {
    let value: u64;
    // SAFETY: cntfrq_el0 is readable at EL0 whenever cntvct_el0 is.
    unsafe { asm!("mrs {}, cntfrq_el0", out(reg) value, options(nostack, nomem)) };
    value
}

fn pmccntr() -> u64 {
    let value: u64;
    // SAFETY: only called after the kernel published user access to the cycle
    // counter (cap_user_rdpmc with the cycle counter's index); a SIGILL guard is installed.
    unsafe { asm!("isb", "mrs {}, pmccntr_el0", out(reg) value, options(nostack, nomem)) };
    value
}

/// perf's index of the arm64 cycle counter (ARMV8_IDX_CYCLE_COUNTER).
const CYCLE_COUNTER_INDEX: u32 = 31;

/// `pmccntr_el0` when `perf_user_access` is 1 and perf maps the cycles event onto
/// the cycle counter; otherwise the generic timer's virtual count.
pub(crate) fn best_counter() -> Result<IsaCounter, String> {
    let access = sysctl("/proc/sys/kernel/perf_user_access");
    if access == Some(1) {
        // config1 bit 1 asks arm64 perf for user access to the event's counter.
        if let Ok(monitor) = SelfMonitor::open_cycles(1 << 1)
            && monitor.user_counter() == Some(CYCLE_COUNTER_INDEX)
        {
            exit_with_advice_on_sigill("pmccntr_el0");
            return Ok(IsaCounter::new(
                "pmccntr_el0",
                Counts::CoreCycles,
                Box::new(pmccntr),
                Some(monitor),
            ));
        }
    }
    let frequency = cntfrq();
    let ticks_per_ns = if frequency > 0 {
        frequency as f64 / 1e9
    } else {
        calibrate_ticks_per_ns(&cntvct)
    };
    let mut counter = IsaCounter::new(
        "cntvct_el0",
        Counts::Time { ticks_per_ns },
        Box::new(cntvct),
        None,
    );
    counter.note = Some(format!(
        "pmccntr_el0 is not readable from user space (perf_user_access is {}; `sysctl kernel.perf_user_access=1` and a PMU allow it); cntvct_el0 is a time base",
        access.map_or("absent".to_string(), |a| a.to_string())
    ));
    Ok(counter)
}

/// Only x86 has a TSC whose rate says something about the core clock.
pub(crate) fn tsc_ghz() -> Option<f64> {
    None
}
