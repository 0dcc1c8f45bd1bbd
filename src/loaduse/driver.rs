//! Timing the load-use kernels: one working set (a buffer and its chain),
//! every N of the range, several passes.
//!
//! Each point is a few short runs of A loop trips, A calibrated so a run lasts
//! `sample_time / ROUNDS`; the fastest run is kept, since an interrupt or
//! another tenant can only add time. A run lasts a millisecond or more, so its
//! fixed costs (two clock reads and a call, ~100 ns) are below 0.01 % and the
//! run's time per iteration is used as it is: on a shared machine a difference
//! of two disturbed runs (the runner's A/2A method, made for short runs) can be
//! far off, even negative, where the fastest of several short runs is not. The
//! kernel's final node is checked against the chain after every run. Each pass
//! over the range gets a fresh random chain and visits N in a fresh random
//! order, so a slow spell of the machine lands on scattered N instead of
//! bending a stretch of the curve; per N the fastest pass is kept.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::kernels::{self, Shape};
use crate::chain::{Chain, ChainError, Pattern, SplitMix64};
use crate::platform::clock::{self, SampleClock};
use crate::platform::counters::{CounterGroup, parse_event};
use crate::platform::{self, Buffer, PageBacking, PageRequest};
use crate::runner::{
    CLOCK_DRIFT_WARN, CycleSource, Engine, MeasureError, ensure_memory, memory_needed, system,
};
use crate::units::HumanBytes;

/// Timed runs per point and pass; the fastest is kept.
pub const ROUNDS: u32 = 5;

/// N at which the rolled kernel is timed beside the unrolled one (the first
/// ones of the range); the loop overhead is the median of their differences.
pub const ROLLED_POINTS: usize = 4;

/// How long each add-chain timing beside a point lasts (estimated cycles).
const ADD_TIME: Duration = Duration::from_millis(1);

/// What to run at every working set.
#[derive(Debug, Clone)]
pub struct Settings {
    /// NOP counts, in order.
    pub nops: Vec<u32>,
    /// Chain pattern.
    pub pattern: Pattern,
    /// Node spacing in bytes (also the stride of a stride chain).
    pub line: u64,
    /// Page size to ask for.
    pub pages: PageRequest,
    /// NUMA node to bind the buffers to.
    pub node: Option<usize>,
    /// Passes over the NOP range.
    pub passes: u32,
    /// Seed of the first pass's chain; pass p uses seed + p.
    pub seed: u64,
    /// How long the runs of one point in one pass should last together.
    pub sample_time: Duration,
}

/// One pass's figures at one N.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PassSample {
    /// Pass number, from 0.
    pub pass: u32,
    /// Nanoseconds per iteration (load, NOPs, add).
    pub ns_per_iteration: f64,
    /// Cycles per iteration (counted, or ns x clock).
    pub cycles_per_iteration: f64,
    /// Whether the cycles were counted (perf, a cycle counter) rather than ns x clock.
    pub counted: bool,
    /// Core clock from dependent adds timed beside this point (or --ghz), GHz.
    pub clock_ghz: f64,
    /// Loop trips in each timed run.
    pub trips: u64,
}

/// Every pass at one N.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointRun {
    /// NOPs between the load and the add.
    pub nops: u32,
    /// Unrolled (the curve) or rolled (for the loop overhead).
    pub shape: Shape,
    /// One entry per pass.
    pub passes: Vec<PassSample>,
}

impl PointRun {
    /// The fastest pass's nanoseconds per iteration.
    pub fn ns(&self) -> f64 {
        self.passes
            .iter()
            .map(|p| p.ns_per_iteration)
            .fold(f64::INFINITY, f64::min)
    }

    /// The slowest pass's nanoseconds per iteration.
    pub fn ns_max(&self) -> f64 {
        self.passes
            .iter()
            .map(|p| p.ns_per_iteration)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn counted(&self) -> bool {
        !self.passes.is_empty() && self.passes.iter().all(|p| p.counted)
    }

    /// The core clock of the least disturbed add timing (a disturbance only
    /// slows the adds, so the highest estimate is the truest).
    pub fn clock_ghz(&self) -> f64 {
        self.passes
            .iter()
            .map(|p| p.clock_ghz)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Cycles per iteration: the fewest counted, or the fastest pass's ns
    /// times [`PointRun::clock_ghz`] (so one disturbed clock timing cannot
    /// make an iteration look shorter than it is).
    pub fn cycles(&self) -> f64 {
        if self.counted() {
            self.passes
                .iter()
                .map(|p| p.cycles_per_iteration)
                .fold(f64::INFINITY, f64::min)
        } else {
            self.ns() * self.clock_ghz()
        }
    }

    /// Cycles per iteration of the slowest pass, counted alike.
    pub fn cycles_max(&self) -> f64 {
        if self.counted() {
            self.passes
                .iter()
                .map(|p| p.cycles_per_iteration)
                .fold(f64::NEG_INFINITY, f64::max)
        } else {
            self.ns_max() * self.clock_ghz()
        }
    }
}

/// Everything timed at one working set.
#[derive(Debug, Clone)]
pub struct LevelRun {
    /// Buffer size in bytes.
    pub size: u64,
    /// Nodes in the chain.
    pub chain_nodes: u64,
    /// The curve, one entry per N.
    pub points: Vec<PointRun>,
    /// The rolled kernel at the first few N, when asked for.
    pub rolled: Vec<PointRun>,
    /// Page backing obtained.
    pub page_backing: PageBacking,
    /// Dependent-add clock estimate before the level, GHz.
    pub clock_ghz_before: f64,
    /// Dependent-add clock estimate after the level, GHz.
    pub clock_ghz_after: f64,
    /// Things the reader should know.
    pub warnings: Vec<String>,
}

/// Times kernels on the engine's pinned CPU with the engine's clock.
pub struct Driver<'e> {
    engine: &'e Engine,
    /// perf's cycles, opened for this driver when the engine counts with perf.
    perf: Option<CounterGroup>,
    add_clock: SampleClock,
}

impl<'e> Driver<'e> {
    /// A driver timing with `engine`'s clock (its CPU is already pinned).
    pub fn new(engine: &'e Engine) -> Driver<'e> {
        let perf = match engine.cycle_source() {
            CycleSource::Perf => {
                CounterGroup::open(&[parse_event("cycles").expect("cycles is a known event")]).0
            }
            _ => None,
        };
        Driver {
            engine,
            perf,
            add_clock: SampleClock::lasting(ADD_TIME, engine.clock_estimate()),
        }
    }

    /// The core clock now, GHz: the fastest of three runs of the sample clock.
    fn read_clock(&self) -> f64 {
        let ns = (0..3)
            .map(|_| self.add_clock.time_ns())
            .fold(f64::INFINITY, f64::min);
        self.add_clock.ghz(ns)
    }

    /// Where cycles come from.
    pub fn cycle_source(&self) -> CycleSource {
        match (self.engine.cycle_source(), &self.perf) {
            // perf worked for the engine but not a second time: estimate.
            (CycleSource::Perf, None) => CycleSource::Estimated,
            (source, _) => source,
        }
    }

    /// Times every N at a working set of `size` bytes; with `rolled`, also the
    /// rolled kernel at the first [`ROLLED_POINTS`] N (for the loop overhead).
    /// `progress` hears about each pass.
    pub fn level(
        &self,
        size: u64,
        settings: &Settings,
        rolled: bool,
        mut progress: impl FnMut(u32),
    ) -> Result<LevelRun, MeasureError> {
        ensure_memory(size, memory_needed(size, settings.pattern, settings.line))?;
        // Stride chains step one node (`line` bytes) at a time.
        let chain_for = |pass: u32| -> Result<Chain, ChainError> {
            let seed = settings.seed.wrapping_add(pass as u64);
            Chain::build(settings.pattern, size, settings.line, settings.line, seed)
        };
        let mut chain = chain_for(0)?;
        let mut buffer = Buffer::map(size as usize, settings.pages)
            .map_err(system(format!("mapping {} (--level)", HumanBytes(size))))?;
        let mut warnings = std::mem::take(&mut buffer.notices);
        if let Some(node) = settings.node {
            platform::bind_to_node(&buffer, node).map_err(system(format!(
                "binding memory to NUMA node {node} (--node)"
            )))?;
        }
        buffer.fill();
        let page_backing = buffer.backing();
        let clock_ghz_before = self.read_clock();
        let mut points: Vec<PointRun> = settings
            .nops
            .iter()
            .map(|&nops| PointRun {
                nops,
                shape: Shape::Unrolled,
                passes: Vec::new(),
            })
            .collect();
        let first = settings.nops.first().copied().unwrap_or(0);
        let rolled_count = if rolled { ROLLED_POINTS } else { 0 };
        let mut rolled_runs: Vec<PointRun> = settings
            .nops
            .iter()
            .take(rolled_count)
            .map(|&nops| PointRun {
                nops,
                shape: Shape::Rolled,
                passes: Vec::new(),
            })
            .collect();
        for pass in 0..settings.passes {
            progress(pass);
            if pass > 0 && settings.pattern != Pattern::Stride {
                chain = chain_for(pass)?;
            }
            kernels::link_deltas(&chain, buffer.words_mut());
            let mut walker = Walker {
                base: buffer.as_ptr(),
                chain: &chain,
                loads: 0,
                offset: 0,
            };
            // Warm-up: one full cycle warms caches and TLB and proves the chain.
            walker.walk(
                Shape::Unrolled,
                first,
                chain.len().div_ceil(kernels::UNROLL),
            )?;
            // A fresh random order of N each pass: a slow spell of the machine
            // (a busy SMT sibling, another tenant) lands on scattered N in each
            // pass, so the fastest pass of every N is likely an undisturbed one.
            let mut order: Vec<(Shape, usize)> = (0..points.len())
                .map(|i| (Shape::Unrolled, i))
                .chain((0..rolled_runs.len()).map(|i| (Shape::Rolled, i)))
                .collect();
            SplitMix64::new(settings.seed.wrapping_add(pass as u64)).shuffle(&mut order);
            for (shape, i) in order {
                let run = match shape {
                    Shape::Unrolled => &mut points[i],
                    Shape::Rolled => &mut rolled_runs[i],
                };
                let sample = self.point(&mut walker, shape, run.nops, pass, settings)?;
                run.passes.push(sample);
            }
        }
        let clock_ghz_after = self.read_clock();
        let drift = (clock_ghz_after - clock_ghz_before).abs() / clock_ghz_before;
        if drift > CLOCK_DRIFT_WARN && self.cycle_source() != CycleSource::Given {
            warnings.push(format!(
                "the core clock estimate moved {:.1}% during this level ({clock_ghz_before:.3} -> {clock_ghz_after:.3} GHz): frequency scaling or another tenant",
                drift * 100.0
            ));
        }
        Ok(LevelRun {
            size,
            chain_nodes: chain.len(),
            points,
            rolled: rolled_runs,
            page_backing,
            clock_ghz_before,
            clock_ghz_after,
            warnings,
        })
    }

    /// One N, one pass: calibrate A, time `ROUNDS` runs of A trips, keep the fastest.
    fn point(
        &self,
        walker: &mut Walker,
        shape: Shape,
        nops: u32,
        pass: u32,
        settings: &Settings,
    ) -> Result<PassSample, MeasureError> {
        let mut failure = None;
        let a = clock::trips_lasting(settings.sample_time / ROUNDS, |t| {
            let (took, result) = clock::time(|| walker.walk(shape, nops, t));
            if let Err(e) = result {
                failure = Some(e);
            }
            took
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let a = a.max(16);
        let mut add_ns = self.add_clock.time_ns();
        let mut best = (f64::INFINITY, None);
        for _ in 0..ROUNDS {
            let timed = self.timed(walker, shape, nops, a)?;
            if timed.0 < best.0 {
                best = timed;
            }
        }
        add_ns = add_ns.min(self.add_clock.time_ns());
        let iterations = (a * shape.iterations_per_trip()) as f64;
        let ns_per_iteration = best.0 / iterations;
        let clock_ghz = match self.cycle_source() {
            CycleSource::Given => self.engine.timing().given_ghz.unwrap_or(f64::NAN),
            _ => self.add_clock.ghz(add_ns),
        };
        let (cycles_per_iteration, counted) = match (self.cycle_source(), best.1) {
            (CycleSource::Perf | CycleSource::CycleCounter, Some(cycles)) => {
                (cycles / iterations, true)
            }
            _ => (ns_per_iteration * clock_ghz, false),
        };
        Ok(PassSample {
            pass,
            ns_per_iteration,
            cycles_per_iteration,
            counted,
            clock_ghz,
            trips: a,
        })
    }

    /// Nanoseconds (and counted cycles, where a counter counts them) of `trips` trips.
    fn timed(
        &self,
        walker: &mut Walker,
        shape: Shape,
        nops: u32,
        trips: u64,
    ) -> Result<(f64, Option<f64>), MeasureError> {
        let timing = self.engine.timing();
        match (self.cycle_source(), &self.perf) {
            (CycleSource::Perf, Some(group)) => {
                group
                    .start()
                    .map_err(system("starting perf's cycles counter"))?;
                let (took, result) = clock::time(|| walker.walk(shape, nops, trips));
                let reading = group
                    .stop()
                    .map_err(system("reading perf's cycles counter"))?;
                result?;
                let cycles = reading.scaled().first().copied().flatten();
                Ok((took.as_nanos() as f64, cycles))
            }
            (CycleSource::CycleCounter, _) => {
                let before = timing.read();
                let (took, result) = clock::time(|| walker.walk(shape, nops, trips));
                let after = timing.read();
                result?;
                let cycles = before.zip(after).map(|(b, a)| a.wrapping_sub(b) as f64);
                Ok((took.as_nanos() as f64, cycles))
            }
            _ => {
                let (took, result) = clock::time(|| walker.walk(shape, nops, trips));
                result?;
                Ok((took.as_nanos() as f64, None))
            }
        }
    }
}

/// Follows a delta chain run by run, checking every run's end node.
struct Walker<'a> {
    base: *const u64,
    chain: &'a Chain,
    loads: u64,
    offset: u64,
}

impl Walker<'_> {
    fn walk(&mut self, shape: Shape, nops: u32, trips: u64) -> Result<(), MeasureError> {
        // SAFETY: the chain was linked into this buffer as deltas
        // (`Driver::level`) and `offset` is always one of its nodes.
        let end = unsafe { kernels::chase(shape, nops, self.base, self.offset, trips) }
            .expect("the command checks --nops against the kernels this build has");
        let loads = trips * shape.iterations_per_trip();
        self.loads = (self.loads + loads) % self.chain.len();
        let expected = self.chain.node_offset(self.loads);
        if end != expected {
            return Err(MeasureError::ChainMismatch {
                kernel: "loaduse",
                expected,
                got: end,
                loads,
            });
        }
        self.offset = end;
        Ok(())
    }
}
