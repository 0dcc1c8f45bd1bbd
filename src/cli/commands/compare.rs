//! `memlat compare`: results side by side (see [`crate::analysis::compare`],
//! and [`crate::analysis::compare_bandwidth`] for bandwidth results).

use anyhow::Result;
use serde::Serialize;

use crate::analysis::compare::{self, Condition, Found, Row};
use crate::analysis::compare_bandwidth::{self as bw, BandwidthRow, BwFound, MatchBy};
use crate::cli::files::Output;
use crate::cli::inputs::{self, Loaded};
use crate::cli::{CompareArgs, Format};
use crate::error::usage;
use crate::output::document::Document;
use crate::output::plot::Chart;
use crate::output::table::{Cell, Table};

/// What `memlat compare --format json` prints.
#[derive(Serialize)]
struct CompareOutput<'a> {
    /// The results, in order (the first is the reference).
    results: Vec<&'a str>,
    /// Each condition's value per result, differing ones first.
    conditions: &'a [Condition],
    /// The shared points.
    rows: &'a [Row],
}

/// Runs `memlat compare`.
pub fn run(args: &CompareArgs) -> Result<()> {
    crate::cli::files::check_inputs_and_outputs(
        &args.results,
        args.output.as_deref(),
        args.plot.as_deref(),
    )?;
    let output = Output::create(args.output.as_deref())?;
    let results = inputs::load(&args.results)?;
    if results.len() < 2 {
        return usage(
            "give at least two results to compare (a merged file counts as the results it holds)",
        );
    }
    if results.iter().all(|r| r.kind == "watch") {
        return super::watch::compare(args, &results, output);
    }
    let bandwidth = results
        .iter()
        .filter(|r| bw::is_bandwidth(&r.value))
        .count();
    if bandwidth == results.len() {
        return run_bandwidth(args, &results, output);
    }
    if bandwidth > 0 {
        let (b, l) = (
            results.iter().find(|r| bw::is_bandwidth(&r.value)),
            results.iter().find(|r| !bw::is_bandwidth(&r.value)),
        );
        if let (Some(b), Some(l)) = (b, l) {
            return usage(format!(
                "{} is a bandwidth result and {} a {} result: give results of one kind (bandwidth with bandwidth, latency with latency)",
                b.path.display(),
                l.path.display(),
                l.kind
            ));
        }
    }
    let found: Vec<Vec<Found>> = results
        .iter()
        .map(|r| compare::measurements(&r.value))
        .collect();
    if let Some((r, _)) = results.iter().zip(&found).find(|(_, f)| f.is_empty()) {
        return usage(format!(
            "{} ({}) holds no measurements with repeats to compare (compare takes run, quick, sweep, levels and bandwidth results)",
            r.path.display(),
            r.kind
        ));
    }
    let values: Vec<serde_json::Value> = results.iter().map(|r| r.value.clone()).collect();
    let conditions = compare::conditions(&values);
    let rows = compare::rows(&found);
    if rows.is_empty() {
        return usage("the results share no point (same series and size): nothing to compare");
    }
    if let Some(path) = &args.plot {
        crate::output::plot::line_chart(path, &overlay(&results, &found))?;
        crate::cli::common::notice(&format!("plot written to {}", path.display()));
    }
    let labels: Vec<&str> = results.iter().map(|r| r.label.as_str()).collect();
    let content = match args.format {
        Format::Json => crate::output::result_json(
            "compare",
            &CompareOutput {
                results: labels.clone(),
                conditions: &conditions,
                rows: &rows,
            },
        )?,
        Format::Csv => rows_table(&labels, &rows).csv(),
        Format::Text => document(&labels, &conditions, &rows).text(),
        Format::Markdown => document(&labels, &conditions, &rows).markdown(),
    };
    output.write(&content)
}

/// What `memlat compare --format json` prints for bandwidth results.
#[derive(Serialize)]
struct BandwidthCompareOutput<'a> {
    /// The results, in order (the first is the reference).
    results: Vec<&'a str>,
    /// Each condition's value per result, differing ones first.
    conditions: &'a [Condition],
    /// How points were matched: by `level` and threads, or by `size` and threads.
    matched_by: MatchBy,
    /// What the bounds of each ratio are.
    bounds: &'static str,
    /// The shared points.
    rows: &'a [BandwidthRow],
}

const BOUNDS: &str = "low..high: the last result's slowest sample over the first's fastest, and its fastest over the first's slowest (from each figure's min and max); every sample-to-sample ratio lies within; not a confidence interval";

/// `memlat compare` on bandwidth results: ratios per level (or size) and thread count.
fn run_bandwidth(args: &CompareArgs, results: &[Loaded], output: Output) -> Result<()> {
    let found: Vec<Vec<BwFound>> = results.iter().map(|r| bw::points(&r.value)).collect();
    if let Some((r, _)) = results.iter().zip(&found).find(|(_, f)| f.is_empty()) {
        return usage(format!(
            "{} holds no bandwidth points to compare",
            r.path.display()
        ));
    }
    let values: Vec<serde_json::Value> = results.iter().map(|r| r.value.clone()).collect();
    let by = bw::match_by(&values);
    let rows = bw::rows(&found, by);
    if rows.is_empty() {
        return usage(match by {
            MatchBy::Level => {
                "the bandwidth results share no point (same level and thread count): nothing to compare"
            }
            MatchBy::Size => {
                "the bandwidth results share no point (a sweep is matched by size and thread count: give sweeps of the same --from, --to and --per-octave)"
            }
        });
    }
    let conditions = bw::conditions(&values);
    if let Some(path) = &args.plot {
        crate::output::plot::line_chart(path, &bandwidth_overlay(results, &found))?;
        crate::cli::common::notice(&format!("plot written to {}", path.display()));
    }
    let labels: Vec<&str> = results.iter().map(|r| r.label.as_str()).collect();
    let content = match args.format {
        Format::Json => crate::output::result_json(
            "compare",
            &BandwidthCompareOutput {
                results: labels.clone(),
                conditions: &conditions,
                matched_by: by,
                bounds: BOUNDS,
                rows: &rows,
            },
        )?,
        Format::Csv => bandwidth_table(&labels, &rows, true).csv(),
        Format::Text => bandwidth_document(&labels, &conditions, &rows, by).text(),
        Format::Markdown => bandwidth_document(&labels, &conditions, &rows, by).markdown(),
    };
    output.write(&content)
}

/// Read GB/s by size, a line per result and thread count.
fn bandwidth_overlay(results: &[Loaded], found: &[Vec<BwFound>]) -> Chart {
    let mut series = Vec::new();
    for (r, points) in results.iter().zip(found) {
        let mut threads: Vec<usize> = points.iter().map(|p| p.threads).collect();
        threads.sort_unstable();
        threads.dedup();
        for t in threads {
            series.push(crate::output::plot::Series {
                label: format!("{}: read, {t} thread(s)", r.label),
                points: points
                    .iter()
                    .filter(|p| p.threads == t)
                    .filter_map(|p| p.figures[0].map(|f| (p.size as f64, f.median)))
                    .collect(),
            });
        }
    }
    Chart {
        title: "memlat compare: read bandwidth by working-set size".into(),
        x_label: "buffer per thread".into(),
        y_label: "read GB/s (all threads)".into(),
        x_log: true,
        x_bytes: true,
        y_log: true,
        series,
        footnote: Some("median of each figure's samples".into()),
        ..Chart::default()
    }
}

/// The shared points: one row per point and thread count, each operation's
/// ratio with its bounds (in one cell for reading, in three columns for CSV).
fn bandwidth_table(labels: &[&str], rows: &[BandwidthRow], csv: bool) -> Table {
    let mut ops: Vec<&str> = Vec::new();
    for r in rows {
        for o in &r.ops {
            if !ops.contains(&o.op.as_str()) {
                ops.push(&o.op);
            }
        }
    }
    let mut header: Vec<String> = vec!["<point".into(), "<level".into(), "threads".into()];
    header.extend(labels.iter().map(|l| format!("{l} read GB/s")));
    for op in &ops {
        if csv {
            header.extend([
                format!("{op} last/first"),
                format!("{op} low"),
                format!("{op} high"),
                format!("{op} apart"),
            ]);
        } else {
            header.push(format!("{op} last/first [bounds]"));
        }
    }
    header.push("<apart".into());
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    for r in rows {
        let mut levels = r.levels.clone();
        levels.dedup();
        let mut cells: Vec<Cell> = vec![
            r.key.clone().into(),
            levels.join("|").into(),
            (r.threads as u64).into(),
        ];
        let read = r.ops.iter().find(|o| o.op == "read");
        for k in 0..labels.len() {
            cells.push(Cell::opt(read.map(|o| o.values[k]), 1));
        }
        for op in &ops {
            let o = r.ops.iter().find(|o| o.op == *op);
            if csv {
                cells.push(Cell::opt(o.map(|o| o.ratio), 3));
                cells.push(Cell::opt(o.and_then(|o| o.low), 3));
                cells.push(Cell::opt(o.and_then(|o| o.high), 3));
                cells.push(match o {
                    Some(o) if o.apart => "yes".into(),
                    Some(_) => "no".into(),
                    None => "".into(),
                });
            } else {
                cells.push(match o {
                    None => "-".into(),
                    Some(o) => match (o.low, o.high) {
                        (Some(low), Some(high)) => {
                            format!("{:.3} [{low:.2}..{high:.2}]", o.ratio).into()
                        }
                        _ => format!("{:.3}", o.ratio).into(),
                    },
                });
            }
        }
        let apart: Vec<&str> = r
            .ops
            .iter()
            .filter(|o| o.apart)
            .map(|o| o.op.as_str())
            .collect();
        cells.push(apart.join(", ").into());
        t.row(cells);
    }
    t
}

fn bandwidth_document(
    labels: &[&str],
    conditions: &[Condition],
    rows: &[BandwidthRow],
    by: MatchBy,
) -> Document {
    let mut d = Document::new(format!(
        "memlat compare (bandwidth): {}",
        labels.join(" vs ")
    ));
    d.table(conditions_table(conditions));
    let mut t = bandwidth_table(labels, rows, false);
    let apart = rows
        .iter()
        .filter(|r| r.ops.iter().any(|o| o.apart))
        .count();
    t.note(format!(
        "points matched by {} and thread count; last/first: the ratio of median GB/s",
        match by {
            MatchBy::Level => "level",
            MatchBy::Size => "size (sweeps)",
        }
    ));
    t.note(format!("bounds {BOUNDS}"));
    t.note(format!(
        "{apart} of {} shared points have an operation apart: its bounds leave out 1 and the ratio is beyond {:.0}%",
        rows.len(),
        compare::NOISE * 100.0
    ));
    d.table(t);
    d
}

/// Every result's lines on one log-log chart.
fn overlay(results: &[Loaded], found: &[Vec<Found>]) -> Chart {
    let sets: Vec<(Option<&str>, &[Found])> = results
        .iter()
        .zip(found)
        .map(|(r, f)| (Some(r.label.as_str()), f.as_slice()))
        .collect();
    crate::output::plot::measurements::chart(
        "memlat compare: ns per load by working-set size",
        &sets,
        Some("median of each point's repeats".into()),
    )
}

fn rows_table(labels: &[&str], rows: &[Row]) -> Table {
    let mut header: Vec<String> = vec!["<point".into()];
    header.extend(labels.iter().map(|l| format!("{l} ns")));
    header.extend(["last/first".into(), "95% CI".into(), "significant".into()]);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    for r in rows {
        let mut cells: Vec<Cell> = vec![r.key.clone().into()];
        cells.extend(r.values.iter().map(|v| Cell::float(*v, 2)));
        cells.push(Cell::float(r.ratio, 3));
        cells.push(match (r.ci_low, r.ci_high) {
            (Some(low), Some(high)) => format!("{low:.3}..{high:.3}").into(),
            _ => "too few repeats".into(),
        });
        cells.push(if r.significant { "yes" } else { "no" }.into());
        t.row(cells);
    }
    t
}

fn document(labels: &[&str], conditions: &[Condition], rows: &[Row]) -> Document {
    let mut d = Document::new(format!("memlat compare: {}", labels.join(" vs ")));
    d.table(conditions_table(conditions));
    let mut t = rows_table(labels, rows);
    let called = rows.iter().filter(|r| r.significant).count();
    t.note(format!(
        "{called} of {} shared points differ significantly: the 95% bootstrap interval of the ratio of medians leaves out 1 and the ratio is beyond {:.0}%",
        rows.len(),
        compare::NOISE * 100.0
    ));
    d.table(t);
    d
}

fn conditions_table(conditions: &[Condition]) -> Table {
    let mut c = Table::new(&["<condition", "<values", "<differs"]);
    for cond in conditions {
        c.row(vec![
            cond.what.clone().into(),
            cond.values.join(" | ").into(),
            if cond.differs { "DIFFERS" } else { "" }.into(),
        ]);
    }
    c
}
