//! Timing loads one at a time (`Point::distribution`): the timer's own
//! cost, measured on an L1-resident chain just before each timeline, and a timeline
//! of timer deltas over the point's chain, read by
//! [`crate::analysis::distribution`].
//!
//! Where one load is shorter than the timer's cost or resolution, loads
//! are timed in the smallest power-of-two group that is not, and the
//! result says so (`loads_per_timing`).

use std::time::Duration;

use super::{Engine, Error, Point, Walker, Workload};
use crate::analysis::detect::LoadSpread;
use crate::analysis::distribution::{self, Distribution, Timings};
use crate::chain::Chain;
use crate::kernels::{Kernel, KernelKind};
use crate::platform::PageRequest;
use crate::platform::clock::MIN_L1_CYCLES;

/// The timer's cost and step, measured on an L1-resident chain.
#[derive(Debug, Clone, Copy)]
pub(super) struct TimerCost {
    /// Nanoseconds a tick.
    ns_per_tick: f64,
    /// The cost one timer read adds to a delta, ns.
    overhead_ns: f64,
    /// The smallest step seen between two deltas, ns.
    resolution_ns: f64,
}

impl TimerCost {
    /// `ticks`, each the time of `group` dependent loads, read through this
    /// timer; no load read faster than `floor_ns`.
    fn timeline<'a>(&self, ticks: &'a [u32], group: u32, floor_ns: f64) -> Timings<'a> {
        Timings {
            ticks,
            ns_per_tick: self.ns_per_tick,
            overhead_ns: self.overhead_ns,
            loads_per_timing: group,
            resolution_ns: self.resolution_ns,
            floor_ns,
        }
    }
}

/// Loads per group when measuring the timer's cost (A; the other is 2A).
const COST_GROUP: u32 = 8;

/// Timings per group size and round when measuring the timer's cost.
const COST_TIMINGS: usize = 1 << 15;

/// Rounds of the cost measurement; the fastest median of each size is kept
/// (a disturbance only adds time).
const COST_ROUNDS: usize = 3;

/// A group's time is at least this many timer steps.
const RESOLUTION_STEPS: f64 = 8.0;

/// Largest group of loads between two timer reads.
const MAX_GROUP: u32 = 256;

/// Fewest and most timings in a timeline (the most: 16 MiB of deltas).
const MIN_TIMINGS: usize = 1 << 12;
const MAX_TIMINGS: usize = 1 << 22;

/// Loads walked before the timeline, to bring the chain back in.
const PRE_WALK_TRIPS: u64 = 1000;

/// The smallest power-of-two group of loads of `ns_per_load` whose time is
/// at least the timer's cost and [`RESOLUTION_STEPS`] of its steps.
pub fn group_size(ns_per_load: f64, overhead_ns: f64, resolution_ns: f64) -> u32 {
    let floor = overhead_ns.max(RESOLUTION_STEPS * resolution_ns);
    let mut group = 1;
    while f64::from(group) * ns_per_load < floor && group < MAX_GROUP {
        group *= 2;
    }
    group
}

/// How many timings fill `duration` at `ns_per_timing` each, within bounds.
pub(super) fn timings_for(duration: Duration, ns_per_timing: f64) -> usize {
    let wanted = duration.as_nanos() as f64 / ns_per_timing.max(1.0);
    (wanted as usize).clamp(MIN_TIMINGS, MAX_TIMINGS)
}

fn median(values: &mut [u32]) -> f64 {
    let middle = values.len() / 2;
    f64::from(*values.select_nth_unstable(middle).1)
}

/// The smallest positive difference between two of `values` (1 when none).
fn smallest_step(values: &mut [u32]) -> u32 {
    values.sort_unstable();
    values
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0)
        .min()
        .unwrap_or(1)
}

impl Engine {
    /// The timer's cost per read and its step: groups of A and 2A loads on
    /// a 4 KiB chain, `2 t(A) - t(2A)` of their medians. Measured afresh
    /// for each timeline (about 7 ms): a busy sibling hyperthread makes
    /// a serialising timer read dearer while a chase's load is unchanged,
    /// so a cost from an earlier, quieter moment is subtracted short.
    fn timer_cost(&mut self) -> Result<TimerCost, Error> {
        let ticks_per_ns = crate::arch::timestamp_ticks_per_ns()
            .filter(|t| *t > 0.0)
            .ok_or(Error::NoKernel("timed"))?;
        let kernel = Kernel::Chase(KernelKind::Pointer);
        let chain = Chain::random(4096, 64, 1)?;
        let mut workload = Workload::prepare(4096, PageRequest::Base, None)?;
        workload.link(&chain, kernel)?;
        let mut walker = workload.walker(&chain, kernel);
        walker.walk(PRE_WALK_TRIPS)?;
        let mut ticks = vec![1u32; COST_TIMINGS];
        let (mut a, mut two_a, mut step) = (f64::INFINITY, f64::INFINITY, u32::MAX);
        for _ in 0..COST_ROUNDS {
            walker.walk_timed(COST_GROUP, &mut ticks)?;
            a = a.min(median(&mut ticks));
            step = step.min(smallest_step(&mut ticks));
            walker.walk_timed(2 * COST_GROUP, &mut ticks)?;
            two_a = two_a.min(median(&mut ticks));
        }
        Ok(TimerCost {
            ns_per_tick: 1.0 / ticks_per_ns,
            overhead_ns: ((2.0 * a - two_a) / ticks_per_ns).max(0.0),
            resolution_ns: f64::from(step) / ticks_per_ns,
        })
    }

    /// An L1 hit's least time, ns: [`MIN_L1_CYCLES`] at the core clock
    /// (given, or estimated and not suspect); 0 where the clock is not known.
    fn l1_floor_ns(&self) -> f64 {
        let ghz = match self.timing.given_ghz {
            Some(ghz) => ghz,
            None if self.clock_suspect().is_none() => self.clock_ghz,
            None => return 0.0,
        };
        if ghz.is_finite() && ghz > 0.0 {
            MIN_L1_CYCLES / ghz
        } else {
            0.0
        }
    }

    /// Times the loads of `chain` (linked in `workload` for `kernel`) one by
    /// one, or in small groups, for about `duration`, and reads the timeline.
    pub(super) fn distribution(
        &mut self,
        workload: &Workload,
        chain: &Chain,
        kernel: Kernel,
        ns_per_load: f64,
        duration: Duration,
    ) -> Result<Distribution, Error> {
        let cost = self.timer_cost()?;
        let group = group_size(ns_per_load, cost.overhead_ns, cost.resolution_ns);
        let timings = timings_for(duration, f64::from(group) * ns_per_load + cost.overhead_ns);
        let mut walker: Walker = workload.walker(chain, kernel);
        walker.walk(PRE_WALK_TRIPS.min(chain.len().div_ceil(kernel.loads_per_trip())))?;
        // Written before timing, so no page is faulted in while timing.
        let mut ticks = vec![1u32; timings];
        walker.walk_timed(group, &mut ticks)?;
        dump_for_debugging(&ticks, group, cost);
        let timeline = cost.timeline(&ticks, group, self.l1_floor_ns());
        let timer = crate::arch::TIMESTAMP.unwrap_or("none");
        distribution::analyse(&timeline, timer)
            .ok_or_else(|| Error::Invalid("distribution: no load was timed".into()))
    }
}

/// Timelines of groups at each size of a spread test; the narrowest is kept.
const SPREAD_TIMELINES: usize = 5;

impl Engine {
    /// How single loads spread at each of `sizes` (a random chain of
    /// `template`'s other settings each): [`SPREAD_TIMELINES`] timelines of
    /// [`MIN_TIMINGS`] groups, the narrowest kept, every size in groups of
    /// one size, the smallest the timer resolves at `fastest_ns` a load (so
    /// the timer's share of the spread is the same at every size; see
    /// [`crate::analysis::detect::one_latency`]). Empty where this ISA has no
    /// per-load timer in memlat.
    pub fn load_spreads(
        &mut self,
        template: &Point,
        sizes: &[u64],
        fastest_ns: f64,
    ) -> Result<Vec<LoadSpread>, Error> {
        if crate::kernels::timed_by().is_none() || sizes.is_empty() {
            return Ok(Vec::new());
        }
        let cost = self.timer_cost()?;
        let group = group_size(fastest_ns, cost.overhead_ns, cost.resolution_ns);
        let kernel = Kernel::Chase(KernelKind::Pointer);
        let mut ticks = vec![1u32; MIN_TIMINGS];
        let mut spreads = Vec::new();
        for &size in sizes {
            self.check_stop()?;
            let point = Point {
                size,
                pattern: crate::chain::Pattern::Random,
                ..template.clone()
            };
            let chain = Chain::build(point.pattern, size, point.stride, point.line, point.seed)?;
            let mut workload = self.workload(&point)?;
            workload.link(&chain, kernel)?;
            let mut walker = workload.walker(&chain, kernel);
            super::warmup::warm_up_unless(&mut walker, &|| self.stopped())?;
            let mut narrowest: Option<LoadSpread> = None;
            for _ in 0..SPREAD_TIMELINES {
                self.check_stop()?;
                walker.walk_timed(group, &mut ticks)?;
                let timeline = cost.timeline(&ticks, group, 0.0);
                let ns: Vec<f64> = ticks.iter().map(|&t| timeline.load_ns(t)).collect();
                if let Some(s) = LoadSpread::of(size, group, &ns)
                    && narrowest.is_none_or(|n| s.variance() < n.variance())
                {
                    narrowest = Some(s);
                }
            }
            self.spare = Some(((point.size, point.pages, point.node), workload));
            spreads.extend(narrowest);
        }
        Ok(spreads)
    }
}

/// Debug builds only: writes the raw deltas to $MEMLAT_DEBUG_TIMELINE (new
/// file) for offline analysis, with a line of what turns them into ns.
fn dump_for_debugging(ticks: &[u32], group: u32, cost: TimerCost) {
    #[cfg(debug_assertions)]
    if let Some(path) = std::env::var_os("MEMLAT_DEBUG_TIMELINE") {
        use std::io::Write;
        let bytes: Vec<u8> = ticks.iter().flat_map(|t| t.to_le_bytes()).collect();
        let path = std::path::PathBuf::from(path);
        let written = crate::safe_fs::Dir::parent(&path)
            .and_then(|(dir, name)| dir.create_new(&name, 0o644))
            .and_then(|mut f| f.write_all(&bytes));
        eprintln!(
            "debug: timeline {written:?} to {path:?}: group {group}, ns/tick {}, overhead {} ns",
            cost.ns_per_tick, cost.overhead_ns
        );
    }
    #[cfg(not(debug_assertions))]
    let _ = (ticks, group, cost);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_long_against_the_timer() {
        // DRAM against a 12 ns timer: one load a timing.
        assert_eq!(group_size(180.0, 12.0, 0.4), 1);
        // L1 against it: 16 loads of 1.1 ns reach 12 ns.
        assert_eq!(group_size(1.1, 12.0, 0.4), 16);
        // A coarse timer (40 ns steps) sets the floor: 8 x 40 = 320 ns.
        assert_eq!(group_size(150.0, 5.0, 40.0), 4);
        assert_eq!(group_size(0.001, 1000.0, 1.0), MAX_GROUP);
    }

    #[test]
    fn timelines_are_bounded() {
        assert_eq!(timings_for(Duration::from_millis(400), 200.0), 2_000_000);
        assert_eq!(timings_for(Duration::from_secs(100), 1.0), MAX_TIMINGS);
        assert_eq!(timings_for(Duration::ZERO, 200.0), MIN_TIMINGS);
    }

    #[test]
    fn loads_are_timed_with_the_chain_end_checked_on_this_isa() {
        // Under qemu (CI's aarch64 and riscv64 runs) the figures mean
        // nothing, but the timed loop runs and its end node is checked.
        if crate::kernels::timed_by().is_none() {
            eprintln!("skipped: memlat has no per-load timer for this ISA");
            return;
        }
        let mut engine = Engine::builder().build().unwrap();
        let point = crate::engine::Point {
            distribution: Some(Duration::from_millis(10)),
            repeats: 2,
            sample_time: Duration::from_millis(2),
            ..crate::engine::Point::random(16 << 10)
        };
        let d = engine.measure(&point).unwrap().distribution.unwrap();
        assert!(d.loads_timed >= MIN_TIMINGS as u64);
        assert!(d.percentiles_ns.p50 > 0.0 && d.percentiles_ns.p50 <= d.percentiles_ns.p99);
        assert_eq!(d.timer, crate::kernels::timed_by().unwrap());
    }

    #[test]
    fn the_smallest_step_between_deltas() {
        assert_eq!(smallest_step(&mut [30, 26, 30, 52, 26]), 4);
        assert_eq!(smallest_step(&mut [7, 7]), 1);
    }
}
