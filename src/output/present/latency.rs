//! Latency kinds: a run's figures (and its loads timed one by one), the
//! quick table, `memlat levels`' summary and a sweep's detected levels.

use serde_json::Value;

use super::parts::{Parts, bytes, num, read};
use crate::engine::{CycleSource, Measurement};
use crate::experiments::fixed_levels::{LevelSummary, SAME_RATIO};
use crate::experiments::plateaus::MeasuredLevels;
use crate::output::plot;
use crate::output::table::{Cell, Table};
use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;

/// A run's figures: size, pattern, ns and cycles per load (`-` where the
/// JSON has none), where cycles came from, repeats.
pub(super) fn run_table(v: &Value) -> Table {
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

/// The quick table (`memlat` with no command): each size, the level it
/// was placed in, the cache sysfs says it fits in, ns and cycles, spread,
/// repeats and pages.
pub(super) fn quick_table(value: &Value, problems: &mut Vec<String>) -> Option<Table> {
    let points = read::<Vec<Measurement>>(&value["points"], "quick points", problems)?;
    let named: Vec<Option<String>> =
        serde::Deserialize::deserialize(&value["levels"]).unwrap_or_default();
    let caches: Vec<CacheInfo> =
        serde::Deserialize::deserialize(&value["sysfs_caches"]).unwrap_or_default();
    let measured: Option<MeasuredLevels> =
        serde::Deserialize::deserialize(&value["plateaus"]).unwrap_or_default();
    let mut t = Table::new(&[
        "<size",
        "<level",
        "<sysfs: fits in",
        "ns/load",
        "cycles/load",
        "ns min..max",
        "repeats",
        "pages",
    ]);
    for (k, m) in points.iter().enumerate() {
        let level = named.get(k).cloned().flatten().unwrap_or_default();
        t.row(vec![
            HumanBytes(m.size).to_string().into(),
            if level.is_empty() {
                "-".into()
            } else {
                level.clone().into()
            },
            match (&measured, level.as_str()) {
                // What the memory row measured, not a claimed cache it
                // would fit in (a guest's 260 MiB L3 holds 256 MiB).
                (Some(measured), "memory") => memory_basis(measured),
                _ => fits_in(m.size, &caches),
            }
            .into(),
            Cell::float(m.ns_per_load.median, 2),
            Cell::float(m.cycles_per_load.median, 2),
            format!("{:.2}..{:.2}", m.ns_per_load.min, m.ns_per_load.max).into(),
            (m.samples.len() as u64).into(),
            m.page_backing.obtained.clone().into(),
        ]);
    }
    if let Some(why) = clock_suspect(&points, &caches) {
        t.note(format!(
            "clock suspect: {why}; the cycles column is not to be read"
        ));
    }
    if let Some(measured) = &measured {
        t.note(measured.describe());
    }
    // Repeats adapt to the noise, so rows may differ: say what each used.
    let used: Vec<usize> = points.iter().map(|m| m.samples.len()).collect();
    let (fewest, most) = (
        used.iter().copied().min().unwrap_or(0),
        used.iter().copied().max().unwrap_or(0),
    );
    let repeats = if fewest == most {
        format!("median of {most} repeats")
    } else {
        format!("median of each row's repeats ({fewest} to {most}: the repeats column)")
    };
    if let Some(m) = points.last() {
        t.note(format!(
            "cycles: {} ({:.3} GHz); {repeats}, each a fresh random chain",
            match m.cycle_source {
                CycleSource::Perf => "counted by perf's cycles event",
                CycleSource::CycleCounter => "counted by the core's cycle counter",
                CycleSource::Given => "ns x the clock given with --ghz",
                CycleSource::Estimated =>
                    "estimated, ns x the core clock measured from dependent add and multiply chains",
            },
            m.clock_ghz,
        ));
    }
    Some(t)
}

/// The memory row's sysfs cell: what it was sized beyond, measured.
fn memory_basis(measured: &MeasuredLevels) -> String {
    match (measured.levels.last(), measured.last_capacity()) {
        (Some(last), Some(bytes)) => format!(
            "memory: {}x measured {} {}",
            crate::experiments::memory::FACTOR,
            last.name,
            HumanBytes(bytes)
        ),
        _ => "memory".into(),
    }
}

/// The claimed cache `size` fits in, or memory.
pub fn fits_in(size: u64, caches: &[CacheInfo]) -> String {
    caches
        .iter()
        .find(|c| size <= c.size_bytes)
        .map_or("memory".to_string(), |c| {
            format!("{} {}", c.name(), HumanBytes(c.size_bytes))
        })
}

/// Why estimated cycles are not to be read: the clock's verdict, or an
/// L1-sized row under 2 cycles.
fn clock_suspect(points: &[Measurement], caches: &[CacheInfo]) -> Option<String> {
    let estimated: Vec<&Measurement> = points
        .iter()
        .filter(|m| m.cycle_source == CycleSource::Estimated)
        .collect();
    if let Some(why) = estimated
        .iter()
        .find_map(|m| m.clock_method.as_ref()?.suspect.clone())
    {
        return Some(why);
    }
    let l1_size = caches.first().map_or(16 << 10, |c| c.size_bytes);
    estimated
        .iter()
        .find(|m| m.size <= l1_size)
        .and_then(|m| crate::platform::clock::l1_cycles_suspect(m.cycles_per_load.median))
}

/// `memlat levels`' summary: min / median / max per level, with a note
/// where two levels were not told apart.
pub fn levels_table(summaries: &[LevelSummary]) -> Table {
    let mut t = Table::new(&[
        "<level",
        "size",
        "iter",
        "ns min",
        "ns median",
        "ns max",
        "cycles med",
        "cv",
        "pages",
    ]);
    for s in summaries {
        t.row(vec![
            s.level.clone().into(),
            HumanBytes(s.size).to_string().into(),
            s.iterations.into(),
            Cell::float(s.ns.min, 2),
            Cell::float(s.ns.median, 2),
            Cell::float(s.ns.max, 2),
            Cell::float(s.cycles.median, 1),
            Cell::float(s.ns.cv, 3),
            s.pages.clone().into(),
        ]);
    }
    for pair in summaries.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.ns.median < SAME_RATIO * a.ns.median {
            t.note(format!(
                "note: {} ({:.1} ns) and {} ({:.1} ns) are within {SAME_RATIO}x: at {} the walk did not get {}'s latency (a cache shared with other cores or tenants, or a size claim that does not hold here)",
                a.level,
                a.ns.median,
                b.level,
                b.ns.median,
                HumanBytes(a.size),
                a.level
            ));
        }
    }
    t
}

/// A sweep's detected levels (its own, or detected now from its curve).
pub(super) fn sweep_levels(value: &Value, problems: &mut Vec<String>) -> Option<Table> {
    let s = read::<crate::experiments::sweep::SweepResult>(value, "sweep", problems)?;
    sweep_levels_of(&s)
}

/// A sweep's levels: as it recorded them, else detected from its curve.
pub(super) fn sweep_levels_of(s: &crate::experiments::sweep::SweepResult) -> Option<Table> {
    let d = s.detection.clone().or_else(|| s.detect())?;
    Some(crate::output::detect::levels_table(&d))
}

/// A sweep's charts (every series, its levels shaded).
pub(super) fn sweep_charts(value: &Value, parts: &mut Parts) {
    // A sweep that does not read lost its headline already, with the reason.
    if let Ok(s) =
        <crate::experiments::sweep::SweepResult as serde::Deserialize>::deserialize(value)
    {
        sweep_charts_of(&s, parts);
    }
}

/// [`sweep_charts`] of a sweep read into its struct.
pub(super) fn sweep_charts_of(s: &crate::experiments::sweep::SweepResult, parts: &mut Parts) {
    parts.charts.extend(plot::sweep::charts(
        s,
        &plot::sweep::Metric::defaults(s),
        true,
    ));
}

/// A run's loads timed one by one (`memlat run --distribution`): its
/// percentiles, modes and stalls; nothing for a run without them.
pub(super) fn distribution_tables(value: &Value, problems: &mut Vec<String>) -> Vec<Table> {
    let v = &value["distribution"];
    if v.is_null() {
        return Vec::new();
    }
    read::<crate::analysis::distribution::Distribution>(v, "distribution", problems)
        .map(|d| distribution_table(&d))
        .into_iter()
        .collect()
}

/// The histogram and the spectrum of a run's loads timed one by one.
pub(super) fn distribution_charts(value: &Value, parts: &mut Parts) {
    let v = &value["distribution"];
    // A distribution that does not read lost its table already, with the reason.
    if let Ok(d) =
        <crate::analysis::distribution::Distribution as serde::Deserialize>::deserialize(v)
    {
        let subject = HumanBytes(value["size"].as_u64().unwrap_or(0)).to_string();
        parts
            .charts
            .push(plot::distribution::histogram_chart(&d, &subject));
        parts.charts.extend(plot::distribution::spectrum_chart(&d));
    }
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
