//! One sample: how long a kernel takes per load, with every fixed cost
//! cancelled or made negligible, the core clock timed just after its rounds
//! (never before or between them) and the counters read around it.
//! Two strategies:
//!
//! - [`Strategy::Difference`] (every chase): time A loads and 2A loads and
//!   keep the difference, so timer reads, the call and counter start/stop
//!   cancel. [`ROUNDS`] rounds, keeping the fastest A and 2A runs (an
//!   interrupt or another tenant can only add time); while the fastest 2A
//!   run is not 1.9-2.1x the fastest A run every round was disturbed, so
//!   up to [`MAX_ROUNDS`]; if none is clean, the 2A run over 2A loads,
//!   flagged `disturbed`, never a negative latency.
//! - [`Strategy::Fastest`] (load-use curves): `rounds` runs of A loads, the
//!   fastest kept; each lasts a millisecond or more, so fixed costs (~100 ns)
//!   are below 0.01%, and on a shared machine one clean run is likelier than
//!   a clean difference of two.

use std::time::Duration;

use super::workload::Walker;
use super::{CycleSource, Engine, Error, system};
use crate::platform::clock;
use crate::platform::counters::GroupReading;

/// Rounds of A and 2A runs per sample while the fastest of each agree (see
/// [`Engine::time`]). Two: the point's median over its repeats already sets
/// aside a sample that both rounds disturbed. A third round bought nothing
/// measurable: six default sweeps with three and six with two, interleaved
/// on the Zen 4 guest, gave the same curve (medians within the sweeps'
/// own spread at every size) and the same levels, in 7.1-8.0 s of
/// sweeping against 8.7-11.3 s. One round is not enough: five default
/// sweeps with one and five with two, interleaved on the same guest
/// (2026-11-28), took 5.1-6.4 s against 6.4-7.4 s, but the sweeps' medians
/// at each size spread twice as far between sweeps (median spread 8.0%
/// against 3.6%; the 30 KiB random point read 2.6x its own median once).
pub const ROUNDS: u32 = 2;

/// Rounds at most, when the machine is so busy that every round is disturbed.
pub const MAX_ROUNDS: u32 = 10;

/// Clock-chain runs after a [`Strategy::Difference`] sample's rounds, the
/// fastest kept.
const SAMPLE_CLOCK_READS: u32 = 2;

/// The A run's trips are timed over this fraction of the A run (1/8) and
/// scaled up (see [`Engine::calibrate`]).
const CALIBRATION_SHARE: u64 = 8;

/// How a sample is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// A and 2A loads, the difference kept.
    Difference,
    /// `rounds` runs of A loads, the fastest kept.
    Fastest {
        /// Runs timed.
        rounds: u32,
    },
}

/// One sample's figures, per load.
#[derive(Debug, Clone)]
pub struct Timed {
    /// Loop trips in the A run.
    pub trips: u64,
    /// Nanoseconds of the fastest A run (fixed costs included).
    pub ns_a: f64,
    /// Nanoseconds of the fastest 2A run (`Difference` only; else NaN).
    pub ns_2a: f64,
    /// ISA counter ticks of the A run, when one is read.
    pub ticks_a: Option<f64>,
    /// ISA counter ticks of the 2A run.
    pub ticks_2a: Option<f64>,
    /// Rounds timed.
    pub rounds: u32,
    /// No round was undisturbed (`Difference`).
    pub disturbed: bool,
    /// Nanoseconds per load.
    pub ns_per_load: f64,
    /// Cycles per load (counted, or ns x clock).
    pub cycles_per_load: f64,
    /// The core clock timed beside the loads, GHz.
    pub clock_ghz: f64,
    /// Each event of the engine's group per load, scaled for multiplexing.
    pub counts: Vec<Option<f64>>,
    /// The largest multiplexing scale of the readings.
    pub counter_scale: Option<f64>,
    /// Events (by group position) whose count came out impossible: the 2A
    /// run counted less than the A run, or the group never ran. Their count
    /// is `None`, never a number.
    pub impossible: Vec<usize>,
}

/// One timed run.
struct Run {
    ns: f64,
    ticks: Option<f64>,
    reading: Option<GroupReading>,
}

impl Engine {
    /// Times the walker's kernel: calibrates A (loop trips) to `sample_time`
    /// on the first call (kept in `trips` for the next ones), then one sample
    /// by `strategy`.
    pub fn time(
        &self,
        walker: &mut Walker,
        trips: &mut Option<u64>,
        sample_time: Duration,
        strategy: Strategy,
    ) -> Result<Timed, Error> {
        let a = match *trips {
            Some(a) => a,
            None => {
                let a = self.calibrate(walker, sample_time, strategy)?;
                *trips = Some(a);
                a
            }
        };
        let loads = (a * walker.kernel().loads_per_trip()) as f64;
        let (best_a, best_2a, rounds, disturbed) = match strategy {
            Strategy::Difference => {
                let (mut run_a, mut run_2a): (Option<Run>, Option<Run>) = (None, None);
                let mut rounds = 0;
                // ROUNDS rounds, and up to MAX_ROUNDS while the fastest 2A
                // run is not about twice the fastest A run.
                while rounds < ROUNDS || (rounds < MAX_ROUNDS && !plausible(&run_a, &run_2a)) {
                    self.check_stop()?;
                    let (ra, r2a) = (self.timed(walker, a)?, self.timed(walker, 2 * a)?);
                    keep_fastest(&mut run_a, ra);
                    keep_fastest(&mut run_2a, r2a);
                    rounds += 1;
                }
                let disturbed = !plausible(&run_a, &run_2a);
                (run_a.expect("ROUNDS >= 1"), run_2a, rounds, disturbed)
            }
            Strategy::Fastest { rounds } => {
                let mut best = None;
                for _ in 0..rounds.max(1) {
                    self.check_stop()?;
                    keep_fastest(&mut best, self.timed(walker, a)?);
                }
                (best.expect("rounds >= 1"), None, rounds.max(1), false)
            }
        };
        // The clock is timed after the rounds, never before or between them:
        // a gap before a run lets a neighbour evict the chain the warm-up or
        // the last run left, and the A run after it pays the refill, which is
        // not a disturbance of the loads. A sample of A and 2A runs reads it
        // twice (the faster kept: a disturbance only slows a chain).
        let reads = match strategy {
            Strategy::Difference => SAMPLE_CLOCK_READS,
            Strategy::Fastest { .. } => 1,
        };
        let clock_ns = (0..reads)
            .map(|_| self.sample_clock.time_ns())
            .fold(f64::INFINITY, f64::min);
        let clock_ghz = self.sample_clock.ghz(clock_ns);
        // Difference: (2A - A) / A loads; disturbed: 2A / 2A loads (fixed
        // costs stay in, microseconds against milliseconds); Fastest: A / A.
        let per_load = |x2: Option<f64>, x1: f64| match (x2, disturbed) {
            (Some(x2), false) => (x2 - x1) / loads,
            (Some(x2), true) => x2 / (2.0 * loads),
            (None, _) => x1 / loads,
        };
        let ticks = match (best_a.ticks, best_2a.as_ref().map(|r| r.ticks)) {
            (Some(t1), Some(Some(t2))) => Some(per_load(Some(t2), t1)),
            (Some(t1), None) => Some(per_load(None, t1)),
            _ => None,
        };
        let ns_per_load = ticks
            .and_then(|t| self.timing.ns_from_ticks(t))
            .unwrap_or_else(|| per_load(best_2a.as_ref().map(|r| r.ns), best_a.ns));
        let (counts, counter_scale, impossible) = counts(&best_a, best_2a.as_ref(), &per_load);
        let cycles_per_load = match self.cycle_source() {
            CycleSource::Given => ns_per_load * self.timing.given_ghz.unwrap_or(f64::NAN),
            CycleSource::Perf => self
                .cycles_slot
                .and_then(|i| counts.get(i).copied().flatten())
                .unwrap_or(f64::NAN),
            CycleSource::CycleCounter => ticks.unwrap_or(f64::NAN),
            CycleSource::Estimated => ns_per_load * clock_ghz,
        };
        Ok(Timed {
            trips: a,
            ns_a: best_a.ns,
            ns_2a: best_2a.as_ref().map_or(f64::NAN, |r| r.ns),
            ticks_a: best_a.ticks,
            ticks_2a: best_2a.as_ref().and_then(|r| r.ticks),
            rounds,
            disturbed,
            ns_per_load,
            cycles_per_load,
            clock_ghz,
            counts,
            counter_scale,
            impossible,
        })
    }

    /// Loop trips whose A run lasts its share of `sample_time`: a third for
    /// `Difference` (a sample is A + 2A loads), 1/rounds for `Fastest`; at
    /// least a few thousand loads so loop-exit effects are negligible.
    fn calibrate(
        &self,
        walker: &mut Walker,
        sample_time: Duration,
        strategy: Strategy,
    ) -> Result<u64, Error> {
        let target = match strategy {
            Strategy::Difference => sample_time / 3,
            Strategy::Fastest { rounds } => sample_time / rounds.max(1),
        };
        let mut failure = None;
        // Doubling up to the whole target would walk about twice the A run
        // before the sample starts; a run of an eighth of it (200 us by
        // default, thousands of timer steps) scales to the target as well.
        let a = CALIBRATION_SHARE
            * clock::trips_lasting(target / CALIBRATION_SHARE as u32, |t| {
                let (took, result) = clock::time(|| walker.walk(t));
                if let Err(e) = result {
                    failure.get_or_insert(e);
                }
                took
            });
        if let Some(e) = failure {
            return Err(e);
        }
        let min_trips = (10_000 / walker.kernel().loads_per_trip()).max(16);
        Ok(a.max(min_trips))
    }

    /// Times `trips` trips; the counter group runs around (not inside) the
    /// timer, the ISA counter is read just outside it.
    fn timed(&self, walker: &mut Walker, trips: u64) -> Result<Run, Error> {
        if let Some(g) = &self.group {
            g.start().map_err(system("starting counters"))?;
        }
        let before = self.timing.read();
        let (took, result) = clock::time(|| walker.walk(trips));
        let after = self.timing.read();
        let reading = match &self.group {
            Some(g) => Some(g.stop().map_err(system("reading counters"))?),
            None => None,
        };
        result?;
        Ok(Run {
            ns: took.as_nanos() as f64,
            ticks: before.zip(after).map(|(b, a)| a.wrapping_sub(b) as f64),
            reading,
        })
    }
}

fn keep_fastest(best: &mut Option<Run>, run: Run) {
    if best.as_ref().is_none_or(|b| run.ns < b.ns) {
        *best = Some(run);
    }
}

/// Whether the fastest 2A run took about twice the fastest A run, as it must
/// when at least one round of each ran undisturbed. Within 1.9..2.1 the
/// difference (2A - A) and the plain 2A/2 estimates agree within 5%.
fn plausible(run_a: &Option<Run>, run_2a: &Option<Run>) -> bool {
    match (run_a, run_2a) {
        (Some(a), Some(b)) => (1.9..=2.1).contains(&(b.ns / a.ns)),
        _ => false,
    }
}

/// Counts per load in the group's order, the largest multiplexing scale,
/// and the events whose count is impossible (negative, or never running).
fn counts(
    a: &Run,
    a2: Option<&Run>,
    per_load: &dyn Fn(Option<f64>, f64) -> f64,
) -> (Vec<Option<f64>>, Option<f64>, Vec<usize>) {
    let Some(r1) = &a.reading else {
        return (Vec::new(), None, Vec::new());
    };
    let r2 = a2.and_then(|r| r.reading.as_ref());
    let scaled2 = r2.map(GroupReading::scaled);
    let mut impossible = Vec::new();
    let counts = r1
        .scaled()
        .iter()
        .enumerate()
        .map(|(i, x1)| {
            let value = match (x1, &scaled2) {
                (Some(x1), Some(s2)) => s2
                    .get(i)
                    .copied()
                    .flatten()
                    .map(|x2| per_load(Some(x2), *x1)),
                (Some(x1), None) => Some(per_load(None, *x1)),
                (None, _) => None,
            };
            let value = value.filter(|v| v.is_finite() && *v >= 0.0);
            if value.is_none() {
                impossible.push(i);
            }
            value
        })
        .collect();
    let scale = r2.map_or(r1.scale(), |r2| r1.scale().max(r2.scale()));
    (counts, Some(scale), impossible)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(values: Vec<u64>, running: u64) -> Run {
        Run {
            ns: 1.0,
            ticks: None,
            reading: Some(GroupReading {
                time_enabled: running,
                time_running: running,
                values,
            }),
        }
    }

    #[test]
    fn impossible_counts_are_none_never_numbers() {
        let per_load = |x2: Option<f64>, x1: f64| x2.map_or(x1, |x2| x2 - x1) / 10.0;
        // The second event counted less in the 2A run than in the A run.
        let (values, scale, impossible) = counts(
            &run(vec![100, 500], 10),
            Some(&run(vec![300, 200], 10)),
            &per_load,
        );
        assert_eq!(values, vec![Some(20.0), None]);
        assert_eq!(impossible, vec![1]);
        assert_eq!(scale, Some(1.0));
        // A group that never ran.
        let (values, _, impossible) =
            counts(&run(vec![100], 0), Some(&run(vec![300], 10)), &per_load);
        assert_eq!((values, impossible), (vec![None], vec![0]));
    }
}
