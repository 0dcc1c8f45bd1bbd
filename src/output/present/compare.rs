//! compare's headline: the conditions each result was measured under,
//! then each shared point's ratio, last over first (with its bootstrap
//! interval for latency, its bounds for bandwidth).

use serde_json::Value;

use super::parts::read;
use crate::analysis::compare::{self, Condition, Row};
use crate::analysis::compare_bandwidth::{BandwidthRow, MatchBy};
use crate::output::table::{Cell, Table};

/// The conditions table, then the rows with what their ratios mean.
pub(super) fn headline(value: &Value, problems: &mut Vec<String>) -> Vec<Table> {
    let (Some(labels), Some(conditions)) = (
        read::<Vec<String>>(&value["results"], "compare results", problems),
        read::<Vec<Condition>>(&value["conditions"], "compare conditions", problems),
    ) else {
        return Vec::new();
    };
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let mut out = vec![conditions_table(&conditions)];
    if value["matched_by"].is_string() {
        let by = read::<MatchBy>(&value["matched_by"], "compare matched_by", problems);
        let rows = read::<Vec<BandwidthRow>>(&value["rows"], "compare rows", problems);
        if let (Some(by), Some(rows)) = (by, rows) {
            out.push(bandwidth_rows(&labels, &rows, by, value["bounds"].as_str()));
        }
    } else if let Some(rows) = read::<Vec<Row>>(&value["rows"], "compare rows", problems) {
        let mut t = compare_rows_table(&labels, &rows);
        let called = rows.iter().filter(|r| r.significant).count();
        t.note(format!(
            "{called} of {} shared points differ significantly: the 95% bootstrap interval of the ratio of medians leaves out 1 and the ratio is beyond {:.0}%",
            rows.len(),
            compare::NOISE * 100.0
        ));
        out.push(t);
    }
    out
}

/// Bandwidth rows with how they were matched and what their bounds are.
fn bandwidth_rows(
    labels: &[&str],
    rows: &[BandwidthRow],
    by: MatchBy,
    bounds: Option<&str>,
) -> Table {
    let mut t = compare_bandwidth_table(labels, rows, false);
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
    if let Some(bounds) = bounds {
        t.note(format!("bounds {bounds}"));
    }
    t.note(format!(
        "{apart} of {} shared points have an operation apart: its bounds leave out 1 and the ratio is beyond {:.0}%",
        rows.len(),
        compare::NOISE * 100.0
    ));
    t
}

/// The shared points: one row per point and thread count, each operation's
/// ratio with its bounds (in one cell for reading, in three columns for CSV).
pub fn compare_bandwidth_table(labels: &[&str], rows: &[BandwidthRow], csv: bool) -> Table {
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

/// The shared points of latency results: each result's ns, the ratio of
/// the last over the first with its interval, and whether it differs.
pub fn compare_rows_table(labels: &[&str], rows: &[Row]) -> Table {
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

/// Each condition's value per result, `DIFFERS` where they differ.
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
