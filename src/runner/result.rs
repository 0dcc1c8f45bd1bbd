//! What a measurement is asked for and what it gives back.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::CycleSource;
use crate::analysis::stats::Summary;
use crate::chain::{ChainError, Pattern};
use crate::kernel::KernelKind;
use crate::platform::clock::ClockEstimate;
use crate::platform::{PageBacking, PageRequest};
use crate::units::HumanBytes;

/// What to measure at one point.
#[derive(Debug, Clone)]
pub struct PointSpec {
    /// Buffer size in bytes (a multiple of 8).
    pub size: u64,
    /// Stride in bytes for `Pattern::Stride` (a multiple of 8).
    pub stride: u64,
    /// Chain pattern.
    pub pattern: Pattern,
    /// Which loop follows the chain.
    pub kernel: KernelKind,
    /// Node spacing in bytes for the random patterns.
    pub line: u64,
    /// Page size to ask for.
    pub pages: PageRequest,
    /// NUMA node to bind the buffer to.
    pub node: Option<usize>,
    /// Repeats; each random repeat gets a fresh chain.
    pub repeats: u32,
    /// Seed of the first repeat's chain; repeat r uses seed + r.
    pub seed: u64,
    /// Loads per sample (rounded up to a multiple of the unroll); `None`: calibrate to `sample_time`.
    pub accesses: Option<u64>,
    /// How long one sample (A loads then 2A loads) should last when calibrating.
    pub sample_time: Duration,
}

/// Errors of a measurement.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The buffer would not fit in available memory.
    #[error(
        "-n/--size {size} needs about {needed} but only {available} is available (MemAvailable); choose a smaller -n/--size"
    )]
    NotEnoughMemory {
        /// Requested size.
        size: HumanBytes,
        /// Bytes needed including bookkeeping.
        needed: HumanBytes,
        /// MemAvailable.
        available: HumanBytes,
    },
    /// The sizes cannot make a chain.
    #[error("{0}: use a larger -n/--size or a smaller --line")]
    Chain(#[from] ChainError),
    /// The kernel did not end where the chain says: the number would be a lie.
    #[error(
        "the {kernel} kernel ended at byte offset {got} but the chain says {expected} after {loads} loads; refusing to report a latency (please report this as a bug)"
    )]
    ChainMismatch {
        /// Kernel name.
        kernel: &'static str,
        /// Where the chain says it must end.
        expected: u64,
        /// Where it ended.
        got: u64,
        /// Loads followed.
        loads: u64,
    },
    /// The clock asked for with --clock cannot be used here.
    #[error("{0}")]
    ClockUnavailable(String),
    /// A system call failed.
    #[error("{context}: {source}")]
    System {
        /// What memlat was doing.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl MeasureError {
    /// Whether the user can fix it with a flag (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            MeasureError::NotEnoughMemory { .. }
                | MeasureError::Chain(_)
                | MeasureError::ClockUnavailable(_)
        )
    }
}

pub(crate) fn system(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> MeasureError {
    let context = context.into();
    move |source| MeasureError::System { context, source }
}

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
    /// Rounds of A and 2A runs timed (3, more when the machine was busy).
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
    /// Nanoseconds per load over the repeats.
    pub ns_per_load: Summary,
    /// Cycles per load over the repeats.
    pub cycles_per_load: Summary,
    /// `perf` (the cycles event), `cycle-counter` (an ISA core-cycle counter),
    /// `estimated` (ns x the core clock measured from dependent chains) or `given` (--ghz).
    pub cycle_source: CycleSource,
    /// How the core clock was estimated: each chain's GHz, whether they agree,
    /// the ceiling from the claimed frequencies (absent in files from memlat 0.1.0).
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
    /// Median per-load count of each requested event; null when it could not be counted.
    pub events: BTreeMap<String, Option<f64>>,
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
}
