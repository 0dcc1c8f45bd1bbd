//! Kinds with charts of their own: mlp, tlb and loaded (line charts, as
//! their `--plot`), c2c (a heatmap per method) and watch (its timeline).

use serde_json::Value;

use super::parts::{Parts, read};
use crate::experiments::c2c::{C2cMatrix, SharingCheck};
use crate::experiments::loaded::LoadedResult;
use crate::experiments::mlp::MlpLevel;
use crate::experiments::tlb::TlbPageResult;
use crate::output::plot;
use crate::output::plot::heatmap::Heatmap;
use crate::output::table::{Cell, Table};
use crate::units::HumanBytes;

/// `memlat mlp`: each level's size and where its throughput levels off.
pub(super) fn mlp_headline(value: &Value, problems: &mut Vec<String>) -> Vec<Table> {
    read::<Vec<MlpLevel>>(&value["levels"], "mlp levels", problems)
        .map(|l| mlp_table(&l))
        .into_iter()
        .collect()
}

/// `memlat tlb`: one table of TLB levels per page size.
pub(super) fn tlb_headline(value: &Value, problems: &mut Vec<String>) -> Vec<Table> {
    let results = read::<Vec<TlbPageResult>>(&value["page_bytes"], "tlb pages", problems);
    results
        .iter()
        .flatten()
        .map(|r| {
            let mut t = tlb_levels_table(r);
            t.note(format!(
                "{} pages ({})",
                HumanBytes(r.page_bytes),
                r.pages_obtained
            ));
            t
        })
        .collect()
}

/// `memlat c2c`: the median one-way latency of each relation, per method;
/// then, where it was checked (older files have no `sharing`), which pairs
/// share a cache.
pub(super) fn c2c_headline(value: &Value, problems: &mut Vec<String>) -> Vec<Table> {
    let mut tables: Vec<Table> = read::<Vec<C2cMatrix>>(&value["methods"], "c2c methods", problems)
        .map(|m| c2c_table(&m))
        .into_iter()
        .collect();
    if !value["sharing"].is_null()
        && let Some(checks) = read::<Vec<SharingCheck>>(&value["sharing"], "c2c sharing", problems)
        && !checks.is_empty()
    {
        tables.push(sharing_table(&checks));
    }
    tables
}

/// Each checked pair: what b read of the lines a brought in, against its own
/// hit and a flushed miss, the share served, and sysfs's relation beside it.
fn sharing_table(checks: &[SharingCheck]) -> Table {
    let mut t = Table::new(&[
        "<CPUs",
        "<level",
        "across ns",
        "own ns",
        "flushed ns",
        "served",
        "<measured",
        "<sysfs says",
    ]);
    let ns = |f: fn(&crate::experiments::c2c::shared::Readings) -> f64, c: &SharingCheck| {
        c.readings
            .as_ref()
            .map_or(Cell::from("-"), |r| Cell::float(f(r), 1))
    };
    for c in checks {
        t.row(vec![
            format!("{} -> {}", c.cpus[0], c.cpus[1]).into(),
            format!("{} ({})", c.level, HumanBytes(c.size_bytes)).into(),
            ns(|r| r.cross_ns, c),
            ns(|r| r.own_ns, c),
            ns(|r| r.miss_ns, c),
            c.served.map_or(Cell::from("-"), |h| Cell::float(h, 2)),
            c.measured.name().into(),
            match c.agrees {
                Some(false) => format!("{} (disagrees)", c.sysfs),
                _ => c.sysfs.clone(),
            }
            .into(),
        ]);
    }
    t.note(
        "a pair shares the level when, in more than half the rounds, at least half of b's loads of the lines a brought in were served as b's own are (across between own and the miss: flushed, at most the sweep's memory)"
            .to_string(),
    );
    t
}

/// `memlat watch`: each series' summary and the changes seen.
pub(super) fn watch_headline(value: &Value, problems: &mut Vec<String>) -> Vec<Table> {
    let Some(file) = read::<crate::experiments::watch::WatchFile>(value, "watch", problems) else {
        return Vec::new();
    };
    let summary = file.summary();
    let mut table = crate::output::watch::summary_table(&summary);
    if let Some(note) = file.cut_short() {
        table.note(note);
    }
    vec![table, crate::output::watch::event_table(&summary)]
}

// Each chart below is drawn from a value that read for the headline; one
// that did not lost its headline already, with the reason.

/// mlp's chart: throughput by chains, a line per level.
pub(super) fn mlp_chart(value: &Value, parts: &mut Parts) {
    if let Ok(levels) = <Vec<MlpLevel> as serde::Deserialize>::deserialize(&value["levels"])
        && levels.iter().any(|l| !l.points.is_empty())
    {
        let cpu = value["cpu"].as_u64().unwrap_or(0) as usize;
        parts.charts.push(plot::mlp::chart(&levels, cpu));
    }
}

/// tlb's chart: translation ns by pages, a line per page size.
pub(super) fn tlb_chart(value: &Value, parts: &mut Parts) {
    if let Ok(results) =
        <Vec<TlbPageResult> as serde::Deserialize>::deserialize(&value["page_bytes"])
        && results.iter().any(|r| !r.points.is_empty())
    {
        parts.charts.push(plot::tlb::chart(&results));
    }
}

/// loaded's chart: latency against bandwidth.
pub(super) fn loaded_chart(value: &Value, parts: &mut Parts) {
    if let Ok(r) = <LoadedResult as serde::Deserialize>::deserialize(value)
        && !r.points.is_empty()
    {
        parts.charts.push(plot::loaded::chart(&r));
    }
}

/// c2c's heatmaps, one per method that measured a pair.
pub(super) fn c2c_heatmaps(value: &Value, parts: &mut Parts) {
    if let Ok(methods) = <Vec<C2cMatrix> as serde::Deserialize>::deserialize(&value["methods"]) {
        parts.heatmaps.extend(
            methods
                .iter()
                .filter(|m| m.pairs_measured > 0)
                .map(c2c_heatmap),
        );
    }
}

/// watch's timeline charts.
pub(super) fn watch_charts(value: &Value, parts: &mut Parts) {
    if let Ok(file) =
        <crate::experiments::watch::WatchFile as serde::Deserialize>::deserialize(value)
    {
        let summary = file.summary();
        parts.charts.extend(plot::watch::charts(&file, &summary));
    }
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
    let mut t = Table::new(&["<method", "<relation (sysfs)", "median ns", "pairs"]);
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

/// `memlat tlb`: each TLB level's entries, reach and miss cost, beside CPUID's claim.
pub fn tlb_levels_table(r: &TlbPageResult) -> Table {
    let mut t = Table::new(&[
        "<level",
        "entries",
        "measured between",
        "reach",
        "miss costs ns",
        "cycles",
        "<CPUID says",
    ]);
    for (k, l) in r.levels.iter().enumerate() {
        let claim = r
            .cpuid
            .iter()
            .filter(|c| c.level as usize == k + 1)
            .map(|c| format!("{} {} entries", c.kind, c.entries))
            .collect::<Vec<_>>()
            .join(", ");
        t.row(vec![
            l.name.clone().into(),
            l.entries.into(),
            format!("{}..{}", l.entries_bracket[0], l.entries_bracket[1]).into(),
            HumanBytes(l.reach_bytes).to_string().into(),
            Cell::float(l.miss_cost_ns, 2),
            if l.miss_cost_cycles > 0.0 {
                Cell::float(l.miss_cost_cycles, 1)
            } else {
                "?".into()
            },
            if claim.is_empty() {
                "-".to_string()
            } else {
                claim
            }
            .into(),
        ]);
    }
    if r.levels.is_empty() {
        t.note("(no TLB level found)");
    }
    for n in &r.notes {
        t.note(format!("note: {n}"));
    }
    t
}

/// MLC's table: delay, bandwidth, latency.
pub fn loaded_table(r: &LoadedResult) -> Table {
    let mut t = Table::new(&[
        "delay",
        "traffic",
        "threads",
        "MB/s",
        "latency ns",
        "min ns",
        "max ns",
        "x idle",
    ]);
    for p in &r.points {
        t.row(vec![
            p.delay.map_or(Cell::from("idle"), |d| u64::from(d).into()),
            p.traffic.clone().into(),
            (p.threads as u64).into(),
            Cell::float(p.bandwidth_bytes_per_second / 1e6, 0),
            Cell::float(p.latency_ns.median, 1),
            Cell::float(p.latency_ns.min, 1),
            Cell::float(p.latency_ns.max, 1),
            Cell::float(p.latency_ns.median / r.idle_latency_ns, 2),
        ]);
    }
    t
}

/// One heatmap of a c2c method's matrix.
pub fn c2c_heatmap(r: &C2cMatrix) -> Heatmap {
    Heatmap {
        title: format!(
            "Core to core: one-way latency of a cache line ({}), ns",
            r.method
        ),
        labels: r.cpus.iter().map(usize::to_string).collect(),
        row_name: "CPU (topology order)".into(),
        column_name: "CPU".into(),
        values: r.matrix_ns.clone(),
        footnote: format!(
            "memlat c2c --method {}: median of 15 samples per pair; {}",
            r.method,
            r.clusters
                .iter()
                .map(|c| format!("{} {:.0} ns", c.name, c.median_ns))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
