//! The report's parts for kinds that have a chart or a table of their own:
//! mlp, tlb and loaded (line charts, as their `--plot`), c2c (a heatmap per
//! method), doctor (its findings) and characterize (its stages). Each reads
//! the JSON back into the type its command wrote; a file that does not read
//! loses its chart, with the reason among the warnings, never the report.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::experiments::c2c::C2cMatrix;
use crate::experiments::loaded::LoadedResult;
use crate::experiments::mlp::MlpLevel;
use crate::experiments::tlb::TlbPageResult;
use crate::output::plot::heatmap::Heatmap;
use crate::output::plot::{self, Chart};
use crate::output::table::{Cell, Table};
use crate::readback::Kind;
use crate::units::HumanBytes;

/// What a kind adds to its section.
#[derive(Default)]
pub(super) struct Parts {
    pub tables: Vec<Table>,
    pub charts: Vec<Chart>,
    pub heatmaps: Vec<Heatmap>,
    /// Why a chart or table is missing.
    pub problems: Vec<String>,
}

/// The parts of a result of `kind` (nothing for kinds that
/// `headline.rs` presents itself).
pub(super) fn parts(kind: Kind, value: &Value) -> Parts {
    let mut p = Parts::default();
    match kind {
        Kind::Mlp => {
            if let Some(levels) = read::<Vec<MlpLevel>>(&value["levels"], "mlp levels", &mut p) {
                let cpu = value["cpu"].as_u64().unwrap_or(0) as usize;
                p.tables.push(mlp_table(&levels));
                if levels.iter().any(|l| !l.points.is_empty()) {
                    p.charts.push(plot::mlp::chart(&levels, cpu));
                }
            }
        }
        Kind::Tlb => {
            let pages = read::<Vec<TlbPageResult>>(&value["page_bytes"], "tlb pages", &mut p);
            if let Some(results) = pages {
                for r in &results {
                    let mut t = crate::cli::commands::tlb::levels_table(r);
                    // Its notes are the result's, which the section lists as warnings.
                    t.notes.retain(|n| !n.starts_with("note: "));
                    t.note(format!("{} pages", HumanBytes(r.page_bytes)));
                    p.tables.push(t);
                }
                if results.iter().any(|r| !r.points.is_empty()) {
                    p.charts.push(plot::tlb::chart(&results));
                }
            }
        }
        Kind::Loaded => {
            if let Some(r) = read::<LoadedResult>(value, "loaded result", &mut p) {
                p.tables.push(crate::cli::commands::loaded::table(&r));
                if !r.points.is_empty() {
                    p.charts.push(plot::loaded::chart(&r));
                }
            }
        }
        Kind::C2c => {
            if let Some(methods) = read::<Vec<C2cMatrix>>(&value["methods"], "c2c methods", &mut p)
            {
                p.tables.push(c2c_table(&methods));
                p.heatmaps.extend(
                    methods
                        .iter()
                        .filter(|m| m.pairs_measured > 0)
                        .map(crate::cli::commands::c2c::heatmap_of),
                );
            }
        }
        Kind::Doctor => p.tables.push(rows_of(
            &value["findings"],
            &["<what", "<value", "<meaning"],
            &["what", "value", "meaning"],
        )),
        Kind::Characterize => p.tables.push(rows_of(
            &value["stages"],
            &["<stage", "<status", "seconds", "<file", "<why"],
            &["name", "status", "seconds", "file", "why"],
        )),
        Kind::Watch => {
            if let Some(file) = read::<crate::experiments::watch::WatchFile>(value, "watch", &mut p)
            {
                let summary = file.summary();
                p.tables.push(crate::output::watch::summary_table(&summary));
                p.tables.push(crate::output::watch::event_table(&summary));
                p.charts.extend(plot::watch::charts(&file, &summary));
            }
        }
        Kind::Run
        | Kind::Quick
        | Kind::Sweep
        | Kind::Levels
        | Kind::Detect
        | Kind::Assoc
        | Kind::Linesize
        | Kind::Loaduse
        | Kind::Numa
        | Kind::Bandwidth
        | Kind::Merged
        | Kind::Compare => {}
    }
    p
}

/// `value` as a `T`, or a problem noted.
fn read<T: DeserializeOwned>(value: &Value, what: &str, parts: &mut Parts) -> Option<T> {
    serde_json::from_value(value.clone())
        .map_err(|e| parts.problems.push(format!("{what} not drawn: {e}")))
        .ok()
}

/// Level, size, where throughput levels off.
fn mlp_table(levels: &[MlpLevel]) -> Table {
    let mut t = Table::new(&[
        "<level",
        "size",
        "levels off at chains",
        "loads in flight",
        "confidence",
    ]);
    for l in levels {
        t.row(vec![
            l.name.clone().into(),
            HumanBytes(l.size_bytes).to_string().into(),
            l.saturation_chains
                .map_or(Cell::from("-"), |n| u64::from(n).into()),
            Cell::float(l.saturation_parallelism, 1),
            Cell::float(l.confidence, 2),
        ]);
    }
    t
}

/// Median one-way latency by relation, per method.
fn c2c_table(methods: &[C2cMatrix]) -> Table {
    let mut t = Table::new(&["<method", "<relation", "median ns", "pairs"]);
    for m in methods {
        for c in &m.clusters {
            t.row(vec![
                m.method.clone().into(),
                c.name.clone().into(),
                Cell::float(c.median_ns, 1),
                (c.pairs as u64).into(),
            ]);
        }
    }
    t
}

/// One row per object of the array `items`, the `fields` as columns
/// (strings as they are, numbers rounded, null as `-`).
fn rows_of(items: &Value, columns: &[&str], fields: &[&str]) -> Table {
    let mut t = Table::new(columns);
    for item in items.as_array().into_iter().flatten() {
        t.row(
            fields
                .iter()
                .map(|f| match &item[*f] {
                    Value::String(s) => Cell::from(s.clone()),
                    Value::Number(n) => n.as_f64().map_or(Cell::from("-"), |x| Cell::float(x, 1)),
                    Value::Null => Cell::from("-"),
                    other => Cell::from(other.to_string()),
                })
                .collect(),
        );
    }
    t
}

/// A run's loads timed one by one (`memlat run --distribution`): its
/// percentiles, modes and stalls, the histogram and the spectrum; nothing
/// for a run without them.
pub(super) fn distribution(value: &Value) -> Parts {
    let mut p = Parts::default();
    let v = &value["distribution"];
    if v.is_null() {
        return p;
    }
    if let Some(d) = read::<crate::analysis::distribution::Distribution>(v, "distribution", &mut p)
    {
        p.tables.push(distribution_table(&d));
        let subject = HumanBytes(value["size"].as_u64().unwrap_or(0)).to_string();
        p.charts
            .push(plot::distribution::histogram_chart(&d, &subject));
        p.charts.extend(plot::distribution::spectrum_chart(&d));
    }
    p
}

/// Percentiles, modes and periodic stalls as one small table.
fn distribution_table(d: &crate::analysis::distribution::Distribution) -> Table {
    let mut t = Table::new(&["<figure", "<value"]);
    for (key, value) in crate::output::text::distribution_lines(d) {
        if key == "distribution" {
            t.note(value);
        } else {
            t.row(vec![key.into(), value.into()]);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_gets_its_chart_and_a_bad_file_only_loses_it() {
        let mlp = json!({"cpu": 0, "levels": [{"name": "L1", "size_bytes": 16384,
            "points": [{"chains": 1, "ns_per_load": 1.0, "loads_per_second": 1e9, "bytes_per_second": 6.4e10, "parallelism": 1.0},
                       {"chains": 2, "ns_per_load": 0.5, "loads_per_second": 2e9, "bytes_per_second": 1.28e11, "parallelism": 2.0}],
            "saturation_chains": 2, "saturation_parallelism": 2.0, "confidence": 0.9, "notes": []}]});
        let p = parts(Kind::Mlp, &mlp);
        assert_eq!((p.charts.len(), p.tables.len()), (1, 1));
        assert!(p.problems.is_empty());
        let broken = parts(Kind::Mlp, &json!({"levels": [{"name": 3}]}));
        assert!(broken.charts.is_empty());
        assert!(broken.problems[0].contains("mlp levels not drawn"));
        let stages = json!({"stages": [{"name": "doctor", "status": "done", "seconds": 0.71, "file": "doctor.json", "why": null}]});
        let t = &parts(Kind::Characterize, &stages).tables[0];
        assert_eq!(t.rows.len(), 1);
        assert!(t.html().contains("<td class=\"l\">-</td>"), "{}", t.html());
        assert!(parts(Kind::Sweep, &json!({})).tables.is_empty());
    }
}
