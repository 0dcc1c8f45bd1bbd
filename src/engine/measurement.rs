//! What a measurement gives back: every repeat's raw figures and their
//! summary, with the conditions they were measured in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{CycleSource, Engine, MAX_ROUNDS, Point, SPREAD_WARN};
use crate::analysis::detect::CurvePoint;
use crate::analysis::stats::Summary;
use crate::chain::{Chain, Pattern};
use crate::kernels::KernelKind;
use crate::platform::PageBacking;
use crate::platform::clock::ClockEstimate;

/// One repeat's raw figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    /// Repeat number, from 0.
    pub repeat: u32,
    /// Seed of this repeat's chain.
    pub seed: u64,
    /// Nanoseconds for A loads (fastest of the rounds, including fixed overhead).
    pub ns_a: f64,
    /// Nanoseconds for 2A loads (fastest of the rounds, including the same fixed overhead).
    pub ns_2a: f64,
    /// (ns_2a - ns_a) / A.
    pub ns_per_load: f64,
    /// Cycles per load: from perf's cycles, a cycle counter, or ns_per_load x clock_ghz.
    pub cycles_per_load: f64,
    /// ISA counter ticks for the A loads (when the clock is an ISA counter).
    pub ticks_a: Option<f64>,
    /// ISA counter ticks for the 2A loads (when the clock is an ISA counter).
    pub ticks_2a: Option<f64>,
    /// Rounds of A and 2A runs timed (2, more when the machine was busy).
    #[serde(default)]
    pub rounds: u32,
    /// No round was undisturbed: figures are the 2A run over 2A loads, not the difference.
    #[serde(default)]
    pub disturbed: bool,
    /// Core clock from dependent adds timed beside this sample's loads, GHz.
    pub clock_ghz: f64,
    /// Each counted event per load, scaled for multiplexing; null when not counted.
    pub events: BTreeMap<String, Option<f64>>,
    /// Largest multiplexing scale (enabled / running) of the two readings; 1 = none.
    pub counter_scale: Option<f64>,
}

/// Where a point's wall time went, seconds: what a slow run should be
/// asked about first (a GiB's pages, a random chain's writes, its walk).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Mapping, binding and faulting in the buffer (zero when the point
    /// reused the previous point's buffer).
    pub fault_s: f64,
    /// Building the chains and writing them into the buffer.
    pub build_s: f64,
    /// Walking the chain before timing it.
    pub warmup_s: f64,
    /// The timed runs (A and 2A loads, their rounds, the clock beside them).
    pub timed_s: f64,
}

impl Phases {
    /// A point's phases once its first chain took `build_s` to build.
    pub(super) fn built_in(build_s: f64) -> Phases {
        Phases {
            build_s,
            ..Phases::default()
        }
    }

    fn add(&mut self, other: &Phases) {
        self.fault_s += other.fault_s;
        self.build_s += other.build_s;
        self.warmup_s += other.warmup_s;
        self.timed_s += other.timed_s;
    }
}

/// Everything measured at one point, with the conditions it was measured in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    /// Buffer size in bytes.
    pub size: u64,
    /// Stride in bytes (meaningful for the stride pattern).
    pub stride: u64,
    /// Chain pattern.
    pub pattern: Pattern,
    /// Kernel that followed the chain.
    pub kernel: KernelKind,
    /// Node spacing of random patterns, bytes.
    pub line: u64,
    /// Loads per sample (A); each sample times A and 2A loads.
    pub accesses: u64,
    /// Loads walked to warm up, over all repeats (until the timing was
    /// steady, at most one full cycle per repeat).
    #[serde(default)]
    pub warmup_loads: u64,
    /// Wall time the point took, seconds (buffer, chains, warm-up, samples).
    #[serde(default)]
    pub seconds: f64,
    /// How `seconds` was spent (files from before 0.2 have none: zeros).
    #[serde(default)]
    pub phases: Phases,
    /// Nodes in one cycle of the chain.
    pub chain_nodes: u64,
    /// Distinct 64-byte blocks the chain touches (seed 004).
    pub distinct_blocks: u64,
    /// Word index of the node the last sample ended on (seed 004's `last element`).
    pub last_element: u64,
    /// Repeats made.
    pub repeats: u32,
    /// Seed of the first repeat.
    pub seed: u64,
    /// What differs from one repeat to the next: a fresh chain, or only the
    /// timing (one large chain reused; a stride chain).
    #[serde(default)]
    pub repeat_varies: String,
    /// Nanoseconds per load over the repeats.
    pub ns_per_load: Summary,
    /// Cycles per load over the repeats.
    pub cycles_per_load: Summary,
    /// `perf` (the cycles event), `cycle-counter` (an ISA core-cycle counter),
    /// `estimated` (ns x the core clock measured from dependent chains) or `given` (--ghz).
    pub cycle_source: CycleSource,
    /// How the core clock was estimated: each chain's GHz, whether they agree,
    /// the claimed frequencies, the verdict (absent in files from memlat 0.1.0).
    #[serde(default)]
    pub clock_method: Option<ClockEstimate>,
    /// What timed the samples: `monotonic`, `rdtsc`, `cntvct_el0`, `rdtime`,
    /// `rdcycle`, `pmccntr_el0`, `rdpmc`, or `perf` (perf cycles, ns from monotonic).
    pub clock: String,
    /// Why a better clock could not be used, when one could not.
    pub clock_note: Option<String>,
    /// Hardware prefetchers' state (`--prefetchers`): `as is (...)` or `off (...)`.
    #[serde(default)]
    pub prefetchers: Option<String>,
    /// Core clock in GHz: for estimated cycles the median of the clocks timed
    /// beside each sample; for perf cycles the observed cycles / ns.
    pub clock_ghz: f64,
    /// Core clock estimated from dependent adds before the point.
    pub clock_ghz_before: f64,
    /// Core clock estimated from dependent adds after the point.
    pub clock_ghz_after: f64,
    /// Median per-load count of each requested event; null when it could not
    /// be counted, except `cycles`, which holds the estimate (ns x clock)
    /// where it could not be counted and is then listed in `estimated_events`.
    pub events: BTreeMap<String, Option<f64>>,
    /// Events whose figure in `events` is an estimate, not a count: only
    /// `cycles`, without a cycle counter. Seed 004's reader takes a cycles
    /// line from every run; without a PMU the estimate is the honest figure
    /// to give it, named as such here and in the text's `cycles_source`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub estimated_events: Vec<String>,
    /// Page backing obtained.
    pub page_backing: PageBacking,
    /// CPU the thread was pinned to.
    pub cpu: usize,
    /// NUMA node the buffer was bound to.
    pub node: Option<usize>,
    /// Cycles of one trip of the empty loop (decrement + branch), seed 001's calibration.
    pub loop_overhead_cycles: f64,
    /// Nanoseconds of one trip of the empty loop.
    pub loop_overhead_ns: f64,
    /// Dependent loads per loop trip.
    pub unroll: u64,
    /// Every repeat's raw figures.
    pub samples: Vec<Sample>,
    /// Things the reader should know (fallbacks, spread, clock drift).
    pub warnings: Vec<String>,
    /// Loads timed one by one (`Point::distribution`, `--distribution`):
    /// percentiles, histogram, modes and periodic stalls; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<crate::analysis::distribution::Distribution>,
}

impl Measurement {
    /// Pools `other`'s repeats (the same point measured again, with fresh
    /// chains) into this one: samples appended with their repeat numbers
    /// continued, summaries and event medians recomputed, time added.
    pub fn pool(&mut self, other: Measurement) {
        let offset = self.samples.len() as u32;
        self.samples
            .extend(other.samples.into_iter().map(|s| Sample {
                repeat: s.repeat + offset,
                ..s
            }));
        let ns: Vec<f64> = self.samples.iter().map(|s| s.ns_per_load).collect();
        let cycles: Vec<f64> = self.samples.iter().map(|s| s.cycles_per_load).collect();
        if let (Some(n), Some(c)) = (Summary::of(&ns), Summary::of(&cycles)) {
            self.ns_per_load = n;
            self.cycles_per_load = c;
        }
        for (name, value) in self.events.iter_mut() {
            let values: Vec<f64> = self
                .samples
                .iter()
                .filter_map(|s| s.events.get(name).copied().flatten())
                .collect();
            *value = Summary::of(&values).map(|s| s.median);
        }
        if self.estimated_events.iter().any(|e| e == "cycles") {
            self.events
                .insert("cycles".into(), Some(self.cycles_per_load.median));
        }
        self.repeats += other.repeats;
        self.seconds += other.seconds;
        self.phases.add(&other.phases);
        self.warmup_loads += other.warmup_loads;
        for w in other.warnings {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
    }
}

/// The block size seed 004 counts distinct blocks in.
pub const BLOCK: u64 = 64;

/// What a point's summary needs besides its samples.
pub(super) struct Context<'a> {
    pub point: &'a Point,
    pub chain: &'a Chain,
    pub accesses: u64,
    pub warmup_loads: u64,
    pub seconds: f64,
    pub phases: Phases,
    pub last_offset: u64,
    pub page_backing: PageBacking,
    pub clock_before: f64,
    pub clock_after: f64,
    pub chain_reused: Option<ChainReuse>,
}

/// Why one chain served every repeat of a point that could have had a
/// fresh one per repeat.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ChainReuse {
    /// It has [`super::REUSE_CHAIN_NODES`] nodes or more: it averages over itself.
    Large,
    /// Building and warming the first one took longer than timing its
    /// sample: a fresh chain per repeat would more than double the point's
    /// time for a different order over the same lines.
    Costly {
        /// Seconds building, linking and warming the first chain took.
        fresh_s: f64,
        /// Seconds the first sample's timed runs took.
        sample_s: f64,
    },
}

/// What the repeats-spread warning advises; a command that takes its
/// repeats from another flag (`memlat levels --iterations`) says that one.
pub const SPREAD_ADVICE: &str = "more --repeats or a quieter machine will tell";

/// Summarises the repeats of one point into a [`Measurement`], with the
/// warnings their spread, disturbance, multiplexing and clock call for.
pub(super) fn summarise(
    engine: &Engine,
    c: Context,
    samples: Vec<Sample>,
    mut warnings: Vec<String>,
) -> Measurement {
    let ns: Vec<f64> = samples.iter().map(|s| s.ns_per_load).collect();
    let cycles: Vec<f64> = samples.iter().map(|s| s.cycles_per_load).collect();
    let ns_per_load = Summary::of(&ns).expect("at least one repeat");
    let cycles_per_load = Summary::of(&cycles).expect("at least one repeat");
    if samples.len() > 1 && ns_per_load.relative_spread() > SPREAD_WARN {
        warnings.push(format!(
            "repeats spread {:.1}% (min {:.3} ns, max {:.3} ns): another tenant, or a level shared with others; {SPREAD_ADVICE}",
            ns_per_load.relative_spread() * 100.0,
            ns_per_load.min,
            ns_per_load.max
        ));
    }
    let disturbed = samples.iter().filter(|s| s.disturbed).count();
    if disturbed > 0 {
        warnings.push(format!(
            "{disturbed} of {} repeats had no undisturbed round in {MAX_ROUNDS} (the 2A-load run never took twice the A-load run): their latency is the 2A run over 2A loads; the machine is busy",
            samples.len()
        ));
    }
    let mut events = BTreeMap::new();
    for name in &engine.requested_events {
        let values: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.events.get(name).copied().flatten())
            .collect();
        events.insert(name.clone(), Summary::of(&values).map(|s| s.median));
    }
    // Cycles asked for but not counted by perf: the figure memlat has
    // (a cycle counter's, or the estimate, said to be one).
    let mut estimated_events = Vec::new();
    if let Some(cycles @ None) = events.get_mut("cycles") {
        *cycles = Some(cycles_per_load.median);
        if !engine.cycle_source().counted() {
            estimated_events.push("cycles".to_string());
        }
    }
    if let Some(scale) = samples
        .iter()
        .filter_map(|s| s.counter_scale)
        .reduce(f64::max)
        && scale > 1.01
    {
        warnings.push(format!(
            "the counter group was multiplexed (enabled/running up to {scale:.2}); counts are scaled estimates"
        ));
    }
    let clock_ghz = match engine.cycle_source() {
        CycleSource::Perf | CycleSource::CycleCounter => {
            cycles_per_load.median / ns_per_load.median
        }
        CycleSource::Estimated => {
            let clocks: Vec<f64> = samples.iter().map(|s| s.clock_ghz).collect();
            Summary::of(&clocks).map_or(c.clock_before, |s| s.median)
        }
        CycleSource::Given => engine.timing.given_ghz.unwrap_or(f64::NAN),
    };
    if let Some(why) = engine.clock_suspect() {
        warnings.push(format!("clock suspect: {why}"));
    }
    let loop_ghz = engine.timing.given_ghz.unwrap_or(engine.clock_ghz);
    let point = c.point;
    Measurement {
        size: point.size,
        stride: point.stride,
        pattern: point.pattern,
        kernel: point.kernel,
        line: point.line,
        accesses: c.accesses,
        warmup_loads: c.warmup_loads,
        seconds: c.seconds,
        phases: c.phases,
        chain_nodes: c.chain.len(),
        distinct_blocks: c.chain.distinct_blocks(BLOCK),
        last_element: c.last_offset / 8,
        repeats: samples.len() as u32,
        seed: point.seed,
        repeat_varies: if let Some(ChainReuse::Large) = c.chain_reused {
            format!(
                "timing only: one chain of {} nodes (at least {}) serves every repeat, averaging over itself",
                c.chain.len(),
                super::REUSE_CHAIN_NODES
            )
        } else if let Some(ChainReuse::Costly { fresh_s, sample_s }) = c.chain_reused {
            format!(
                "timing only after the first: one chain of {} nodes serves every repeat, walked on where the last stopped, since building and warming a fresh one took {:.1} ms against its sample's {:.1} ms",
                c.chain.len(),
                fresh_s * 1e3,
                sample_s * 1e3
            )
        } else if point.pattern == Pattern::Stride {
            "timing only: a stride chain has no seed".into()
        } else {
            "the chain: each repeat builds a fresh one (seed + repeat)".into()
        },
        ns_per_load,
        cycles_per_load,
        cycle_source: engine.cycle_source(),
        clock_method: Some(engine.clock_estimate.clone()),
        clock: engine.timing.clock_name.clone(),
        clock_note: engine.timing.note.clone(),
        prefetchers: engine.prefetchers.clone(),
        clock_ghz,
        clock_ghz_before: c.clock_before,
        clock_ghz_after: c.clock_after,
        events,
        estimated_events,
        page_backing: c.page_backing,
        cpu: engine.cpu,
        node: point.node,
        loop_overhead_cycles: engine.loop_ns * loop_ghz,
        loop_overhead_ns: engine.loop_ns,
        unroll: crate::kernels::UNROLL,
        samples,
        warnings,
        distribution: None,
    }
}

/// A measurement as a point of the latency curve the detector reads
/// (analysis takes plain data, so the conversion lives here).
impl From<&Measurement> for CurvePoint {
    fn from(m: &Measurement) -> CurvePoint {
        CurvePoint {
            size_bytes: m.size,
            ns: m.ns_per_load.median,
            ns_min: m.ns_per_load.min,
            ns_max: m.ns_per_load.max,
            cycles: m.cycles_per_load.median,
        }
    }
}

/// The curve of some measurements (one point per measurement).
pub fn curve(measurements: &[Measurement]) -> Vec<CurvePoint> {
    measurements.iter().map(CurvePoint::from).collect()
}
