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
use crate::output::present;
use crate::readback::Kind;

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
    let found: Vec<Vec<Found>> = results.iter().map(Loaded::measurements).collect();
    if let Some((r, _)) = results.iter().zip(&found).find(|(_, f)| f.is_empty()) {
        return usage(format!(
            "{} ({}) holds no measurements with repeats to compare (compare takes run, quick, sweep, levels and bandwidth results)",
            r.path.display(),
            r.kind
        ));
    }
    let values: Vec<_> = results
        .iter()
        .map(|r| crate::readback::condition_view(&r.value, r.sweep.as_deref()))
        .collect();
    let conditions = compare::conditions(&values);
    drop(values);
    let rows = compare::rows(&found);
    if rows.is_empty() {
        return usage("the results share no point (same series and size): nothing to compare");
    }
    if let Some(path) = &args.plot {
        crate::output::plot::line_chart(path, &overlay(&results, &found))?;
        crate::cli::common::notice(&format!("plot written to {}", path.display()));
    }
    let labels: Vec<&str> = results.iter().map(|r| r.label.as_str()).collect();
    // JSON is written from the result, text and markdown from its JSON value.
    let out = CompareOutput {
        results: labels.clone(),
        conditions: &conditions,
        rows: &rows,
    };
    let value = serde_json::to_value(&out)?;
    let title = format!("memlat compare: {}", labels.join(" vs "));
    let content = match args.format {
        Format::Json => crate::output::result_json("compare", &out)?,
        Format::Csv => present::compare_rows_table(&labels, &rows).csv(),
        Format::Text => document(title, &value)?.text(),
        Format::Markdown => document(title, &value)?.markdown(),
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
    let values: Vec<&serde_json::Value> = results.iter().map(|r| &r.value).collect();
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
    // JSON is written from the result, text and markdown from its JSON value.
    let out = BandwidthCompareOutput {
        results: labels.clone(),
        conditions: &conditions,
        matched_by: by,
        bounds: BOUNDS,
        rows: &rows,
    };
    let value = serde_json::to_value(&out)?;
    let title = format!("memlat compare (bandwidth): {}", labels.join(" vs "));
    let content = match args.format {
        Format::Json => crate::output::result_json("compare", &out)?,
        Format::Csv => present::compare_bandwidth_table(&labels, &rows, true).csv(),
        Format::Text => document(title, &value)?.text(),
        Format::Markdown => document(title, &value)?.markdown(),
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

/// The title, then the headline: conditions and rows.
fn document(title: String, value: &serde_json::Value) -> Result<Document> {
    let mut d = Document::new(title);
    for t in present::headline(Kind::Compare, value)? {
        d.table(t);
    }
    Ok(d)
}
