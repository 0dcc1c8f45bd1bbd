//! Time and the core clock.
//!
//! Nanoseconds come from the monotonic clock (`Instant`, CLOCK_MONOTONIC through
//! the vDSO). Cycles come from perf's `cycles` event when the machine has a PMU;
//! otherwise from nanoseconds times a core clock estimated here, by timing a long
//! chain of dependent adds (one cycle each on every core memlat targets).

mod counter;

#[cfg(target_arch = "x86_64")]
#[path = "x86_64.rs"]
mod arch;

#[cfg(target_arch = "aarch64")]
#[path = "aarch64.rs"]
mod arch;

#[cfg(target_arch = "riscv64")]
#[path = "riscv64.rs"]
mod arch;

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
#[path = "other.rs"]
mod arch;

pub use counter::{Counts, IsaCounter};

use std::time::{Duration, Instant};

use crate::kernel::{self, UNROLL};

/// What `--clock` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockRequest {
    /// The most accurate that works: perf cycles, else a user-readable core-cycle
    /// counter, else the monotonic clock with cycles estimated.
    Auto,
    /// The ISA's counter read in user space (rdcycle, pmccntr_el0, rdpmc; or the
    /// time bases rdtsc, cntvct_el0, rdtime when no cycle counter is readable).
    CycleCounter,
    /// perf's cycles event (needs a hardware PMU).
    Perf,
    /// clock_gettime(CLOCK_MONOTONIC); cycles estimated from the core clock.
    Monotonic,
}

/// The most accurate counter this ISA and kernel let user space read: a
/// core-cycle counter when granted, else the ISA's constant-rate time base.
pub fn best_isa_counter() -> Result<IsaCounter, String> {
    arch::best()
}

/// Runs `work` and returns how long it took.
pub fn time<R>(work: impl FnOnce() -> R) -> (Duration, R) {
    let start = Instant::now();
    let result = work();
    (start.elapsed(), result)
}

/// Doubles `trips` from 1 until `run(trips)` lasts at least `target`, and returns
/// that trip count (divan's way of getting far above the timer's precision).
pub fn trips_lasting(target: Duration, mut run: impl FnMut(u64) -> Duration) -> u64 {
    let mut trips = 1u64;
    loop {
        let took = run(trips);
        if took >= target || trips >= 1 << 40 {
            // Scale the last measurement to the target rather than doubling past it.
            let scale = target.as_secs_f64() / took.as_secs_f64().max(1e-9);
            return ((trips as f64 * scale).ceil() as u64).max(1);
        }
        trips *= 2;
    }
}

/// Best (shortest) time of `tries` runs of `run(trips)`: the run least disturbed
/// by interrupts and other tenants.
fn best_of(tries: usize, trips: u64, run: impl Fn(u64)) -> Duration {
    (0..tries)
        .map(|_| time(|| run(trips)).0)
        .min()
        .unwrap_or_default()
}

/// Nanoseconds per trip of `run`, with fixed costs (timer reads, the call)
/// cancelled by timing N and 2N trips and taking the difference.
pub fn ns_per_trip(target: Duration, tries: usize, run: impl Fn(u64)) -> f64 {
    let trips = trips_lasting(target, |t| time(|| run(t)).0);
    let single = best_of(tries, trips, &run);
    let double = best_of(tries, 2 * trips, &run);
    let diff = double.as_nanos() as f64 - single.as_nanos() as f64;
    // If noise made the difference meaningless, fall back to the plain ratio.
    if diff <= 0.0 {
        double.as_nanos() as f64 / (2 * trips) as f64
    } else {
        diff / trips as f64
    }
}

/// The core clock in GHz, from a chain of dependent one-cycle adds.
pub fn estimate_core_ghz() -> f64 {
    let ns = ns_per_trip(Duration::from_millis(5), 5, |trips| {
        std::hint::black_box(kernel::add_chain(trips));
    });
    UNROLL as f64 / ns
}

/// A dependent-add chain sized to last about a given time, timed beside
/// measurements so their cycles follow the clock of the moment.
#[derive(Debug, Clone, Copy)]
pub struct AddClock {
    trips: u64,
}

impl AddClock {
    /// Calibrates the chain to last about `target`.
    pub fn lasting(target: Duration) -> AddClock {
        let trips = trips_lasting(target, |t| {
            time(|| std::hint::black_box(kernel::add_chain(t))).0
        });
        AddClock { trips }
    }

    /// Nanoseconds for one run of the chain.
    pub fn time_ns(&self) -> f64 {
        let trips = self.trips;
        time(|| std::hint::black_box(kernel::add_chain(trips)))
            .0
            .as_nanos() as f64
    }

    /// The core clock in GHz that one run taking `ns` nanoseconds implies.
    pub fn ghz(&self, ns: f64) -> f64 {
        (self.trips * UNROLL) as f64 / ns
    }
}

/// The loop's own cost: nanoseconds per trip of the empty loop (seed 001's calibration).
pub fn empty_loop_ns_per_trip() -> f64 {
    ns_per_trip(Duration::from_millis(2), 5, kernel::empty_loop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_lasting_scales_to_the_target() {
        // A fake run that takes 1 µs per trip.
        let trips = trips_lasting(Duration::from_millis(1), Duration::from_micros);
        assert!((1000..=1100).contains(&trips), "{trips}");
    }

    #[test]
    fn core_clock_estimate_is_plausible() {
        // Any real core (or emulator) runs between 10 MHz and 10 GHz.
        let ghz = estimate_core_ghz();
        assert!(ghz > 0.01 && ghz < 10.0, "{ghz}");
    }
}
