//! Timing the load-use kernels on the engine: one working set (a
//! [`Workload`] with a delta chain), every N of the range, several passes.
//!
//! Each point is one engine sample with [`Strategy::Fastest`]: a few runs of
//! A loop trips, A calibrated so a run lasts `sample_time / ROUNDS`, the
//! fastest kept (see `engine::sampling` for why not A/2A here). The kernel's
//! final node is checked against the chain after every run. Each pass over
//! the range gets a fresh random chain and visits N in a fresh random order,
//! so a slow spell of the machine lands on scattered N instead of bending a
//! stretch of the curve; per N the fastest pass is kept.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::chain::{Chain, ChainError, Pattern, SplitMix64};
use crate::engine::{CLOCK_DRIFT_WARN, CycleSource, Engine, Error, Strategy, Workload};
use crate::kernels::Kernel;
use crate::kernels::load_use::Shape;
use crate::platform::{PageBacking, PageRequest};

/// Timed runs per point and pass; the fastest is kept.
pub const ROUNDS: u32 = 5;

/// N at which the rolled kernel is timed beside the unrolled one (the first
/// ones of the range); the loop overhead is the median of their differences.
pub const ROLLED_POINTS: usize = 4;

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

/// Times every N at a working set of `size` bytes; with `rolled`, also the
/// rolled kernel at the first [`ROLLED_POINTS`] N (for the loop overhead).
/// `progress` hears about each pass.
pub fn level(
    engine: &Engine,
    size: u64,
    settings: &Settings,
    rolled: bool,
    mut progress: impl FnMut(u32),
) -> Result<LevelRun, Error> {
    // Stride chains step one node (`line` bytes) at a time.
    let chain_for = |pass: u32| -> Result<Chain, ChainError> {
        let seed = settings.seed.wrapping_add(u64::from(pass));
        Chain::build(settings.pattern, size, settings.line, settings.line, seed)
    };
    let mut chain = chain_for(0)?;
    let mut workload = Workload::prepare(size, settings.pages, settings.node)?;
    let mut warnings = std::mem::take(&mut workload.notices);
    let clock_ghz_before = engine.read_clock();
    let runs = |shape, count: usize| -> Vec<PointRun> {
        settings
            .nops
            .iter()
            .take(count)
            .map(|&nops| PointRun {
                nops,
                shape,
                passes: Vec::new(),
            })
            .collect()
    };
    let mut points = runs(Shape::Unrolled, settings.nops.len());
    let mut rolled_runs = runs(Shape::Rolled, if rolled { ROLLED_POINTS } else { 0 });
    let first = settings.nops.first().copied().unwrap_or(0);
    for pass in 0..settings.passes {
        progress(pass);
        if pass > 0 && settings.pattern != Pattern::Stride {
            chain = chain_for(pass)?;
        }
        let warm = Kernel::LoadUse {
            nops: first,
            shape: Shape::Unrolled,
        };
        workload.link(&chain, warm)?;
        let mut walker = workload.walker(&chain, warm);
        // Warm-up until steady, as every point's (engine::warm_up).
        crate::engine::warm_up(&mut walker)?;
        // A fresh random order of N each pass: a slow spell of the machine
        // (a busy SMT sibling, another tenant) lands on scattered N in each
        // pass, so the fastest pass of every N is likely an undisturbed one.
        let mut order: Vec<(Shape, usize)> = (0..points.len())
            .map(|i| (Shape::Unrolled, i))
            .chain((0..rolled_runs.len()).map(|i| (Shape::Rolled, i)))
            .collect();
        SplitMix64::new(settings.seed.wrapping_add(u64::from(pass))).shuffle(&mut order);
        for (shape, i) in order {
            let run = match shape {
                Shape::Unrolled => &mut points[i],
                Shape::Rolled => &mut rolled_runs[i],
            };
            walker.switch_kernel(Kernel::LoadUse {
                nops: run.nops,
                shape,
            });
            let mut trips = None;
            let timed = engine.time(
                &mut walker,
                &mut trips,
                settings.sample_time,
                Strategy::Fastest { rounds: ROUNDS },
            )?;
            let clock_ghz = match engine.cycle_source() {
                CycleSource::Given => engine.timing().given_ghz.unwrap_or(f64::NAN),
                _ => timed.clock_ghz,
            };
            run.passes.push(PassSample {
                pass,
                ns_per_iteration: timed.ns_per_load,
                cycles_per_iteration: timed.cycles_per_load,
                counted: engine.cycle_source().counted() && timed.cycles_per_load.is_finite(),
                clock_ghz,
                trips: timed.trips,
            });
        }
    }
    let clock_ghz_after = engine.read_clock();
    let drift = (clock_ghz_after - clock_ghz_before).abs() / clock_ghz_before;
    if drift > CLOCK_DRIFT_WARN && engine.cycle_source() != CycleSource::Given {
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
        page_backing: workload.page_backing.clone(),
        clock_ghz_before,
        clock_ghz_after,
        warnings,
    })
}
