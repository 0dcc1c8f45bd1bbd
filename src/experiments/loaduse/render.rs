//! `memlat loaduse` as text (the curve, the knees, the reading and seed 003's
//! processed table), as CSV (one row per level and N) and as a chart.

use super::report::{LevelResult, LoaduseResult};
use crate::analysis::knee::Issue;
use crate::output::csv::field;
use crate::output::text::wrap;
use crate::units::HumanBytes;

fn label(level: &LevelResult) -> String {
    let size = HumanBytes(level.size_bytes).to_string();
    if level.name == size {
        size
    } else {
        format!("{} {size}", level.name)
    }
}

fn opt(value: Option<f64>, decimals: usize) -> String {
    value.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

/// The text report.
pub fn text(r: &LoaduseResult) -> String {
    let mut out = format!(
        "memlat loaduse (seed 003): {}\n{} chain, {}-byte nodes, {} iterations a loop trip, fastest of {} passes, CPU {}, cycles: {}\n\n",
        r.experiment, r.pattern, r.line, r.unroll, r.passes, r.cpu, r.cycle_source
    );
    // The curve: one column per level.
    out += "cycles per iteration\n";
    out += &format!("{:>4}", "N");
    for level in &r.levels {
        out += &format!(" {:>16}", label(level));
    }
    out += "\n";
    let rows = r.levels.iter().map(|l| l.points.len()).max().unwrap_or(0);
    for i in 0..rows {
        let nops = r.levels[0].points.get(i).map_or(0, |p| p.nops);
        out += &format!("{nops:>4}");
        for level in &r.levels {
            out += &format!(
                " {:>16}",
                opt(level.points.get(i).map(|p| p.cycles_per_iteration), 2)
            );
        }
        out += "\n";
    }
    out += "\nknees (where the time starts to grow)\n";
    for level in &r.levels {
        let line = match (level.knee_nops, level.knee_crossing_nops) {
            (Some(k), crossing) => {
                let mut s = format!("flat at {:.2} cycles, ", level.plateau_cycles);
                s += &match crossing {
                    Some(c) => format!(
                        "knee at N = {c:.1} (where the line past it meets the plateau; first point clearly above: N = {k})"
                    ),
                    None => format!("grows from N = {k}"),
                };
                if let Some(slope) = level.slope_cycles_per_nop {
                    s += &format!(", then {slope:.3} cycles per NOP");
                }
                if level.knees.len() > 1 {
                    let rest: Vec<String> = level.knees[1..].iter().map(u32::to_string).collect();
                    s += &format!("; steps again at N = {}", rest.join(", "));
                }
                s
            }
            (None, _) => format!(
                "flat at {:.2} cycles: no knee up to N = {}",
                level.plateau_cycles, r.nops_to
            ),
        };
        out += &format!("  {:<16} {line}\n", label(level));
    }
    let verdict = match r.reading.issue {
        Issue::SingleIssue => "single-issue, in order",
        Issue::MultiIssue => "multi-issue (out of order, or superscalar)",
        Issue::Undetermined => "undetermined",
    };
    out += &format!("\nreading: {verdict} (from {})\n", r.reading.from_level);
    out += &wrap(&r.reading.explanation, 88, "  ");
    out += &format!(
        "\n{:<22} {:>23} {:>14} {:>12} {:>12}\n{:<22} {:>7} {:>7} {:>7} {:>14} {:>12} {:>12}\n",
        "Data source",
        "load-to-use, cycles",
        "loop overhead",
        "throughput",
        "memlat run",
        "",
        "min",
        "avg",
        "max",
        "cycles",
        "MiB/s",
        "cycles/load"
    );
    for level in &r.levels {
        out += &format!(
            "{:<22} {:>7} {:>7.2} {:>7} {:>14.2} {:>12.0} {:>12}\n",
            label(level),
            opt(level.latency_min_cycles, 0),
            level.latency_cycles,
            opt(level.latency_max_cycles, 0),
            level.loop_overhead_cycles,
            level.throughput_mib_s,
            opt(level.run_cycles_per_load, 2),
        );
    }
    out += &wrap(
        &format!(
            "avg: plateau - 1 cycle for the add - loop overhead per iteration; min: first N where the time grows; max: N + 1 where the curve meets N + 2 cycles (min and max only on single-issue cores; '-' when not readable). Loop overhead: what one trip of a loop that is not unrolled (seed 003's) costs beyond its iteration, measured at the first level; memlat's kernels unroll {} iterations a trip and pay 1/{} of it. Throughput: one 8-byte load per avg latency at the core clock, seed 003's column. memlat run: the pointer chase at the same working set (median of its repeats).",
            r.unroll, r.unroll
        ),
        88,
        "",
    );
    out
}

/// One row per level and N, with a header.
pub fn csv(r: &LoaduseResult) -> String {
    let mut out = String::from(
        "level,size_bytes,nops,cycles_per_iteration,cycles_max,ns_per_iteration,passes,plateau_cycles,knee_nops,latency_cycles,loop_overhead_cycles,issue,cycle_source\n",
    );
    for level in &r.levels {
        for p in &level.points {
            let row = [
                level.name.clone(),
                level.size_bytes.to_string(),
                p.nops.to_string(),
                p.cycles_per_iteration.to_string(),
                p.cycles_max.to_string(),
                p.ns_per_iteration.to_string(),
                p.passes.len().to_string(),
                level.plateau_cycles.to_string(),
                level.knee_nops.map_or(String::new(), |k| k.to_string()),
                level.latency_cycles.to_string(),
                level.loop_overhead_cycles.to_string(),
                serde_json::to_value(r.reading.issue)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                r.cycle_source.clone(),
            ];
            out += &(row.iter().map(|f| field(f)).collect::<Vec<_>>().join(",") + "\n");
        }
    }
    out
}
