//! One size a watch measures every interval: its chain, where its walk
//! stands, and how one reading of it is taken.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::edge::Walk;
use super::{MAX_WARM_LOADS, SAMPLE_ROUNDS, WARM_CYCLES, WARM_PASSES};
use crate::chain::Chain;
use crate::engine::{Engine, Strategy, Workload};
use crate::kernels::Kernel;

/// What a probe is for, which sets how it is warmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A level's middle: rewritten, then a short walk.
    Level,
    /// Across the last level's edge: its own walk, rewritten first where
    /// the walk is whole cycles.
    Edge,
    /// Memory: a short walk for the page walks.
    Memory,
    /// A miss at the edge probes' footprint (`WatchPlan::miss_probe`):
    /// warmed as memory is.
    Miss,
}

/// What a probe's lines go through before its warm walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preparation {
    /// Rewrites in address order (`Workload::rewrite`): each line read and
    /// written back, the state linking leaves a sweep's chains in.
    Rewrite {
        /// Passes over the buffer.
        passes: u32,
    },
    /// Nothing: the walk finds the lines where the other probes left them.
    None,
}

/// How a probe of `role` is prepared, `whole`: whether its warm walk is
/// whole cycles (`Probe::walks_whole`). A probe is timed in the state the
/// sweep timed its chain in, just linked, because a level does not keep
/// lines by their addresses alone: on the 16-vCPU Emerald Rapids guest a
/// 9.5 MiB chain read back by two cycles of its own walk read 86-114 ns, and
/// 98-110 after a read pass in address order and a cycle, where the
/// sweep's just-linked chains read 32-35 ns; the L3's middle, streamed by
/// reads, read 37-51 ns there against the sweep's 32-36. A level's middle
/// is rewritten in every interval (the edge probes' rewrites have been
/// through the level since); an edge probe only before whole cycles, never
/// before a short walk: its window would time the lines the pass left last,
/// served whatever the level holds of a cycle (the `>=35.3 MiB` of issue
/// 36).
pub fn preparation(role: Role, whole: bool) -> Preparation {
    match role {
        Role::Level => Preparation::Rewrite {
            passes: WARM_PASSES,
        },
        Role::Edge if whole => Preparation::Rewrite { passes: 1 },
        Role::Edge | Role::Memory | Role::Miss => Preparation::None,
    }
}

/// One size measured every interval, with its chain kept and where its
/// walk stands.
pub(super) struct Probe {
    pub(super) size: u64,
    pub(super) role: Role,
    pub(super) workload: Workload,
    pub(super) chain: Chain,
    pub(super) trips: Option<u64>,
    /// Trips the settle pass calibrated: the most a run grows back to.
    pub(super) planned_trips: Option<u64>,
    /// Loads walked so far, modulo the chain's length: the next interval
    /// goes on from here.
    pub(super) position: u64,
    /// Loads walked before the timed runs (an edge probe's: at most
    /// [`super::WARM_CYCLES`] cycles, planned by [`Watch::plan_warm`]).
    pub(super) warm: u64,
    /// What one load of an edge probe's warm walk is reckoned to cost, ns
    /// (set by [`Watch::plan_warm`]; 0 before it).
    pub(super) warm_ns_per_load: f64,
    /// What the settle pass reckoned one such load to cost, ns
    /// ([`warm_ns_per_load`]; 0 before it): the most `warm_ns_per_load`
    /// is ever reckoned at ([`next_warm_ns_per_load`]).
    pub(super) settle_ns_per_load: f64,
    /// What one load of its last warm walk short of whole cycles took, ns
    /// (0 before one): such a walk is not rewritten first and brings back
    /// only part of the chain, so it costs what the level holds of it
    /// (see [`WarmCost`]).
    pub(super) short_ns_per_load: f64,
}

impl Probe {
    /// Whether an edge probe's warm walk covers [`super::WARM_CYCLES`]
    /// whole cycles of its chain: only then does a reading that misses
    /// the level say the level cannot hold it (a shorter walk leaves lines
    /// it never brought in, which miss whatever the level holds).
    /// In the `settle` pass one whole cycle is asked for (a probe past
    /// [`super::SETTLE_WARM_LOADS`] walks less).
    pub(super) fn walks_whole(&self, settle: bool) -> bool {
        self.walk(settle) == Walk::Whole
    }

    /// How far its warm walk goes ([`Walk`]): whole at
    /// [`super::WARM_CYCLES`] cycles, or one in the `settle` pass.
    pub(super) fn walk(&self, settle: bool) -> Walk {
        let cycles = if settle { 1 } else { WARM_CYCLES };
        Walk::of(self.warm, self.chain.len(), cycles)
    }
}

/// One pass's readings by the probes' roles.
#[derive(Debug, Default)]
pub(super) struct Readings {
    /// Each level's middle, then memory: an interval's `ns`.
    pub(super) levels: Vec<f64>,
    /// The edge probes', ascending.
    pub(super) edge: Vec<f64>,
    /// The miss probe's (`WatchPlan::miss_probe`), where there is one.
    pub(super) miss: Option<f64>,
}

impl Readings {
    /// `ns`, one reading per probe of `probes` in their order, split by
    /// role: the levels' (memory last), the edge probes' and the miss
    /// probe's.
    pub(super) fn by_role(probes: &[Probe], ns: &[f64]) -> Readings {
        let mut split = Readings::default();
        let mut memory = f64::NAN;
        for (probe, &n) in probes.iter().zip(ns) {
            match probe.role {
                Role::Level => split.levels.push(n),
                Role::Edge => split.edge.push(n),
                Role::Miss => split.miss = Some(n),
                Role::Memory => memory = n,
            }
        }
        split.levels.push(memory);
        split
    }
}

/// The shortest warm walk of a chain of `cycle` loads: [`MAX_WARM_LOADS`]
/// (what brings back the TLB's state), or the whole cycle if shorter.
pub(super) fn warm_floor(cycle: u64) -> u64 {
    cycle.min(MAX_WARM_LOADS)
}

/// What an edge probe's warm walk is reckoned to cost, by how far it goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmCost {
    /// Loads in one cycle of its chain.
    pub cycle: u64,
    /// ns a load of its [`WARM_CYCLES`] whole cycles costs (rewritten
    /// first, they find what the level holds of the probe put back:
    /// [`warm_ns_per_load`], [`next_warm_ns_per_load`]); 0 or NaN while
    /// unknown.
    pub whole_ns: f64,
    /// ns a load of a shorter walk costs: what the last one took (0 before
    /// one, then taken as `whole_ns`). Not rewritten, such a walk misses
    /// wherever the level let the probe go: on the Zen 5 guest, after a
    /// streaming neighbour, a 20.4 MiB probe walked 0.65-1.05 cycles read
    /// 104-120 ns a load, where the settle pass (the host then leaving the
    /// guest its whole L3) had read 17; reckoned at 17, its walks took 33
    /// ms of an interval's 80 while they were costed at 5, every interval
    /// spent its aim, and the warm walks never grew back to whole cycles
    /// for the eight intervals the watch had left.
    pub short_ns: f64,
}

/// Warm walks that fit `seconds` for edge probes, smallest first:
/// [`WARM_CYCLES`] whole cycles each while the time lasts (at their
/// `whole_ns`), then what is left, at their `short_ns`, each at least
/// [`MAX_WARM_LOADS`] or one cycle. (A walk short of a cycle only its
/// floor, since its timed window meets lines the walk never reached, was
/// tried on the Zen 5 guest: the intervals a probe walked only its floor
/// cost so little that the next gave it whole cycles, which missed, and
/// 13 of 40 intervals spent over the duty budget, up to 146 ms of 100,
/// against 1-3 with the rest of the time walked.) The smallest probe's whole cycles are
/// kept wherever they fit `planned` (the share the settle pass planned,
/// which `seconds` shrinks from after a burst): without them no interval
/// reads an edge at all, not even "below the smallest probe", and a level
/// that misses it costs a miss a load (the Zen 5 guest's 9.5 MiB probe, 127
/// ns a load, 39 ms of the planned 45). `None` for a probe whose cost is
/// not known yet (its walk stays as it is).
pub fn warm_shares(walks: &[WarmCost], seconds: f64, planned: f64) -> Vec<Option<u64>> {
    let mut left = seconds;
    walks
        .iter()
        .enumerate()
        .map(|(k, walk)| {
            let per_load = walk.whole_ns * 1e-9;
            if per_load.is_nan() || per_load <= 0.0 {
                return None;
            }
            let per_short = if walk.short_ns > 0.0 {
                walk.short_ns * 1e-9
            } else {
                per_load
            };
            let whole = walk.cycle.saturating_mul(WARM_CYCLES);
            let whole_s = whole as f64 * per_load;
            let time = match k {
                0 => left.max(whole_s.min(planned)),
                _ => left,
            };
            let (warm, spent) = if whole_s <= time {
                (whole, whole_s)
            } else {
                // Short of whole, at what a short walk costs: never a whole
                // walk at that price (a whole one is rewritten first).
                let short = ((time.max(0.0) / per_short) as u64)
                    .min(whole.saturating_sub(1))
                    .max(warm_floor(walk.cycle));
                (short, short as f64 * per_short)
            };
            left -= spent;
            Some(warm)
        })
        .collect()
}

/// The memory latency the warm walks are costed at: the lower of the
/// settle pass's reading and the sweep's memory plateau (`swept`), either
/// where the other is missing. A
/// settle pass can read memory far slower than it stays: on the Zen 4
/// guest 1.2 us for a watch's first seconds, while its memory chain's huge
/// pages were still being assembled, which starved every warm walk after.
pub(super) fn warm_memory_ns(settle_ns: f64, swept: Option<f64>) -> f64 {
    match swept.filter(|s| *s > 0.0) {
        Some(swept) if settle_ns.is_finite() => settle_ns.min(swept),
        Some(swept) => swept,
        None => settle_ns,
    }
}

/// What one load of an edge probe's warm walk is reckoned to cost, ns:
/// what the settle pass read of it (`settle_ns`, rewritten and walked a
/// whole cycle, as an interval walks it whole), at most `memory_ns`, or
/// `memory_ns` where it read nothing. Its whole cycles cost no more than
/// that: the rewrite before them puts back what the level can hold of the
/// probe, so even the first cycle finds it in (on the Zen 4 guest a
/// rewritten 4-8 MiB cycle read 15-18 ns from its first cycle,
/// `bench/independent/written_or_read.c`). Reckoned at the mean of that and
/// memory's latency, as before the rewrite, a 2026-11-28 watch there spent
/// a median 60 ms of its 80 ms aim an interval while its 10.4 MiB probe,
/// which chases read at 18-32 ns, was walked 0.7-1.3 cycles, and 38 of 40
/// intervals read only a lower bound.
pub fn warm_ns_per_load(settle_ns: f64, memory_ns: f64) -> f64 {
    if settle_ns.is_finite() && settle_ns > 0.0 {
        settle_ns.min(memory_ns)
    } else {
        memory_ns
    }
}

/// What an edge probe's next warm walk is reckoned to cost a load, ns:
/// the lower of `settled` (the settle pass's reckoning,
/// [`warm_ns_per_load`]) and what its last warm walk of `loads` took in
/// `elapsed`. A settle reading is one moment of a moving share: on the Zen 5
/// guest a 9.5 MiB probe read 68-122 ns there and 13-15 ns walked whole in
/// the intervals after, and costed at the former its two cycles took 30 ms
/// of the 45 the warm walks share, leaving the next probe (14.7 MiB)
/// 0.2-0.7 of a cycle, so it never read. Never above the settle reckoning:
/// a walk cut short of its cycles, or one beside a streaming neighbour,
/// costs a miss a load, and costed at that a probe stayed short for
/// seconds after the neighbour left (the share came back, its walk did
/// not), where the settle pass's cost gave it its cycles back at once. A
/// walk that costs more than reckoned is an interval over budget, which
/// [`Watch::fit_budget`](super::Watch) cuts back.
pub fn next_warm_ns_per_load(settled: f64, elapsed: Duration, loads: u64) -> f64 {
    let walked = elapsed.as_secs_f64() * 1e9 / loads.max(1) as f64;
    walked.min(settled)
}

/// One size's reading, its walk going on from where the last one stopped:
/// its [`preparation`], the warm walk its role asks for (a short walk for a
/// level's middle and for memory; its own walk for an edge probe, whole
/// cycles in the `settle` pass), then the fastest of the timed runs.
pub(super) fn sample(
    engine: &Engine,
    probe: &mut Probe,
    kernel: Kernel,
    sample_time: Duration,
    line: u64,
    settle: bool,
) -> Result<f64> {
    if let Preparation::Rewrite { passes } = preparation(probe.role, probe.walks_whole(settle)) {
        for _ in 0..passes {
            probe.workload.rewrite(probe.size, line);
        }
    }
    let mut walker = probe
        .workload
        .walker_at(&probe.chain, kernel, probe.position);
    let per_trip = kernel.loads_per_trip();
    let trips = probe.warm.div_ceil(per_trip).max(1);
    let walk_started = Instant::now();
    walker.walk(trips)?;
    if probe.role == Role::Edge && !settle && probe.settle_ns_per_load > 0.0 {
        // Any walk that took less than the settle reckoning lowers what
        // whole cycles are reckoned at (the level holds more of the probe
        // now: a floor walk that hits says so as well as a whole one); a
        // short walk also sets what short walks cost, above it or not.
        let (elapsed, loads) = (walk_started.elapsed(), trips * per_trip);
        probe.warm_ns_per_load = next_warm_ns_per_load(probe.settle_ns_per_load, elapsed, loads);
        if !probe.walks_whole(settle) {
            probe.short_ns_per_load = elapsed.as_secs_f64() * 1e9 / loads.max(1) as f64;
        }
    }
    let timed = engine
        .time(
            &mut walker,
            &mut probe.trips,
            sample_time,
            Strategy::Fastest {
                rounds: SAMPLE_ROUNDS,
            },
        )
        .with_context(|| format!("sampling {} bytes", probe.size))?;
    probe.position = walker.position();
    Ok(timed.ns_per_load)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_walks_go_to_the_smallest_probes_whole_cycles_first() {
        // Four probes of 40k, 80k, 160k and 320k lines at 100 ns a warm
        // load; 30 ms: the first two get their two cycles (24 ms), the
        // third the 6 ms left (60k loads), the fourth its floor.
        let walks = [40_000, 80_000, 160_000, 320_000].map(|cycle| at(cycle, 100.0));
        let shares = warm_shares(&walks, 0.030, 0.030);
        assert_eq!(shares[..2], [Some(80_000), Some(160_000)]);
        assert!(
            shares[2].is_some_and(|w| w.abs_diff(60_000) <= 1),
            "{shares:?}"
        );
        assert_eq!(shares[3], Some(MAX_WARM_LOADS));
        // Cut alike, as the budget used to cut them, every probe would have
        // fallen short of a cycle; shared again, the smallest stays whole.
        let shares = warm_shares(&walks, 0.010, 0.030);
        assert_eq!(shares[0], Some(80_000));
        // Even cut below its two cycles (6 ms of 8), while they fit the plan;
        // the next probe then walks its floor.
        let shares = warm_shares(&walks, 0.006, 0.030);
        assert_eq!(shares[..2], [Some(80_000), Some(MAX_WARM_LOADS)]);
        // Past the plan, it walks what the plan allows.
        let shares = warm_shares(&walks, 0.006, 0.007);
        assert!(
            shares[0].is_some_and(|w| w.abs_diff(70_000) <= 1),
            "{shares:?}"
        );
        // A probe whose cost is not known yet keeps its walk.
        assert_eq!(warm_shares(&[at(1000, 0.0)], 1.0, 1.0), [None]);
    }

    /// A probe of `cycle` loads whose every warm load costs `ns`.
    fn at(cycle: u64, ns: f64) -> WarmCost {
        WarmCost {
            cycle,
            whole_ns: ns,
            short_ns: 0.0,
        }
    }

    #[test]
    fn a_walk_short_of_whole_cycles_is_costed_at_what_the_last_one_took() {
        // 6.8, 11.8 and 20.4 MiB probes; the largest reckoned at 17 ns a
        // load walked whole (the settle pass), 115 walked short. 13 ms:
        // the first two whole (8.29 ms), and of the 4.71 left the third
        // walks 41k loads at 115 ns (not 277k reckoned at 17, which would
        // take 32 ms).
        let mut walks = [at(111_000, 13.0), at(193_000, 14.0), at(334_000, 17.0)];
        walks[2].short_ns = 115.0;
        let shares = warm_shares(&walks, 0.013, 0.045);
        assert_eq!(shares[..2], [Some(222_000), Some(386_000)]);
        let left = 0.013 - 222_000.0 * 13e-9 - 386_000.0 * 14e-9;
        let expected = (left / 115e-9) as u64;
        assert!(
            shares[2].is_some_and(|w| w.abs_diff(expected) <= 1),
            "{shares:?}"
        );
        // Given the time for its whole cycles at their own cost: whole.
        let shares = warm_shares(&walks, 0.020, 0.045);
        assert_eq!(shares[2], Some(668_000));
        // A short walk that reaches a cycle, at its own cost: 100k loads a
        // cycle, whole reckoned at 130 ns (26 ms), short at 20; 10 ms buys
        // the most short of whole, never a whole walk at the short price.
        let walk = WarmCost {
            cycle: 100_000,
            whole_ns: 130.0,
            short_ns: 20.0,
        };
        assert_eq!(warm_shares(&[walk], 0.010, 0.010), [Some(199_999)]);
        let shares = warm_shares(&[walk], 0.003, 0.003);
        assert!(
            shares[0].is_some_and(|w| w.abs_diff(150_000) <= 1),
            "{shares:?}"
        );
    }

    #[test]
    fn a_probe_walked_faster_than_its_settle_reading_leaves_its_time_to_the_next() {
        // 9.5 and 14.7 MiB probes (155k and 241k loads), 45 ms of warm
        // walks. Costed at the settle pass's 90 and 130 ns, the second gets
        // half a cycle; once the first is costed at the 13 ns its whole walk
        // took, the second gets more than a whole cycle. Beside a neighbour
        // the first's walk took 127 ns a load: it stays at 90.
        let settle = warm_shares(&[at(155_000, 90.0), at(241_000, 130.0)], 0.045, 0.045);
        assert!(settle[1].unwrap() < 241_000, "{settle:?}");
        let took = next_warm_ns_per_load(90.0, Duration::from_micros(4030), 310_000);
        assert!((took - 13.0).abs() < 0.01, "{took}");
        // A walk that missed is never reckoned above the settle reading.
        let missed = next_warm_ns_per_load(90.0, Duration::from_micros(39_370), 310_000);
        assert_eq!(missed, 90.0);
        let walked = warm_shares(&[at(155_000, took), at(241_000, 130.0)], 0.045, 0.045);
        assert_eq!(walked[0], Some(310_000));
        assert!(walked[1].unwrap() > 241_000, "{walked:?}");
    }

    #[test]
    fn a_warm_load_is_costed_at_the_probes_own_settle_reading() {
        assert_eq!(warm_ns_per_load(18.0, 170.0), 18.0);
        // Slower than memory (a burst in the settle pass): memory's.
        assert_eq!(warm_ns_per_load(400.0, 170.0), 170.0);
        assert_eq!(warm_ns_per_load(f64::NAN, 170.0), 170.0);
        assert_eq!(warm_ns_per_load(0.0, 170.0), 170.0);
    }

    #[test]
    fn warm_walks_are_costed_at_the_lower_memory_latency() {
        assert_eq!(warm_memory_ns(1190.0, Some(155.0)), 155.0);
        assert_eq!(warm_memory_ns(140.0, Some(155.0)), 140.0);
        assert_eq!(warm_memory_ns(140.0, None), 140.0);
        assert_eq!(warm_memory_ns(f64::NAN, Some(155.0)), 155.0);
        assert!(warm_memory_ns(f64::NAN, None).is_nan());
    }
}
