//! Each kind's presentation in the report: its headline (the figure the
//! command exists for: levels, ways, line size, load-use table, matrix,
//! compare rows), its charts, then its detail tables. One `match` on
//! [`Kind`] with no wildcard arm: a new kind does not compile until it says
//! how it is shown. The result was checked by [`crate::readback`] when read,
//! so the typed reads here fail only on a file that passed the checks and
//! still lacks a table's field; that loses the table (said among the
//! warnings), never the report.

use serde_json::Value;

use super::kinds::{self, Parts};
use crate::analysis::compare;
use crate::output::plot;
use crate::output::table::{Cell, Table};
use crate::readback::Kind;
use crate::units::HumanBytes;

/// What a result's section shows, in order.
#[derive(Default)]
pub(super) struct Presented {
    /// The kind's headline tables, first in its section.
    pub headline: Vec<Table>,
    /// The rest of the kind's parts: charts, detail tables, problems.
    pub parts: Parts,
}

/// The presentation of `value`, a result of `kind` labelled `label`.
pub(super) fn present(kind: Kind, label: &str, value: &Value) -> Presented {
    let mut out = Presented::default();
    let curve = |out: &mut Presented| {
        let found = compare::measurements(value);
        if found.len() >= 2 {
            out.parts.charts.push(plot::measurements::chart(
                &format!("{label}: ns per load"),
                &[(None, &found)],
                None,
            ));
        }
    };
    match kind {
        Kind::Run => {
            out.headline.push(run_table(value));
            let d = kinds::distribution(value);
            out.headline.extend(d.tables);
            out.parts.charts.extend(d.charts);
            out.parts.problems.extend(d.problems);
        }
        Kind::Quick => {
            out.headline.push(points_headline(&value["points"]));
            curve(&mut out);
        }
        Kind::Sweep => sweep(value, &mut out),
        Kind::Levels => {
            out.headline.push(levels_table(&value["levels"]));
            curve(&mut out);
        }
        Kind::Detect => {
            match serde_json::from_value::<crate::analysis::detect::Detection>(value.clone()) {
                Ok(d) => out.headline.push(crate::output::detect::levels_table(&d)),
                Err(e) => out.parts.problems.push(format!("levels not shown: {e}")),
            }
        }
        Kind::Assoc => out.headline.push(assoc_table(&value["levels"])),
        Kind::Linesize => out.headline.push(linesize_table(value)),
        Kind::Loaduse => loaduse(value, &mut out),
        Kind::Mlp
        | Kind::Tlb
        | Kind::Loaded
        | Kind::C2c
        | Kind::Doctor
        | Kind::Characterize
        | Kind::Watch => {
            let mut p = kinds::parts(kind, value);
            out.headline = std::mem::take(&mut p.tables);
            out.parts = p;
        }
        Kind::Numa => out.headline.push(numa_table(value)),
        Kind::Bandwidth => bandwidth(value, &mut out),
        Kind::Compare => out.headline.push(compare_table(value)),
        // A merged file is expanded into the results it holds when read.
        Kind::Merged => {}
    }
    out
}

fn num(v: &Value, digits: usize) -> Cell {
    v.as_f64()
        .map_or(Cell::from("-"), |x| Cell::float(x, digits))
}

fn bytes(v: &Value) -> Cell {
    v.as_u64()
        .map_or(Cell::from("-"), |b| HumanBytes(b).to_string().into())
}

/// A run's figures: size, pattern, ns and cycles per load (`-` where the
/// JSON has none), where cycles came from, repeats.
fn run_table(v: &Value) -> Table {
    let mut t = Table::new(&[
        "size",
        "<pattern",
        "ns per load",
        "cycles per load",
        "<cycles from",
        "repeats",
    ]);
    t.row(vec![
        bytes(&v["size"]),
        v["pattern"].as_str().unwrap_or("-").into(),
        num(&v["ns_per_load"]["median"], 2),
        num(&v["cycles_per_load"]["median"], 2),
        v["cycle_source"].as_str().unwrap_or("-").into(),
        v["samples"]
            .as_array()
            .map_or(Cell::from("-"), |s| (s.len() as u64).into()),
    ]);
    t
}

/// The quick table's rows: size, ns and cycles per load, repeats each used.
fn points_headline(points: &Value) -> Table {
    let mut t = Table::new(&["size", "ns per load", "cycles per load", "repeats"]);
    for p in points.as_array().into_iter().flatten() {
        t.row(vec![
            bytes(&p["size"]),
            num(&p["ns_per_load"]["median"], 2),
            num(&p["cycles_per_load"]["median"], 2),
            p["samples"]
                .as_array()
                .map_or(Cell::from("-"), |s| (s.len() as u64).into()),
        ]);
    }
    t
}

/// `memlat levels`: each level's size and median ns and cycles.
fn levels_table(levels: &Value) -> Table {
    let mut t = Table::new(&[
        "<level",
        "size",
        "ns per load",
        "cycles per load",
        "iterations",
    ]);
    for l in levels.as_array().into_iter().flatten() {
        t.row(vec![
            l["level"].as_str().unwrap_or("-").into(),
            bytes(&l["size"]),
            num(&l["ns"]["median"], 2),
            num(&l["cycles"]["median"], 2),
            num(&l["iterations"], 0),
        ]);
    }
    t
}

/// `memlat assoc`: the ways each level measured, beside the claimed ones.
fn assoc_table(levels: &Value) -> Table {
    let mut t = Table::new(&[
        "<level",
        "size",
        "claimed ways",
        "stride",
        "ways",
        "<passes",
        "hit ns",
        "miss ns",
    ]);
    for l in levels.as_array().into_iter().flatten() {
        let readings: Vec<String> = l["readings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r.as_u64().map_or("-".into(), |w| w.to_string()))
            .collect();
        t.row(vec![
            l["name"].as_str().unwrap_or("-").into(),
            bytes(&l["size_bytes"]),
            num(&l["claimed_ways"], 0),
            bytes(&l["stride"]),
            num(&l["ways"], 0),
            format!(
                "{} ({})",
                readings.join(", "),
                if l["agree"] == true {
                    "agree"
                } else {
                    "disagree"
                }
            )
            .into(),
            num(&l["hit_ns"], 2),
            num(&l["miss_ns"], 2),
        ]);
    }
    t.note("ways: the reading every pass agrees on, - when they disagree");
    // Each level's notes under the table, named, rather than unnamed below.
    for l in levels.as_array().into_iter().flatten() {
        let name = l["name"].as_str().unwrap_or("-");
        for n in l["notes"].as_array().into_iter().flatten() {
            if let Some(n) = n.as_str() {
                t.note(format!("{name}: {n}"));
            }
        }
    }
    t
}

/// `memlat linesize`: the line and the unit fetched, each pass's reading.
fn linesize_table(v: &Value) -> Table {
    let mut t = Table::new(&["<figure", "<value"]);
    let pass_list = |field: &str| -> String {
        v["readings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r[field].as_u64().map_or("-".into(), |b| b.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let agreed = |field: &str, agree: &str| -> String {
        match v[field].as_u64() {
            Some(b) => format!("{b} bytes"),
            None if v[agree] == false => "passes disagree".into(),
            None => "no step seen".into(),
        }
    };
    t.row(vec!["line".into(), agreed("line_bytes", "agree").into()]);
    t.row(vec![
        "unit fetched".into(),
        agreed("fetch_bytes", "fetch_agree").into(),
    ]);
    t.row(vec!["line by pass".into(), pass_list("line_bytes").into()]);
    t.row(vec![
        "claimed line".into(),
        v["claimed_line_bytes"]
            .as_u64()
            .map_or("-".into(), |b| format!("{b} bytes"))
            .into(),
    ]);
    t.row(vec!["measured in".into(), bytes(&v["size"])]);
    t
}

/// `memlat loaduse`: seed 003's load-to-use table first, then the curve.
fn loaduse(value: &Value, out: &mut Presented) {
    use crate::experiments::loaduse::{render, report::LoaduseResult};
    match serde_json::from_value::<LoaduseResult>(value.clone()) {
        Ok(r) => {
            out.headline.push(render::seed_table(&r));
            out.parts.charts.push(plot::loaduse::chart(&r));
        }
        Err(e) => out
            .parts
            .problems
            .push(format!("load-use table not shown: {e}")),
    }
}

/// `memlat numa`: ns from each node's CPUs to each node's memory.
fn numa_table(v: &Value) -> Table {
    let nodes: Vec<String> = v["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| format!("to node {n}"))
        .collect();
    let mut columns = vec!["<from".to_string()];
    columns.extend(nodes);
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new(&columns);
    let from = v["from_nodes"].as_array().cloned().unwrap_or_default();
    for (k, row) in v["matrix_ns"].as_array().into_iter().flatten().enumerate() {
        let mut cells = vec![Cell::from(format!(
            "node {}",
            from.get(k).map_or("?".into(), Value::to_string)
        ))];
        cells.extend(row.as_array().into_iter().flatten().map(|x| num(x, 1)));
        cells.resize(columns.len(), Cell::from("-"));
        t.row(cells);
    }
    t.note(format!(
        "ns per load, random chain of {}",
        v["size_bytes"]
            .as_u64()
            .map_or("-".into(), |b| HumanBytes(b).to_string())
    ));
    t
}

/// `memlat compare --format json`: each shared point's ratio, last over
/// first, with its interval (latency) or bounds (bandwidth).
fn compare_table(v: &Value) -> Table {
    let labels: Vec<String> = v["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r.as_str().unwrap_or("?").to_string())
        .collect();
    let bandwidth = v["matched_by"].is_string();
    let mut columns = vec!["<point".to_string()];
    if bandwidth {
        columns.push("<op".into());
    }
    columns.extend(labels.iter().cloned());
    columns.extend(["ratio".into(), "low".into(), "high".into()]);
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new(&columns);
    let mut row = |key: &Value, op: Option<&Value>, item: &Value, low: &str, high: &str| {
        let mut cells = vec![Cell::from(key.as_str().unwrap_or("?").to_string())];
        if let Some(op) = op {
            cells.push(op.as_str().unwrap_or("?").into());
        }
        let values: Vec<Cell> = item["values"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| num(x, 2))
            .collect();
        cells.extend(values);
        cells.resize(columns.len() - 3, Cell::from("-"));
        cells.extend([
            num(&item["ratio"], 3),
            num(&item[low], 3),
            num(&item[high], 3),
        ]);
        t.row(cells);
    };
    for r in v["rows"].as_array().into_iter().flatten() {
        if bandwidth {
            for op in r["ops"].as_array().into_iter().flatten() {
                row(&r["key"], Some(&op["op"]), op, "low", "high");
            }
        } else {
            row(&r["key"], None, r, "ci_low", "ci_high");
        }
    }
    t.note(if bandwidth {
        "GB/s; ratio: last over first; low..high: bounds from the samples' min and max, not a confidence interval"
    } else {
        "ns per load; ratio: last over first, with its bootstrap interval"
    });
    t
}

/// A sweep: its detected levels, then its charts and every point (folded).
fn sweep(value: &Value, out: &mut Presented) {
    match serde_json::from_value::<crate::experiments::sweep::SweepResult>(value.clone()) {
        Ok(s) => {
            if let Some(d) = s.detection.clone().or_else(|| s.detect()) {
                out.headline.push(crate::output::detect::levels_table(&d));
            }
            out.parts.charts.extend(plot::sweep::charts(
                &s,
                &plot::sweep::Metric::defaults(&s),
                true,
            ));
        }
        Err(e) => out.parts.problems.push(format!("sweep not drawn: {e}")),
    }
}

/// Bandwidth: GB/s by level (or size) and threads, and its chart.
fn bandwidth(value: &Value, out: &mut Presented) {
    use crate::experiments::bandwidth::{BandwidthPoint, SweepInfo};
    let points: Vec<BandwidthPoint> = match serde_json::from_value(value["points"].clone()) {
        Ok(p) => p,
        Err(e) => {
            out.parts.problems.push(format!("bandwidth not shown: {e}"));
            return;
        }
    };
    let mut table = crate::experiments::bandwidth::table(&points);
    let kernel = value["isa_kernel"].as_str().unwrap_or("?");
    // A sweep's plateaus label its rows and shade its chart (older files have none).
    let sweep: Option<SweepInfo> = serde_json::from_value(value["sweep"].clone()).ok();
    if let Some(s) = &sweep {
        table.note(s.describe());
    }
    out.headline.push(table);
    if !points.is_empty() {
        out.parts.charts.push(plot::bandwidth::chart(
            &points,
            kernel,
            sweep.as_ref().map(|s| &s.plateaus),
        ));
    }
}
