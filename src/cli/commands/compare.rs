//! `memlat compare`: results side by side (see [`crate::analysis::compare`]).

use anyhow::Result;
use serde::Serialize;

use crate::analysis::compare::{self, Condition, Found, Row};
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
    let found: Vec<Vec<Found>> = results
        .iter()
        .map(|r| compare::measurements(&r.value))
        .collect();
    if let Some((r, _)) = results.iter().zip(&found).find(|(_, f)| f.is_empty()) {
        return usage(format!(
            "{} ({}) holds no measurements with repeats to compare (compare takes run, quick, sweep and levels results)",
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
        super::notice(&format!("plot written to {}", path.display()));
    }
    let labels: Vec<&str> = results.iter().map(|r| r.label.as_str()).collect();
    let content = match args.format {
        Format::Json => crate::output::json(&CompareOutput {
            results: labels.clone(),
            conditions: &conditions,
            rows: &rows,
        })?,
        Format::Csv => rows_table(&labels, &rows).csv(),
        Format::Text => document(&labels, &conditions, &rows).text(),
        Format::Markdown => document(&labels, &conditions, &rows).markdown(),
    };
    output.write(&content)
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
    let mut c = Table::new(&["<condition", "<values", "<differs"]);
    for cond in conditions {
        c.row(vec![
            cond.what.clone().into(),
            cond.values.join(" | ").into(),
            if cond.differs { "DIFFERS" } else { "" }.into(),
        ]);
    }
    d.table(c);
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
