//! riscv64 counters: `rdcycle` when the kernel lets user space read it, else `rdtime`.

use std::arch::asm;

use crate::platform::clock::counter::{
    Counts, IsaCounter, calibrate_ticks_per_ns, exit_with_advice_on_sigill, sysctl,
};
use crate::platform::counters::SelfMonitor;

fn rdcycle() -> u64 {
    let value: u64;
    // SAFETY: only called once the kernel allows user reads of the cycle CSR
    // (scounteren.CY), with a SIGILL guard installed in case it does not.
    unsafe { asm!("rdcycle {}", out(reg) value, options(nostack, nomem)) };
    value
}

fn rdtime() -> u64 {
    let value: u64;
    // SAFETY: Linux always enables user reads of the time CSR (the vDSO needs it).
    unsafe { asm!("rdtime {}", out(reg) value, options(nostack, nomem)) };
    value
}

/// As seed 000 explains, the kernel (through SBI) only lets user space read
/// `cycle` when perf says so. Since Linux 6.6 `perf_user_access` decides:
/// 2 = legacy, always readable; 1 = readable for a perf event this thread has
/// mmap'd (so one is opened and kept); 0 = never. Older kernels have no such
/// sysctl and leave it readable.
pub(crate) fn best_counter() -> Result<IsaCounter, String> {
    let access = sysctl("/proc/sys/kernel/perf_user_access");
    let keep = match access {
        None | Some(2) => Some(None),
        Some(1) => SelfMonitor::open_cycles(0)
            .ok()
            .filter(|m| m.user_counter().is_some())
            .map(Some),
        Some(_) => None,
    };
    if let Some(keep) = keep {
        exit_with_advice_on_sigill("rdcycle");
        return Ok(IsaCounter::new(
            "rdcycle",
            Counts::CoreCycles,
            Box::new(rdcycle),
            keep,
        ));
    }
    let ticks_per_ns = calibrate_ticks_per_ns(&rdtime);
    let mut counter = IsaCounter::new(
        "rdtime",
        Counts::Time { ticks_per_ns },
        Box::new(rdtime),
        None,
    );
    counter.note = Some(format!(
        "rdcycle is not readable from user space (perf_user_access is {}; `sysctl kernel.perf_user_access=2`, or 1 with a PMU, allows it); rdtime is a time base",
        access.map_or("absent".to_string(), |a| a.to_string())
    ));
    Ok(counter)
}

/// Only x86 has a TSC whose rate says something about the core clock.
pub(crate) fn tsc_ghz() -> Option<f64> {
    None
}
