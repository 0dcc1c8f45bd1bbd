//! `memlat mlp` as an experiment: at one size per level (as the quick table
//! picks them), N = 1, 2, ... random chains walked side by side in one
//! thread; the reading is [`crate::analysis::mlp`].

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{Observer, Step};
use crate::analysis::mlp::{self, MlpPoint, Verdict};
use crate::engine::{Engine, Point};
use crate::units::HumanBytes;

/// Chain counts by default: 1 to 16.
pub const DEFAULT_MAX_CHAINS: u32 = crate::kernels::parallel::MAX_CHAINS as u32;

pub use super::plateaus::LevelSize;

/// New 1-chain baselines at most, when a count shows more loads in flight than chains.
pub const BASELINE_RETRIES: u32 = 2;

/// One level's result in `memlat mlp --format json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MlpLevel {
    /// `L1`, `L2`, ..., `memory`.
    pub name: String,
    /// Buffer size, bytes (all chains together).
    pub size_bytes: u64,
    /// One point per chain count.
    pub points: Vec<MlpPoint>,
    /// `levels_off` (at `saturation_chains`) or `still_growing` (at the most
    /// chains tried): one verdict per level; null without points.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// The smallest chain count within 10% of the best throughput: the misses
    /// this core keeps in flight at this level; null when still growing or
    /// without points.
    pub saturation_chains: Option<u32>,
    /// Effective parallelism at saturation (at the most chains tried when
    /// still growing).
    pub saturation_parallelism: f64,
    /// How many times the one-chain baseline was measured again because a
    /// count showed more loads in flight than chains.
    #[serde(default)]
    pub baseline_remeasured: u32,
    /// The chain latency parallelism is counted against when it is not one
    /// chain's: the fastest a chain's load took at any count, where loads
    /// among many chains were faster than alone (see the notes); absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_latency_ns: Option<f64>,
    /// 0..1: how clearly throughput levels off.
    pub confidence: f64,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// Measures every level at every chain count in `chains`; `template` carries
/// the settings every point shares (random pattern). A checkpoint after each
/// level keeps what is done when the run is cut short.
pub fn run(
    engine: &mut Engine,
    template: &Point,
    levels: &[LevelSize],
    chains: &[u32],
    observer: &mut dyn Observer<Vec<MlpLevel>>,
) -> Result<Vec<MlpLevel>> {
    let mut results = Vec::new();
    let total = levels.len() * chains.len();
    let costs: Vec<(String, u64)> = levels
        .iter()
        .flat_map(|l| chains.iter().map(move |&n| (l, n)))
        .map(|(l, n)| {
            let point = Point {
                size: l.size,
                chains: n,
                ..template.clone()
            };
            (l.name.clone(), super::sweep::cost_ms(&point))
        })
        .collect();
    observer.planned(&costs);
    'levels: for (k, level) in levels.iter().enumerate() {
        let mut measured = Vec::new();
        for (i, &n) in chains.iter().enumerate() {
            if observer.interrupted() {
                break 'levels;
            }
            let label = format!("{} ({}): {n} chains", level.name, HumanBytes(level.size));
            let point = Point {
                size: level.size,
                chains: n,
                ..template.clone()
            };
            let step = Step {
                index: k * chains.len() + i,
                total,
                label: &label,
                cost_ms: super::sweep::cost_ms(&point),
            };
            observer.begin(&step);
            let m = engine
                .measure(&point)
                .with_context(|| format!("measuring {label}"))?;
            measured.push((n, m.ns_per_load.median));
            observer.end(&step);
        }
        let mut points = mlp::points(&measured, template.line);
        let mut remeasured = 0;
        let mut notes = Vec::new();
        // N chains keep at most N loads in flight: more means the one-chain
        // baseline was slow. Measure it again, keeping the fastest.
        while mlp::baseline_suspect(&points) && remeasured < BASELINE_RETRIES {
            let Some(first) = measured.iter_mut().find(|(n, _)| *n == 1) else {
                break;
            };
            let again = engine
                .measure(&Point {
                    size: level.size,
                    chains: 1,
                    ..template.clone()
                })
                .with_context(|| format!("measuring {} again: 1 chain", level.name))?
                .ns_per_load
                .median;
            notes.push(format!(
                "a count showed more loads in flight than chains, so the 1-chain baseline ({:.1} ns) was measured again: {again:.1} ns",
                first.1
            ));
            first.1 = first.1.min(again);
            remeasured += 1;
            points = mlp::points(&measured, template.line);
        }
        // Still above after new baselines: one chain's loads are slower
        // than loads among many, which a noisy baseline does not explain
        // twice over. Count against the fastest a chain's load took.
        let mut reference_ns = None;
        if let (counted, Some((n, fastest))) = mlp::counted(&measured, template.line) {
            let single = measured.iter().find(|(c, _)| *c == 1).map(|(_, ns)| *ns);
            notes.push(format!(
                "parallelism still exceeded the chain count after {remeasured} new baseline(s): a load took {fastest:.1} ns with {n} chains side by side against {} alone, so the memory system served loads faster under traffic (uncore or fabric clocks that rise with load, as Intel's uncore frequency scaling and AMD's fabric power states do); parallelism is counted against {fastest:.1} ns, the fastest a chain's load took",
                single.map_or("?".to_string(), |s| format!("{s:.1} ns"))
            ));
            points = counted;
            reference_ns = Some(fastest);
        }
        let s = mlp::saturation(&points);
        notes.extend(s.notes);
        results.push(MlpLevel {
            name: level.name.clone(),
            size_bytes: level.size,
            points,
            verdict: s.verdict,
            saturation_chains: s.chains,
            saturation_parallelism: s.parallelism,
            baseline_remeasured: remeasured,
            reference_latency_ns: reference_ns,
            confidence: s.confidence,
            notes,
        });
        observer.checkpoint(&results)?;
    }
    Ok(results)
}
