//! Latency as a distribution: what timing loads one at a time (or in small
//! groups, where one load is shorter than the timer) shows that a mean
//! hides. From a timeline of timer deltas it reads the percentiles, a
//! histogram in log-spaced bins, the modes (peaks, each with its share of
//! loads), and periodic stalls (a period in the slow loads' timeline, such
//! as DRAM refresh) from their spectrum ([`spectrum`]).
//!
//! Pure: timer deltas in, findings out. The engine times the loads
//! (`Engine::measure` with `Point::distribution`).

mod shape;
pub mod spectrum;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use shape::{Bin, Mode, Percentiles, histogram, modes, percentiles};
pub use spectrum::{PeriodicStalls, Spectrum};

/// Timer deltas of consecutive groups of dependent loads, as the engine
/// recorded them, with what turns them into nanoseconds per load.
#[derive(Debug, Clone, Copy)]
pub struct Timings<'a> {
    /// Timer ticks each group took (timer read to timer read, no gaps).
    pub ticks: &'a [u32],
    /// Nanoseconds a tick.
    pub ns_per_tick: f64,
    /// The timer's own cost in each delta, ns (measured on an L1 chain).
    pub overhead_ns: f64,
    /// Dependent loads between two timer reads.
    pub loads_per_timing: u32,
}

impl Timings<'_> {
    /// Wall time of a delta, ns (the timeline's step: the timer's cost included).
    pub fn elapsed_ns(&self, ticks: u32) -> f64 {
        f64::from(ticks) * self.ns_per_tick
    }

    /// Latency of one load in a delta of `ticks`: the delta less the timer's
    /// cost, over the loads it timed (never below a hundredth of a ns).
    pub fn load_ns(&self, ticks: u32) -> f64 {
        ((self.elapsed_ns(ticks) - self.overhead_ns) / f64::from(self.loads_per_timing)).max(0.01)
    }
}

/// What `--distribution` reports (`Measurement::distribution`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// The timer read between groups: `rdtscp`, `cntvct_el0` or `rdtime`.
    pub timer: String,
    /// The timer's own cost per read, ns, measured on an L1-resident chain
    /// (timed groups of A and 2A loads: 2 x t(A) - t(2A)) and subtracted.
    pub timer_overhead_ns: f64,
    /// The smallest step the timer was seen to take, ns.
    pub timer_resolution_ns: f64,
    /// Dependent loads between two timer reads: 1 where a load is long
    /// against the timer's cost and resolution, else a small group (then
    /// every figure below is a group's mean per load, not one load's).
    pub loads_per_timing: u32,
    /// Loads timed (timings x loads_per_timing).
    pub loads_timed: u64,
    /// Wall time of the timeline, ms.
    pub timeline_ms: f64,
    /// Latency percentiles, ns per load.
    pub percentiles_ns: Percentiles,
    /// Loads by latency, in log-spaced bins (8 a factor of two), from the
    /// first bin holding a load to the last.
    pub histogram: Vec<Bin>,
    /// The peaks of the distribution, fastest first, each with its share.
    pub modes: Vec<Mode>,
    /// A period in the slow loads' timeline, or null where there is none
    /// (or the timeline was too short to tell: see `spectrum`).
    pub periodic_stalls: Option<PeriodicStalls>,
    /// How the slow loads' spectrum was made, and a coarse copy of it for plots.
    pub spectrum: Option<Spectrum>,
}

impl Distribution {
    /// How the loads were timed: alone, or in groups (then every figure is
    /// a group's mean per load).
    pub fn grouping(&self) -> String {
        if self.loads_per_timing == 1 {
            "each load timed alone".to_string()
        } else {
            format!(
                "loads timed in groups of {} (one load is shorter than the timer): figures are a group's mean per load",
                self.loads_per_timing
            )
        }
    }
}

/// Reads a timeline: percentiles, histogram, modes and periodic stalls.
pub fn analyse(timings: &Timings, timer: &str, resolution_ns: f64) -> Option<Distribution> {
    if timings.ticks.is_empty() {
        return None;
    }
    let mut sorted: Vec<u32> = timings.ticks.to_vec();
    sorted.sort_unstable();
    let percentiles = percentiles(&sorted, timings);
    let histogram = histogram(&sorted, timings);
    let modes = modes(&sorted, timings);
    let median_ticks = sorted[sorted.len() / 2];
    drop(sorted);
    let (periodic_stalls, spectrum) =
        spectrum::periodic_stalls(timings, percentiles.p50, median_ticks);
    Some(Distribution {
        timer: timer.to_string(),
        timer_overhead_ns: timings.overhead_ns,
        timer_resolution_ns: resolution_ns,
        loads_per_timing: timings.loads_per_timing,
        loads_timed: timings.ticks.len() as u64 * u64::from(timings.loads_per_timing),
        timeline_ms: timings
            .ticks
            .iter()
            .map(|&t| timings.elapsed_ns(t))
            .sum::<f64>()
            / 1e6,
        percentiles_ns: percentiles,
        histogram,
        modes,
        periodic_stalls,
        spectrum,
    })
}
