//! From timed curves to results: the core's issue reading, per-level latency
//! (min / avg / max), loop overhead and throughput, and the words that explain
//! them. The result structs serialize to the command's JSON.

use serde::{Deserialize, Serialize};

use super::driver::{LevelRun, PointRun};
use super::levels::LevelSpec;
use crate::analysis::knee::{self, CurveShape, Issue, Point, Reading, Tolerance};
use crate::kernels::load_use::UNROLL;
use crate::platform::PageBacking;

/// Bytes one load of the chain reads (a 64-bit word), for the throughput column.
pub const WORD_BYTES: f64 = 8.0;

/// The whole `memlat loaduse` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoaduseResult {
    /// What one iteration is, in words.
    pub experiment: String,
    /// Fewest NOPs measured.
    pub nops_from: u32,
    /// Most NOPs measured.
    pub nops_to: u32,
    /// Iterations per loop trip of the timed (unrolled) kernels.
    pub unroll: u64,
    /// Passes over the NOP range; per N the fastest is kept.
    pub passes: u32,
    /// Chain pattern.
    pub pattern: String,
    /// Node spacing in bytes.
    pub line: u64,
    /// CPU the thread was pinned to.
    pub cpu: usize,
    /// `perf`, `cycle-counter`, `estimated` or `given`.
    pub cycle_source: String,
    /// Loop overhead: cycles a trip of a one-iteration loop (seed 003's shape)
    /// costs beyond the unrolled loop's iteration, measured at the first level.
    pub loop_overhead_cycles: f64,
    /// What the curves say about the core, and why.
    pub reading: CoreReading,
    /// One entry per working set.
    pub levels: Vec<LevelResult>,
    /// Things the reader should know.
    pub warnings: Vec<String>,
}

/// The core's issue behaviour, read from the smallest level with a clear curve.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CoreReading {
    /// `single-issue`, `multi-issue` or `undetermined`.
    pub issue: Issue,
    /// The level it was read from.
    pub from_level: String,
    /// Instructions per cycle from the slope past the knee.
    pub issue_width: Option<f64>,
    /// Instructions per cycle at the knee: (crossing N + 2) / plateau.
    pub issue_width_at_knee: Option<f64>,
    /// Without a knee: a lower bound on the width, (largest N + 2) / plateau.
    pub issue_width_at_least: Option<f64>,
    /// What the knee means on this core, in sentences.
    pub explanation: String,
}

/// One working set's curve and figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LevelResult {
    /// `L1d`, `L2`, `L3`, `DRAM`, or the size given with --level.
    pub name: String,
    /// Working-set (buffer) size in bytes.
    pub size_bytes: u64,
    /// Where the size comes from.
    pub basis: String,
    /// Load-to-use latency in cycles (the average: plateau - 1 for the add - loop overhead per iteration).
    pub latency_cycles: f64,
    /// The shortest latency: the first N where the time grows (single-issue cores only).
    pub latency_min_cycles: Option<f64>,
    /// The longest: where the curve meets N + 2 + overhead (single-issue cores, when in range).
    pub latency_max_cycles: Option<f64>,
    /// The average latency in nanoseconds.
    pub latency_ns: f64,
    /// Loop overhead in cycles per trip of a one-iteration loop (as seed 003's table), from the first level.
    pub loop_overhead_cycles: f64,
    /// What the loop adds to each iteration of the unrolled kernels: loop overhead / unroll.
    pub loop_overhead_per_iteration_cycles: f64,
    /// One 8-byte load per average latency at the core clock, MiB/s (seed 003's column).
    pub throughput_mib_s: f64,
    /// Median cycles per iteration before the first knee.
    pub plateau_cycles: f64,
    /// First N where the time grows above the plateau.
    pub knee_nops: Option<u32>,
    /// Where the line past the knee meets the plateau (fractional N).
    pub knee_crossing_nops: Option<f64>,
    /// Every N where the time starts to grow (the staircase on single-issue cores; else the first knee).
    pub knees: Vec<u32>,
    /// Slope past the first knee, cycles per NOP.
    pub slope_cycles_per_nop: Option<f64>,
    /// 1 / slope: instructions issued per cycle past the knee.
    pub issue_width: Option<f64>,
    /// Cycles per load `memlat run` measures at the same size and pattern (the
    /// median of its repeats, as it prints it), for comparison.
    pub run_cycles_per_load: Option<f64>,
    /// The kernel that comparison used.
    pub run_kernel: Option<String>,
    /// Core clock over this level's points, GHz (cycles / ns).
    pub clock_ghz: f64,
    /// Nodes in the chain.
    pub chain_nodes: u64,
    /// Page backing obtained.
    pub page_backing: PageBacking,
    /// The curve: one entry per N.
    pub points: Vec<LoadusePoint>,
    /// The one-iteration-per-trip kernel at the first few N, when measured here.
    pub rolled: Vec<PointRun>,
    /// Things the reader should know about this level.
    pub warnings: Vec<String>,
}

/// One N of a curve.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadusePoint {
    /// NOPs between the load and the add.
    pub nops: u32,
    /// Cycles per iteration, the fastest pass.
    pub cycles_per_iteration: f64,
    /// Cycles per iteration, the slowest pass.
    pub cycles_max: f64,
    /// Nanoseconds per iteration, the fastest pass.
    pub ns_per_iteration: f64,
    /// Every pass.
    pub passes: Vec<super::driver::PassSample>,
}

/// A timed level with its spec and the `memlat run` figure beside it.
pub struct TimedLevel {
    /// What was asked for.
    pub spec: LevelSpec,
    /// What was timed.
    pub run: LevelRun,
    /// `memlat run`'s cycles per load at the same working set, and its kernel.
    pub chase: Option<(f64, String)>,
}

/// Settings the result records.
pub struct Context {
    /// NOP counts measured.
    pub nops: (u32, u32),
    /// Passes over the range.
    pub passes: u32,
    /// Pattern name.
    pub pattern: String,
    /// Node spacing.
    pub line: u64,
    /// CPU.
    pub cpu: usize,
    /// Cycle source name.
    pub cycle_source: String,
    /// Why the estimated core clock is suspect, when it is.
    pub clock_suspect: Option<String>,
}

fn curve(run: &LevelRun) -> Vec<Point> {
    run.points.iter().map(|p| (p.nops, p.cycles())).collect()
}

/// Loop overhead per trip: rolled minus unrolled at the same N, scaled by
/// U / (U - 1) since the unrolled kernel still pays 1/U of it; the median
/// over the N where both were timed.
pub fn loop_overhead(run: &LevelRun) -> Option<f64> {
    let u = UNROLL as f64;
    let mut differences: Vec<f64> = run
        .rolled
        .iter()
        .filter_map(|rolled| {
            let unrolled = run.points.iter().find(|p| p.nops == rolled.nops)?;
            Some((rolled.cycles() - unrolled.cycles()) * u / (u - 1.0))
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    let n = differences.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(differences[n / 2]),
        _ => Some((differences[n / 2 - 1] + differences[n / 2]) / 2.0),
    }
}

/// Builds the result from the timed levels (smallest working set first).
pub fn assemble(context: Context, timed: Vec<TimedLevel>) -> LoaduseResult {
    // Each level's tolerance is widened to the noise its own curve shows.
    let tols: Vec<Tolerance> = timed
        .iter()
        .map(|t| Tolerance::CYCLES.widened_for(&curve(&t.run)))
        .collect();
    let shapes: Vec<CurveShape> = timed
        .iter()
        .zip(&tols)
        .map(|(t, tol)| knee::shape(&curve(&t.run), *tol))
        .collect();
    let last = context.nops.1;
    // Read the core from the smallest level that says something definite.
    let readings: Vec<Reading> = shapes.iter().map(|s| knee::read_issue(s, last)).collect();
    let chosen = readings
        .iter()
        .position(|r| r.issue != Issue::Undetermined)
        .unwrap_or(0);
    let mut reading = readings[chosen];
    let overhead = timed
        .iter()
        .find_map(|t| loop_overhead(&t.run))
        .unwrap_or(0.0);
    let per_iteration = overhead.max(0.0) / UNROLL as f64;
    let mut warnings = Vec::new();
    let levels: Vec<LevelResult> = timed
        .into_iter()
        .zip(shapes.iter().zip(&tols))
        .map(|(t, (shape, tol))| {
            level_result(t, shape, reading.issue, overhead, per_iteration, *tol)
        })
        .collect();
    if reading.issue == Issue::SingleIssue
        && let Some(first) = levels.get(chosen)
        && let Some(min) = first.latency_min_cycles
        && (min - first.latency_cycles).abs() > 1.0
    {
        warnings.push(format!(
            "{}: the knee (N = {min}) and the plateau ({:.2} cycles) disagree by more than a cycle: an uneven latency, or a core that is not quite single-issue",
            first.name, first.latency_cycles
        ));
    }
    for level in &levels {
        if let Some(run) = level.run_cycles_per_load
            && (run - level.latency_cycles).abs() > 1.0
            && (run - level.latency_cycles).abs() > 0.1 * run
        {
            warnings.push(format!(
                "{}: load-to-use {:.2} cycles but memlat run measures {run:.2} cycles per load at the same working set; on a busy machine rerun both, else the core treats a load feeding an add differently from one feeding an address",
                level.name, level.latency_cycles
            ));
        }
    }
    // A reading in cycles needs a clock to trust: an estimate the chains did
    // not confirm, or an L1 hit under 2 cycles, leaves it unread.
    let suspect = context.clock_suspect.clone().or_else(|| {
        levels
            .first()
            .filter(|l| l.name.starts_with("L1"))
            .and_then(|l| crate::platform::clock::l1_cycles_suspect(l.latency_cycles))
    });
    let explanation = match &suspect {
        Some(why) => {
            reading = Reading {
                issue: Issue::Undetermined,
                width_from_slope: None,
                width_at_knee: None,
                width_at_least: None,
            };
            warnings.push(format!("clock suspect: {why}"));
            format!(
                "Not read: the clock is suspect ({why}). Cycle figures are ns x that clock, so neither the issue width nor the latency in cycles can be read from them."
            )
        }
        None => explain(&reading, &levels[chosen], &shapes[chosen], last),
    };
    LoaduseResult {
        experiment: "a load, N NOPs, then an add of the loaded value into the pointer, which makes the next load's address (seed 003's LW, NOPs, ADDU)".into(),
        nops_from: context.nops.0,
        nops_to: context.nops.1,
        unroll: UNROLL,
        passes: context.passes,
        pattern: context.pattern,
        line: context.line,
        cpu: context.cpu,
        cycle_source: context.cycle_source,
        loop_overhead_cycles: overhead,
        reading: CoreReading {
            issue: reading.issue,
            from_level: levels[chosen].name.clone(),
            issue_width: reading.width_from_slope,
            issue_width_at_knee: reading.width_at_knee,
            issue_width_at_least: reading.width_at_least,
            explanation,
        },
        levels,
        warnings,
    }
}

fn level_result(
    t: TimedLevel,
    shape: &CurveShape,
    issue: Issue,
    overhead: f64,
    per_iteration: f64,
    tol: Tolerance,
) -> LevelResult {
    let points = curve(&t.run);
    let latency = knee::latency(&points, shape, issue, per_iteration, tol);
    let mut ghz: Vec<f64> = t
        .run
        .points
        .iter()
        .map(|p| p.cycles() / p.ns())
        .filter(|g| g.is_finite() && *g > 0.0)
        .collect();
    ghz.sort_by(f64::total_cmp);
    let clock_ghz = ghz.get(ghz.len() / 2).copied().unwrap_or(f64::NAN);
    let knees = match issue {
        Issue::SingleIssue => knee::staircase(&points, tol)
            .into_iter()
            .map(|k| points[k].0)
            .collect(),
        _ => shape.knee_nops.into_iter().collect(),
    };
    let mut warnings = t.run.warnings.clone();
    if latency.avg < 1.0 {
        warnings.push(format!(
            "the plateau ({:.2} cycles per iteration) leaves less than a cycle for the load: the clock or cycle count is off (try --ghz)",
            shape.plateau
        ));
    }
    LevelResult {
        name: t.spec.name,
        size_bytes: t.spec.size,
        basis: t.spec.basis,
        latency_cycles: latency.avg,
        latency_min_cycles: latency.min,
        latency_max_cycles: latency.max,
        latency_ns: latency.avg / clock_ghz,
        loop_overhead_cycles: overhead,
        loop_overhead_per_iteration_cycles: per_iteration,
        throughput_mib_s: knee::throughput_bytes_per_s(WORD_BYTES, clock_ghz, latency.avg)
            / f64::from(1 << 20),
        plateau_cycles: shape.plateau,
        knee_nops: shape.knee_nops,
        knee_crossing_nops: shape.crossing_nops,
        knees,
        slope_cycles_per_nop: shape.slope,
        issue_width: shape.slope.filter(|s| *s > 0.0).map(|s| 1.0 / s),
        run_cycles_per_load: t.chase.as_ref().map(|c| c.0),
        run_kernel: t.chase.map(|c| c.1),
        clock_ghz,
        chain_nodes: t.run.chain_nodes,
        page_backing: t.run.page_backing,
        points: t
            .run
            .points
            .iter()
            .map(|p| LoadusePoint {
                nops: p.nops,
                cycles_per_iteration: p.cycles(),
                cycles_max: p.cycles_max(),
                ns_per_iteration: p.ns(),
                passes: p.passes.clone(),
            })
            .collect(),
        rolled: t.run.rolled,
        warnings,
    }
}

/// What the knee means on this core, in sentences.
fn explain(reading: &Reading, level: &LevelResult, shape: &CurveShape, last: u32) -> String {
    let name = &level.name;
    let plateau = shape.plateau;
    let chase = match (&level.run_cycles_per_load, &level.run_kernel) {
        (Some(c), Some(kernel)) => {
            format!(" (memlat run, {kernel} kernel, same working set: {c:.2} cycles per load)")
        }
        _ => String::new(),
    };
    match reading.issue {
        Issue::SingleIssue => format!(
            "Past the knee each NOP adds {:.2} cycles to an iteration: this core issues one instruction a cycle, in order, as seed 003's JZ4770 does. The NOPs fill the load's shadow one a cycle and the add waits for whatever is left, so the first N where the time grows is the load-to-use latency: {} cycles at {name}{chase}. The plateau agrees: {plateau:.2} cycles per iteration = latency + 1 for the add + {:.2} of loop overhead.",
            shape.slope.unwrap_or(f64::NAN),
            level
                .latency_min_cycles
                .map_or("?".into(), |m| format!("{m:.0}")),
            level.loop_overhead_per_iteration_cycles
        ),
        Issue::MultiIssue => {
            let width = match (reading.width_from_slope, reading.width_at_least) {
                (Some(w), _) => format!(
                    "about {w:.1} instructions a cycle (past the knee each NOP adds only {:.3} cycles{})",
                    shape.slope.unwrap_or(f64::NAN),
                    reading
                        .width_at_knee
                        .map(|k| format!("; {k:.1} from where the knee sits"))
                        .unwrap_or_default()
                ),
                (None, Some(w)) => format!(
                    "at least {w:.1} instructions a cycle ({} NOPs, the load and the add all fit in the load's {plateau:.2}-cycle shadow, so no knee shows up to N = {last})",
                    last
                ),
                _ => "several instructions a cycle".into(),
            };
            let knee = match (shape.knee_nops, shape.crossing_nops) {
                (Some(k), Some(c)) => format!(
                    "The knee at N = {c:.1} (where the line past it meets the plateau; the first point clearly above is N = {k}) is where N + 2 instructions take longer to issue than the load takes to come back: it measures (latency + 1) x issue width, not the latency. "
                ),
                _ => String::new(),
            };
            format!(
                "At {name} this core issues {width}: the NOPs issue while the load is in flight (an out-of-order core also runs ahead into the next iterations' NOPs), so cycles per iteration ~ max(latency + 1, (N + 2) / width). {knee}Seed 003's reading (the first N that grows is the latency) holds only on single-issue in-order cores, so memlat reads the latency from the plateau instead: {plateau:.2} cycles per iteration - 1 for the add = {:.2} cycles{chase}. Min and max need a single-issue core and are left out.",
                level.latency_cycles
            )
        }
        Issue::Undetermined => format!(
            "No knee up to N = {last} at {name}: {last} NOPs never outlast the load ({plateau:.2} cycles per iteration), and {} instructions in that time do not show whether the core issues one instruction a cycle or several. The latency is read from the plateau, less 1 cycle for the add: {:.2} cycles{chase}. Widen --nops (up to {}) or add a smaller --level to see a knee.",
            last + 2,
            level.latency_cycles,
            crate::kernels::load_use::MAX_NOPS
        ),
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
