//! Cache kinds: the ways of each level (assoc), the line (linesize) and
//! the NUMA matrix.

use serde_json::Value;

use super::parts::{bytes, num};
use crate::experiments::numa::NumaResult;
use crate::output::table::{Cell, Table};
use crate::units::HumanBytes;

/// How a level's passes read together: every pass read the same ways,
/// none read any (no step to read: the notes say why), or they differ.
fn passes_verdict(level: &Value, readings: &[String]) -> &'static str {
    if level["agree"] == true {
        "agree"
    } else if readings.iter().all(|r| r == "-") {
        "none found"
    } else {
        "disagree"
    }
}

/// `memlat assoc`: the ways each level measured, beside the claimed ones.
pub(super) fn assoc_table(levels: &Value) -> Table {
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
        // A level not measured (its notes say why) has no passes or latencies.
        if readings.is_empty() {
            t.row(vec![
                l["name"].as_str().unwrap_or("-").into(),
                bytes(&l["size_bytes"]),
                num(&l["claimed_ways"], 0),
                bytes(&l["stride"]),
                "-".into(),
                "not measured".into(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        t.row(vec![
            l["name"].as_str().unwrap_or("-").into(),
            bytes(&l["size_bytes"]),
            num(&l["claimed_ways"], 0),
            bytes(&l["stride"]),
            num(&l["ways"], 0),
            format!("{} ({})", readings.join(", "), passes_verdict(l, &readings)).into(),
            num(&l["hit_ns"], 2),
            num(&l["miss_ns"], 2),
        ]);
    }
    t.note("ways: the reading every pass agrees on, - when they disagree or none found a step");
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
pub(super) fn linesize_table(v: &Value) -> Table {
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

/// `memlat numa`: ns from each node's CPU to each node's memory.
pub(super) fn numa_table(r: &NumaResult) -> Table {
    let mut header = vec!["from node (CPU)".to_string()];
    header.extend(r.nodes.iter().map(|n| format!("to node {n}")));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    for (i, row) in r.matrix_ns.iter().enumerate() {
        // A hand-made file may give fewer rows than the matrix has: `?`, not a panic.
        let at = |v: &[usize]| v.get(i).map_or("?".into(), usize::to_string);
        let mut cells: Vec<Cell> =
            vec![format!("{} (CPU {})", at(&r.from_nodes), at(&r.cpus)).into()];
        cells.extend(
            row.iter()
                .map(|v| v.map_or(Cell::from("-"), |ns| Cell::float(ns, 1))),
        );
        t.row(cells);
    }
    t.note(format!(
        "ns per load, random chain of {}",
        HumanBytes(r.size_bytes)
    ));
    t
}
