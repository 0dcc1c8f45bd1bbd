//! Latency as a distribution: what timing loads one at a time (or in small
//! groups, where one load is shorter than the timer) shows that a mean
//! hides. From a timeline of timer deltas it reads the percentiles, a
//! histogram in log-spaced bins, the modes (peaks, each with its share of
//! loads), and periodic stalls (a period in the slow loads' timeline, such
//! as DRAM refresh) from their spectrum ([`spectrum`]).
//!
//! Pure: timer deltas in, findings out. The engine times the loads
//! (`Engine::measure` with `Point::distribution`).

mod comb;
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
    /// The smallest step the timer takes, ns.
    pub resolution_ns: f64,
    /// No load is read faster than this, ns: an L1 hit's least time, 2
    /// cycles at the core clock (no cache answers a dependent load in
    /// fewer); 0 where the clock is not known.
    pub floor_ns: f64,
}

impl Timings<'_> {
    /// Wall time of a delta, ns (the timeline's step: the timer's cost included).
    pub fn elapsed_ns(&self, ticks: u32) -> f64 {
        f64::from(ticks) * self.ns_per_tick
    }

    /// The timer's step, ns: its resolution, and at least one tick.
    pub fn step_ns(&self) -> f64 {
        self.resolution_ns.max(self.ns_per_tick)
    }

    /// Whether a delta lies within one timer step of the timer's own cost:
    /// the timer cannot tell its loads from none (a guest's TSC that
    /// advances in 10 ns steps reads a 150 ns DRAM load as 0-10 ns now and
    /// then), so it is read as the floor, not as a load faster than an L1 hit.
    pub fn folded(&self, ticks: u32) -> bool {
        self.elapsed_ns(ticks) <= self.overhead_ns + self.resolution_ns
    }

    /// Latency of one load in a delta of `ticks`: the delta less the timer's
    /// cost, over the loads it timed; never below the floor (nor a
    /// hundredth of a ns), and the floor where the delta is [`Self::folded`].
    pub fn load_ns(&self, ticks: u32) -> f64 {
        let floor = self.floor_ns.max(0.01);
        if self.folded(ticks) {
            return floor;
        }
        ((self.elapsed_ns(ticks) - self.overhead_ns) / f64::from(self.loads_per_timing)).max(floor)
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
    /// No load is read faster than this, ns: 2 cycles at the core clock, the
    /// least an L1 hit takes (0 where the clock is not known). No mode or
    /// percentile lies below it.
    #[serde(default)]
    pub floor_ns: f64,
    /// Timings within one timer step of the timer's own cost, read as the
    /// floor: the timer cannot tell their loads from none.
    #[serde(default)]
    pub timings_folded: u64,
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
    /// What was folded into the floor, when anything was.
    pub fn folding(&self) -> Option<String> {
        (self.timings_folded > 0).then(|| {
            format!(
                "{} timing(s) ({:.2}%) within one timer step ({:.2} ns) of the timer's cost were read as the floor ({:.2} ns, an L1 hit's least): the timer cannot tell those loads from none, so they are no loads faster than an L1 hit",
                self.timings_folded,
                100.0 * self.timings_folded as f64 * f64::from(self.loads_per_timing) / self.loads_timed.max(1) as f64,
                self.timer_resolution_ns,
                self.floor_ns
            )
        })
    }

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
pub fn analyse(timings: &Timings, timer: &str) -> Option<Distribution> {
    if timings.ticks.is_empty() {
        return None;
    }
    let mut sorted: Vec<u32> = timings.ticks.to_vec();
    sorted.sort_unstable();
    let percentiles = percentiles(&sorted, timings);
    let histogram = histogram(&sorted, timings);
    // Folded timings carry no latency: they make no mode. Shares stay
    // shares of every timing.
    let unfolded = &sorted[sorted.partition_point(|&t| timings.folded(t))..];
    let kept = unfolded.len() as f64 / sorted.len() as f64;
    let mut modes = modes(unfolded, timings);
    for m in &mut modes {
        m.share *= kept;
    }
    modes.retain(|m| m.share >= shape::MIN_MODE_SHARE);
    let median_ticks = sorted[sorted.len() / 2];
    // The quiet timings' low end for the spectrum's second line: the 1st
    // percentile of those the timer resolved, a least that one misread
    // timing cannot move.
    let low_ns = if unfolded.is_empty() {
        percentiles.p50
    } else {
        shape::percentile(unfolded, timings, 0.01)
    };
    drop(sorted);
    let (periodic_stalls, spectrum) =
        spectrum::periodic_stalls(timings, percentiles.p50, median_ticks, low_ns);
    Some(Distribution {
        timer: timer.to_string(),
        timer_overhead_ns: timings.overhead_ns,
        timer_resolution_ns: timings.resolution_ns,
        floor_ns: timings.floor_ns,
        timings_folded: timings.ticks.iter().filter(|&&t| timings.folded(t)).count() as u64,
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
