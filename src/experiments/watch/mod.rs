//! `memlat watch`: each level's latency and the last cache level's edge
//! over time, at a cost low enough to run beside a workload.
//!
//! Every chain is built, linked and faulted in once, when the [`Watch`]
//! is made, and each probe's walk goes on from where the last interval
//! left it: an interval never times the lines the one before timed, and
//! the timed windows move through each whole cycle. An interval costs only
//! its samples: for a level's middle, two rewrites of its buffer in address
//! order (putting it back, as linking left it, after the other probes
//! evicted it) and a short walk of its chain for the TLB; for memory, a few
//! thousand loads for its page walks; for an edge probe, a walk of its own
//! chain, two whole cycles where the duty budget allows, rewritten first
//! only then (a line put in just before a short walk times it says what a
//! pass can bring in, not what the level keeps for a walk, see [`edge`]);
//! then the fastest of [`SAMPLE_ROUNDS`] timed runs ([`probe::preparation`]).
//! The runs' length is set on the first interval so that all of it fits
//! the duty cycle, then fitted to what each interval spends.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! use std::time::Duration;
//! let engine = memlat::Engine::builder().cpu(0).build()?;
//! let watch = memlat::experiments::watch::Watch::probe(engine, Duration::from_secs(1), None, 0.1)?;
//! for interval in watch.take(10) {
//!     let interval = interval?;
//!     println!("{:.1}s: {:?} ns", interval.t_s, interval.ns);
//! }
//! # Ok(()) }
//! ```

pub mod bounds;
mod budget;
mod cpu;
pub mod edge;
pub mod plan;
pub mod probe;
pub mod record;

use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};

use probe::{Probe, Readings, Role, sample, warm_floor, warm_memory_ns};

pub use edge::{EdgeReading, SettleEdge, Walk, edge_reading};
pub use plan::{DEFAULT_DUTY, EdgePlan, WatchPlan, edge_bytes};
pub use record::{Event, Interval, SeriesSummary, WatchFile, WatchHeader, WatchSummary};

use cpu::{CpuTimes, thread_cpu_seconds};

use crate::chain::{Chain, Pattern};
use crate::engine::{Engine, Point, Workload};
use crate::experiments::plateaus::{self, MeasuredLevels, Plateau};
use crate::experiments::sweep::utc_timestamp;
use crate::kernels::Kernel;

/// Timed runs per sample, the fastest kept: a disturbance (the thread
/// descheduled, another tenant's burst) only slows a run. On this 2-vCPU
/// guest under a load of 13, two runs both disturbed read DRAM at 2-4 us
/// in about one interval of ten; a third run costs about a third more.
pub const SAMPLE_ROUNDS: u32 = 3;

/// Loads walked to warm the memory chain: enough to refill the page-walk
/// caches for its pages, far fewer than its cycle (millions of misses).
pub const MEMORY_WARM_LOADS: u64 = 4096;

/// Rewrites in address order of a level's middle probe's buffer before it
/// is timed: on a victim L3 (AMD Zen) one pass leaves the lines split
/// between L2 and L3 as they were filled, the second settles them as the
/// timed runs find them. A pass streams (the prefetchers follow address
/// order), a millisecond or two for 16 MiB. An edge probe is rewritten
/// once, in each interval whose walk of it is whole cycles (see
/// [`WARM_CYCLES`], [`probe::preparation`]).
pub const WARM_PASSES: u32 = 2;

/// The share of the duty budget an interval may spend on the edge probes'
/// warm walks: each one walks its chain on, up to [`WARM_CYCLES`] whole
/// cycles, before its timed runs, so that every line it times was last
/// used one cycle of its own loads before (the reuse a full-cycle chase
/// sees) rather than an interval ago, after the other probes went through
/// the level. The smallest probes get their cycles first (the lines they
/// time are the ones the level can hold); each load is costed at what the
/// settle pass read of the probe ([`probe::warm_ns_per_load`]), so the
/// share is about what it spends. The timed runs take
/// a quarter of the budget and the other warm walks a few percent, so the
/// whole stays within [`BUDGET_TARGET`].
pub const EDGE_WARM_SHARE: f64 = 0.45;

/// Cycles of its own chain an edge probe walks before its timed runs, at
/// most. One puts every line in, but a last level that inserts a new line
/// at low priority (RRIP-like, adaptive insertion) evicts those first:
/// after one cycle the lines the level's middle probe streamed twice just
/// before (hit, so kept) took the share, and on the Zen 4 guest the
/// intervals' edge read 1.3 MiB where the settle pass (a streaming pass,
/// then a cycle) and full-cycle chases read 2.0-2.5 MiB. In the second
/// cycle the lines that stayed are hit, and kept, as in a chase that
/// walks cycle after cycle. Two narrowed the gap on Zen 4 (1.3-1.5 MiB
/// against the settle's 1.95, docs/watch.md), not on the 16-vCPU Emerald
/// Rapids guest (9.5 MiB walked twice: 100-110 ns; the sweep's 32-35 ns),
/// so such a probe is first rewritten as linking left the sweep's chains.
pub const WARM_CYCLES: u64 = 2;

/// Chain loads walked after the passes, at most: the chain's own order
/// brings back the TLB and page-walk caches' state the timed runs see. A
/// choice of time: 32768 loads touch that many random lines, pages enough
/// for any TLB (a few thousand entries), in about 3 ms at memory's latency.
pub const MAX_WARM_LOADS: u64 = 1 << 15;

/// The most loads an edge probe walks before its timed runs in the settle
/// pass: a whole cycle up to 256 MiB of 64-byte lines (about half a second
/// at memory's latency), past any last level's share; a probe planned
/// from a sweep of a disturbed machine can reach a GiB, whose cycle would
/// take seconds.
pub const SETTLE_WARM_LOADS: u64 = 1 << 22;

/// The share of the duty budget given to the timed runs on the first
/// interval; the rest is left for warm walks and the clock, until the
/// first interval's own cost is known. A choice, replaced by that
/// measured cost from the second interval on.
const TIMED_SHARE: f64 = 0.5;

/// The share of the duty budget an interval aims at: intervals vary by a
/// tenth or two with other tenants, and the budget is a ceiling.
const BUDGET_TARGET: f64 = 0.8;

/// Trips a timed run keeps at least however tight the budget: 10,000
/// loads, the engine's own calibration floor, so a run stays far above the
/// timer's resolution.
const MIN_TRIPS: u64 = 100;

/// The longest timed run, however long the interval: a long `--interval`
/// (1h: 360 s of duty) would otherwise spend its budget in minute-long runs,
/// deaf to Ctrl-C until they end; 20 ms of dependent loads already read a
/// level to a fraction of a percent.
pub const MAX_SAMPLE_TIME: Duration = Duration::from_millis(20);

/// The watch was stopped (`stop_when`) between two samples of an
/// interval: the iterator ends without that interval.
#[derive(Debug, thiserror::Error)]
#[error("the watch was stopped inside an interval")]
pub struct Stopped;

/// Measures a [`WatchPlan`] interval after interval; an iterator of
/// [`Interval`]s that waits for each interval's start.
pub struct Watch {
    engine: Engine,
    plan: WatchPlan,
    header: WatchHeader,
    probes: Vec<Probe>,
    kernel: Kernel,
    started: Option<Instant>,
    next: u64,
    steal: Option<CpuTimes>,
    sample_time: Duration,
    /// Seconds of warm walks the edge probes share now (0 until the
    /// settle pass costs them).
    warm_s: f64,
    /// What a hit of the edge's level and a miss cost when its middle was
    /// served: the settle pass's readings, or the sweep's
    /// ([`edge::trusted_references`], read by [`edge::references`]).
    trusted_references: Option<(f64, f64)>,
    stop: Box<dyn Fn() -> bool>,
}

impl Watch {
    /// Builds every chain of `plan` (random, `template`'s line, pages,
    /// node, kernel and seed) once, on `engine`'s CPU.
    pub fn new(
        engine: Engine,
        plan: WatchPlan,
        plateaus: MeasuredLevels,
        template: &Point,
    ) -> Result<Watch> {
        let kernel = Kernel::Chase(template.kernel);
        let mut notes = Vec::new();
        let mut probes = Vec::new();
        let miss = plan.miss_probe();
        for (k, level) in plan.probes().iter().enumerate() {
            let point = Point {
                size: level.size,
                pattern: Pattern::Random,
                ..template.clone()
            };
            point.validate()?;
            let role = if level.name == "memory" {
                Role::Memory
            } else if miss.as_ref().is_some_and(|(m, _)| m.name == level.name) {
                Role::Miss
            } else if plan
                .edge
                .as_ref()
                .is_some_and(|e| level.name == format!("{} edge", e.level))
            {
                Role::Edge
            } else {
                Role::Level
            };
            let seed = template.seed.wrapping_add(k as u64);
            let chain = match (role, &miss) {
                // A region of the edge probes' footprint at a time.
                (Role::Miss, Some((_, region))) => {
                    Chain::page_random(level.size, template.line, *region, seed)?
                }
                _ => Chain::build(
                    Pattern::Random,
                    level.size,
                    template.line,
                    template.line,
                    seed,
                )?,
            };
            let mut workload = Workload::prepare(level.size, template.pages, template.node)
                .with_context(|| format!("the {} chain", level.name))?;
            workload.link(&chain, kernel)?;
            notes.extend(
                workload
                    .notices
                    .drain(..)
                    .map(|n| format!("{}: {n}", level.name)),
            );
            if level.name == "memory" {
                notes.push(format!(
                    "memory chain backed by {} pages",
                    workload.page_backing.obtained
                ));
            }
            let warm = match role {
                Role::Memory | Role::Miss => MEMORY_WARM_LOADS,
                Role::Level => warm_floor(chain.len()),
                // One whole cycle in the settle pass; planned after it.
                Role::Edge => chain.len().min(SETTLE_WARM_LOADS),
            };
            probes.push(Probe {
                size: level.size,
                role,
                workload,
                chain,
                trips: None,
                planned_trips: None,
                position: 0,
                warm,
                warm_ns_per_load: 0.0,
                settle_ns_per_load: 0.0,
                short_ns_per_load: 0.0,
            });
        }
        let budget = plan.duty * plan.interval_s;
        let per_probe = budget * TIMED_SHARE / (probes.len().max(1) as f64 * 2.0);
        let sample_time =
            Duration::from_secs_f64(per_probe / f64::from(SAMPLE_ROUNDS)).min(MAX_SAMPLE_TIME);
        let header = WatchHeader {
            started: String::new(),
            cpu: engine.cpu(),
            plan: plan.clone(),
            plateaus,
            line: template.line,
            kernel: template.kernel.name().to_string(),
            notes,
            settle_edge: None,
        };
        Ok(Watch {
            steal: CpuTimes::read(engine.cpu()),
            engine,
            plan,
            header,
            probes,
            kernel,
            started: None,
            next: 0,
            sample_time,
            warm_s: 0.0,
            trusted_references: None,
            stop: Box::new(|| false),
        })
    }

    /// A watch of this machine's remembered plateaus (or a probe now),
    /// random chains from [`Point::default`], for `duration` (`None`: until
    /// the caller stops iterating) with at most `duty` of each interval
    /// spent measuring.
    pub fn probe(
        mut engine: Engine,
        interval: Duration,
        duration: Option<Duration>,
        duty: f64,
    ) -> Result<Watch> {
        plan::check(interval, duty).map_err(anyhow::Error::msg)?;
        let template = Point::default();
        let host = crate::platform::host::Host::this();
        let levels = match plateaus::remembered(&host) {
            Some(levels) => levels,
            None => {
                let caches = crate::platform::caches::data_caches(engine.cpu());
                let plan = plateaus::probe_plan(
                    &template,
                    engine.cpu(),
                    &caches,
                    crate::platform::mem_available_bytes(),
                );
                plateaus::probe(&mut engine, &plan)?
            }
        };
        let plan = WatchPlan::new(
            &levels,
            template.line,
            crate::platform::mem_available_bytes(),
            interval,
            duration,
            duty,
        );
        Watch::new(engine, plan, levels, &template)
    }

    /// Ends the iterator once `stop` says so (Ctrl-C): at the next interval,
    /// or at the next sample of the interval in progress, which is dropped.
    pub fn stop_when(mut self, stop: impl Fn() -> bool + 'static) -> Watch {
        self.stop = Box::new(stop);
        self
    }

    /// The header a file of this watch starts with (`started` set once the
    /// first interval has begun).
    pub fn header(&self) -> &WatchHeader {
        &self.header
    }

    /// The plan.
    pub fn plan(&self) -> &WatchPlan {
        &self.plan
    }

    /// How long each timed run lasts at most (the duty's share, at most
    /// [`MAX_SAMPLE_TIME`]).
    pub fn sample_time(&self) -> Duration {
        self.sample_time
    }

    /// Seconds since the first interval began.
    pub fn elapsed_s(&self) -> f64 {
        self.started.map_or(0.0, |s| s.elapsed().as_secs_f64())
    }

    /// Waits for the next interval's start; `false` when the duration is
    /// over or `stop` said so (checked every 50 ms while waiting).
    fn wait(&mut self) -> bool {
        let Some(started) = self.started else {
            return !(self.stop)();
        };
        let at = Duration::from_secs_f64(self.plan.interval_s * self.next as f64);
        if self
            .plan
            .duration_s
            .is_some_and(|d| at.as_secs_f64() >= d - 1e-9)
        {
            return false;
        }
        loop {
            if (self.stop)() {
                return false;
            }
            let now = started.elapsed();
            if now >= at {
                return true;
            }
            std::thread::sleep((at - now).min(Duration::from_millis(50)));
        }
    }

    /// Measures one interval now.
    pub fn measure(&mut self) -> Result<Interval> {
        if self.started.is_none() {
            self.settle()?;
        }
        let started = *self.started.get_or_insert_with(Instant::now);
        if self.header.started.is_empty() {
            self.header.started = utc_timestamp(SystemTime::now());
        }
        let t0 = Instant::now();
        let cpu0 = thread_cpu_seconds();
        let t_s = started.elapsed().as_secs_f64();
        let ns = self.sample_all(false)?;
        let spent = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let edge_warm_cycles: Vec<f64> = self
            .probes
            .iter()
            .filter(|p| p.role == Role::Edge)
            .map(|p| p.warm as f64 / p.chain.len().max(1) as f64)
            .collect();
        let walks = self.edge_walks(false); // before the walks are re-planned
        // The duty cycle is what the watch takes from the CPU, not the
        // time it waited for it while other tasks ran.
        self.fit_budget(cpu.unwrap_or(spent));
        let read = Readings::by_role(&self.probes, &ns);
        let edge = self.edge_of(&read, &walks);
        let now = CpuTimes::read(self.engine.cpu());
        let steal = match (&self.steal, &now) {
            (Some(a), Some(b)) => b.steal_since(a),
            _ => None,
        };
        self.steal = now;
        let interval = Interval {
            index: self.next,
            t_s,
            utc: utc_timestamp(SystemTime::now()),
            ns: read.levels,
            edge_ns: read.edge,
            edge_miss_ns: read.miss,
            edge_bytes: edge.as_ref().and_then(EdgeReading::edge_bytes),
            edge_hit: edge.as_ref().map_or_else(Vec::new, |e| e.hit.clone()),
            edge_served_bytes: edge.as_ref().map(|e| e.served_bytes),
            edge_bracket_bytes: edge.as_ref().map_or([None, None], |e| e.bracket),
            edge_warm_cycles,
            steal,
            spent_ms: spent * 1e3,
            cpu_ms: cpu.map(|c| c * 1e3),
        };
        self.next += 1;
        Ok(interval)
    }

    /// How far each edge probe's warm walk goes ([`Probe::walk`]).
    fn edge_walks(&self, settle: bool) -> Vec<Walk> {
        let edges = self.probes.iter().filter(|p| p.role == Role::Edge);
        edges.map(|p| p.walk(settle)).collect()
    }

    /// The edge from one interval's readings against its level middle and
    /// a miss at the probes' footprint ([`edge::miss_reference`]), or the
    /// trusted pair where the level did not serve its own middle
    /// ([`edge::references`]). A probe whose walk was not whole counts
    /// only where the level served half its loads: its misses may be lines
    /// its walk never brought in ([`Walk`]).
    fn edge_of(&self, read: &Readings, walks: &[Walk]) -> Option<EdgeReading> {
        let e = self.plan.edge.as_ref()?;
        let references = self.references_now(&read.levels)?;
        let miss = read.miss.unwrap_or(f64::NAN);
        edge::interval_edge(&e.sizes, &read.edge, walks, references, miss)
    }

    /// The level's and memory's latencies an interval's edge probes are
    /// read against ([`edge::references`]), from its `level_ns`.
    fn references_now(&self, level_ns: &[f64]) -> Option<(f64, f64)> {
        let now = (level_ns[self.edge_level()?], *level_ns.last()?);
        Some(edge::references(now, self.trusted_references))
    }

    /// The index, in the plan's levels, of the level whose edge is watched.
    fn edge_level(&self) -> Option<usize> {
        let e = self.plan.edge.as_ref()?;
        self.plan.levels.iter().position(|l| l.name == e.level)
    }

    /// The sweep's plateau of the level whose edge is watched.
    fn edge_plateau(&self) -> Option<&Plateau> {
        let e = self.plan.edge.as_ref()?;
        self.header
            .plateaus
            .levels
            .iter()
            .find(|p| p.name == e.level)
    }

    /// One pass over every probe before the first interval: it prepares
    /// each as an interval does ([`probe::preparation`]), walks each edge
    /// probe's whole cycle (at most [`SETTLE_WARM_LOADS`]), sets each
    /// probe's run length, and leaves the caches, TLB and clock as an
    /// interval finds them rather than as building hundreds of MiB of
    /// chains left them: without it the first interval's L3 read 24-45 ns
    /// against 14-15 after, in each of six 40 s watches on the Zen 4 guest.
    /// Its edge is checked against the sweep's pooled bounds, and a note
    /// says when they disagree; then the edge probes' warm walks are fitted.
    fn settle(&mut self) -> Result<()> {
        let walks = self.edge_walks(true);
        let ns = self.sample_all(true)?;
        let read = Readings::by_role(&self.probes, &ns);
        let level_ns = &read.levels;
        // The trusted pair first, so that the settle pass's own edge is read
        // as the intervals' are: against the sweep's pair where its middle
        // was a miss by them (beside a build on both CPUs of the Zen 4 guest
        // it read 120 ns, and against its own pair every probe looked served).
        let settle_memory = level_ns.last().copied().unwrap_or(f64::NAN);
        let settled = self
            .edge_level()
            .map(|level| (level_ns[level], settle_memory));
        let swept = self
            .edge_plateau()
            .zip(self.header.plateaus.memory_ns)
            .map(|(p, memory)| (p.ns, memory));
        self.trusted_references = edge::trusted_references(settled, swept);
        if let Some(plan) = &self.plan.edge {
            let reading = self.edge_of(&read, &walks);
            let bounds = self
                .edge_plateau()
                .and_then(|p| p.capacity_bounds)
                .unwrap_or_default();
            let mut check = edge::settle_check(
                &plan.level,
                reading.as_ref(),
                plan.sizes.first().copied(),
                bounds.at_least_bytes,
                bounds.at_most_bytes,
            );
            check.probe_ns = read.edge.clone();
            check.miss_ns = read.miss;
            check.references_ns = self.references_now(level_ns).map(|(l, m)| [l, m]);
            if check.agrees == Some(false) {
                self.header.notes.push(check.note.clone());
            }
            self.header.settle_edge = Some(check);
        }
        for probe in &mut self.probes {
            probe.planned_trips = probe.trips;
        }
        let memory_ns = warm_memory_ns(settle_memory, self.header.plateaus.memory_ns);
        self.plan_warm(&read.edge, memory_ns);
        Ok(())
    }

    /// Every probe's reading, in the plan's order; `settle`: the pass
    /// before the first interval.
    fn sample_all(&mut self, settle: bool) -> Result<Vec<f64>> {
        self.probes
            .iter_mut()
            .map(|probe| {
                if (self.stop)() {
                    return Err(Stopped.into());
                }
                sample(
                    &self.engine,
                    probe,
                    self.kernel,
                    self.sample_time,
                    self.header.line,
                    settle,
                )
            })
            .collect()
    }

    /// The intervals so far and the time measured, summarised.
    pub fn summarise(
        &self,
        intervals: &[Interval],
        cpu_s: Option<f64>,
        interrupted: bool,
    ) -> WatchSummary {
        record::summarise(
            &self.header,
            intervals,
            self.elapsed_s(),
            cpu_s,
            interrupted,
        )
    }

    /// Gives the engine back.
    pub fn into_engine(self) -> Engine {
        self.engine
    }
}

impl Iterator for Watch {
    type Item = Result<Interval>;

    fn next(&mut self) -> Option<Result<Interval>> {
        if !self.wait() {
            return None;
        }
        match self.measure() {
            Err(e) if e.is::<Stopped>() => None,
            measured => Some(measured),
        }
    }
}
