//! The ISA's own counters, read in user space: x86 `rdtsc`/`rdpmc`, arm64
//! `cntvct_el0`/`pmccntr_el0`, RISC-V `rdcycle`/`rdtime`. One interface,
//! [`IsaCounter`], whatever the ISA; `best()` picks the most accurate one the
//! kernel lets this process read.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// What a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Counts {
    /// Core clock cycles of this CPU (rdcycle, pmccntr_el0, rdpmc).
    CoreCycles,
    /// A constant-rate time base (rdtsc, cntvct_el0, rdtime), this many ticks per nanosecond.
    Time {
        /// Ticks per nanosecond.
        ticks_per_ns: f64,
    },
}

/// A counter this process can read directly.
pub struct IsaCounter {
    /// Its name as the ISA manual spells it (`rdtsc`, `cntvct_el0`, `rdcycle`...).
    pub name: &'static str,
    /// What it counts.
    pub counts: Counts,
    /// Why it was chosen over better ones, when it was (e.g. "perf_user_access is 0").
    pub note: Option<String>,
    read: Box<dyn Fn() -> u64>,
    // Keeps a perf self-monitoring event open when the counter needs one.
    _keep: Option<crate::platform::counters::SelfMonitor>,
}

impl IsaCounter {
    pub(crate) fn new(
        name: &'static str,
        counts: Counts,
        read: Box<dyn Fn() -> u64>,
        keep: Option<crate::platform::counters::SelfMonitor>,
    ) -> IsaCounter {
        IsaCounter {
            name,
            counts,
            note: None,
            read,
            _keep: keep,
        }
    }

    /// The counter's value now.
    pub fn read(&self) -> u64 {
        (self.read)()
    }

    /// Whether it counts core cycles (else it is a time base).
    pub fn counts_cycles(&self) -> bool {
        self.counts == Counts::CoreCycles
    }
}

/// Ticks per nanosecond of a constant-rate counter, timed against the monotonic clock.
pub(crate) fn calibrate_ticks_per_ns(read: &dyn Fn() -> u64) -> f64 {
    let start = Instant::now();
    let first = read();
    while start.elapsed() < Duration::from_millis(20) {
        std::hint::spin_loop();
    }
    let ticks = read().wrapping_sub(first);
    let ns = start.elapsed().as_nanos() as f64;
    ticks as f64 / ns
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
/// Reads a sysctl such as /proc/sys/kernel/perf_user_access; `None` when absent.
pub(crate) fn sysctl(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
/// Makes a trapping counter read end the process with advice instead of a bare
/// "Illegal instruction": a kernel can refuse user reads we were told are allowed.
pub(crate) fn exit_with_advice_on_sigill(counter: &'static str) {
    static MESSAGE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MESSAGE.get_or_init(|| {
        format!(
            "error: reading the {counter} counter trapped (SIGILL): this kernel does not let user space read it; rerun with --clock monotonic\n"
        )
    });
    extern "C" fn on_sigill(_: libc::c_int) {
        if let Some(message) = MESSAGE.get() {
            // SAFETY: write(2) and _exit(2) are async-signal-safe; the buffer is static.
            unsafe {
                libc::write(2, message.as_ptr().cast(), message.len());
                libc::_exit(1);
            }
        }
    }
    // SAFETY: installing a handler that only calls async-signal-safe functions.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigill as *const () as usize;
        libc::sigaction(libc::SIGILL, &action, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_counter_moves_forward_at_a_plausible_rate() {
        let counter =
            super::super::best_isa_counter().expect("every supported ISA has a time base");
        let a = counter.read();
        std::thread::sleep(Duration::from_millis(5));
        let b = counter.read();
        assert!(b > a, "{} did not advance", counter.name);
        if let Counts::Time { ticks_per_ns } = counter.counts {
            // Time bases run between 1 MHz and 10 GHz.
            assert!(
                ticks_per_ns > 0.001 && ticks_per_ns < 10.0,
                "{ticks_per_ns}"
            );
        }
    }
}
