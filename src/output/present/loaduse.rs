//! `memlat loaduse` as text (the curve, the knees, the reading and seed 003's
//! processed table), as CSV (one row per level and N) and as a chart.

use crate::analysis::knee::Issue;
use crate::experiments::loaduse::report::{LevelResult, LoaduseResult};
use crate::output::document::Document;
use crate::output::table::{Cell, Table};
use crate::units::HumanBytes;

/// `L2 1.5 MiB`, or just the size when the level is named by it.
pub fn label(level: &LevelResult) -> String {
    let size = HumanBytes(level.size_bytes).to_string();
    if level.name == size {
        size
    } else {
        format!("{} {size}", level.name)
    }
}

/// The report as a document: the curve, the knees, the reading and seed
/// 003's table, which is loaduse's headline (`headline`: made from the
/// result's JSON value by [`super::headline`]).
pub fn document(r: &LoaduseResult, headline: Vec<Table>) -> Document {
    let mut d = Document::new(format!("memlat loaduse (seed 003): {}", r.experiment));
    d.line(format!(
        "{} chain, {}-byte nodes, {} iterations a loop trip, fastest of {} passes, CPU {}, cycles: {}",
        r.pattern, r.line, r.unroll, r.passes, r.cpu, r.cycle_source
    ));
    d.heading("cycles per iteration");
    d.table(curve_table(r));
    d.heading("knees (where the time starts to grow)");
    d.lines(
        r.levels
            .iter()
            .map(|l| format!("{}: {}", label(l), knee_line(l, r.nops_to)))
            .collect(),
    );
    let verdict = match r.reading.issue {
        Issue::SingleIssue => "single-issue, in order",
        Issue::MultiIssue => "multi-issue (out of order, or superscalar)",
        Issue::Undetermined => "undetermined",
    };
    d.heading(format!(
        "reading: {verdict} (from {})",
        r.reading.from_level
    ));
    d.line(r.reading.explanation.clone());
    d.heading("seed 003's table (load-to-use, cycles: min, avg, max)");
    for t in headline {
        d.table(t);
    }
    d
}

/// Cycles per iteration: one row per N, one column per level.
fn curve_table(r: &LoaduseResult) -> Table {
    let labels: Vec<String> = r.levels.iter().map(label).collect();
    let mut columns = vec!["N".to_string()];
    columns.extend(labels);
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new(&names);
    let rows = r.levels.iter().map(|l| l.points.len()).max().unwrap_or(0);
    for i in 0..rows {
        let nops = r.levels[0].points.get(i).map_or(0, |p| p.nops);
        let mut row = vec![u64::from(nops).into()];
        row.extend(
            r.levels
                .iter()
                .map(|l| Cell::opt(l.points.get(i).map(|p| p.cycles_per_iteration), 2)),
        );
        t.row(row);
    }
    t
}

fn knee_line(level: &LevelResult, last: u32) -> String {
    match (level.knee_nops, level.knee_crossing_nops) {
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
            "flat at {:.2} cycles: no knee up to N = {last}",
            level.plateau_cycles
        ),
    }
}

/// Seed 003's processed table: load-to-use min / avg / max, loop overhead,
/// throughput, and `memlat run`'s chase beside.
pub fn seed_table(r: &LoaduseResult) -> Table {
    let mut t = Table::new(&[
        "<data source",
        "min",
        "avg",
        "max",
        "loop overhead cycles",
        "throughput MiB/s",
        "memlat run cycles/load",
    ]);
    for level in &r.levels {
        t.row(vec![
            label(level).into(),
            Cell::opt(level.latency_min_cycles, 0),
            Cell::float(level.latency_cycles, 2),
            Cell::opt(level.latency_max_cycles, 0),
            Cell::float(level.loop_overhead_cycles, 2),
            Cell::float(level.throughput_mib_s, 0),
            Cell::opt(level.run_cycles_per_load, 2),
        ]);
    }
    t.note(format!(
        "avg: plateau - 1 cycle for the add - loop overhead per iteration; min: first N where the time grows; max: N + 1 where the curve meets N + 2 cycles (min and max only on single-issue cores; '-' when not readable). Loop overhead: what one trip of a loop that is not unrolled (seed 003's) costs beyond its iteration, measured at the first level; memlat's kernels unroll {} iterations a trip and pay 1/{} of it. Throughput: one 8-byte load per avg latency at the core clock, seed 003's column. memlat run: the pointer chase at the same working set (median of its repeats).",
        r.unroll, r.unroll
    ));
    t
}

/// One row per level and N, with a header.
pub fn csv(r: &LoaduseResult) -> String {
    let mut t = Table::new(&[
        "<level",
        "size_bytes",
        "nops",
        "cycles_per_iteration",
        "cycles_max",
        "ns_per_iteration",
        "passes",
        "plateau_cycles",
        "knee_nops",
        "latency_cycles",
        "loop_overhead_cycles",
        "<issue",
        "<cycle_source",
    ]);
    let issue = serde_json::to_value(r.reading.issue)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    for level in &r.levels {
        for p in &level.points {
            t.row(vec![
                level.name.clone().into(),
                level.size_bytes.into(),
                u64::from(p.nops).into(),
                Cell::float(p.cycles_per_iteration, 6),
                Cell::float(p.cycles_max, 6),
                Cell::float(p.ns_per_iteration, 6),
                p.passes.len().into(),
                Cell::float(level.plateau_cycles, 6),
                level
                    .knee_nops
                    .map_or(Cell::Missing, |k| u64::from(k).into()),
                Cell::float(level.latency_cycles, 6),
                Cell::float(level.loop_overhead_cycles, 6),
                issue.clone().into(),
                r.cycle_source.clone().into(),
            ]);
        }
    }
    t.csv()
}
