//! What a watch writes: a header (the result's envelope and the plan), one
//! record per interval, and a summary at the end; each one JSON line, so a
//! run killed at any moment leaves every finished interval readable. Pure:
//! the summary is a function of the records, and a file read back without
//! one (a killed run) gets it computed the same way.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bounds::bounds_filled;
use super::edge::SettleEdge;
use super::plan::WatchPlan;
use crate::analysis::changepoint::{self, Shift};
use crate::experiments::plateaus::MeasuredLevels;

/// An edge below the smallest probe is taken, for its series' shifts, as
/// this share of the smallest probe: a placeholder, since how far below is
/// not known; a half is a fall of 2x, over any shift threshold
/// ([`changepoint::MIN_SHIFT`]), so an edge that drops under every probe
/// reads as a shift, and its size is not reported from it.
const BELOW_SMALLEST: f64 = 0.5;

/// The first line, after the envelope's `schema_version`, `kind`, `host`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchHeader {
    /// When the first interval started (UTC).
    pub started: String,
    /// The CPU the measuring thread was pinned to.
    pub cpu: usize,
    /// What is measured each interval.
    pub plan: WatchPlan,
    /// The measured plateaus the sizes were placed in, and where they came from.
    pub plateaus: MeasuredLevels,
    /// Node spacing of every chain, bytes (random chains).
    pub line: u64,
    /// The kernel that walks them.
    pub kernel: String,
    /// What to keep in mind (page backing obtained, fallbacks, and the
    /// settle pass's edge when it disagrees with the sweep's bounds).
    pub notes: Vec<String>,
    /// The settle pass's edge against the pooled bounds of the sweep the
    /// plan came from, once that pass has run: null in the header line of
    /// a file (written before it; the summary line holds it).
    #[serde(default)]
    pub settle_edge: Option<SettleEdge>,
}

/// One interval's readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// From 0.
    pub index: u64,
    /// Seconds from the start of the watch to this interval's first sample.
    pub t_s: f64,
    /// When it was taken (UTC, seconds).
    pub utc: String,
    /// ns per load at each of the plan's `levels`, in its order.
    pub ns: Vec<f64>,
    /// ns per load at each edge probe, ascending sizes.
    pub edge_ns: Vec<f64>,
    /// ns per load at the miss probe (`WatchPlan::miss_probe`): what a miss
    /// costs at the edge probes' footprint, the `M` their hit fractions are
    /// read against where it lies under memory's reading. Null in files
    /// from before 2026-11-29.
    #[serde(default)]
    pub edge_miss_ns: Option<f64>,
    /// Where half the loads stop being served: the probes' `h` falling
    /// through 1/2 (see [`super::edge`]); the largest probe when every probe
    /// was served half or more (the edge is at least there); null when it
    /// lies below the smallest probe, or no edge is tracked. (Files written
    /// before 2026-11-27 hold the largest `h S`, and before issue 36 where
    /// the probes' latency crossed a threshold half-way to memory.)
    pub edge_bytes: Option<u64>,
    /// Each edge probe's hit fraction `h = (M - ns) / (M - L)`, clamped to
    /// [0, 1], with `L` and `M` this interval's readings of the level's
    /// middle and of memory (in `ns`); null where it could not be read, or
    /// where a probe whose warm walk fell short of two cycles missed (a
    /// miss of lines the walk never brought in says nothing of the level).
    #[serde(default)]
    pub edge_hit: Vec<Option<f64>>,
    /// The largest `h S`, bytes, below the smallest probe too (where
    /// `edge_bytes` is null): under adaptive or random replacement about
    /// the capacity, under LRU noise. Null when the references did not hold.
    #[serde(default)]
    pub edge_served_bytes: Option<u64>,
    /// The probes around the edge: the last served half its loads or more
    /// (null: none was, the edge is below the smallest) and the first
    /// served less (null: every probe was).
    #[serde(default)]
    pub edge_bracket_bytes: [Option<u64>; 2],
    /// Each edge probe's warm walk before its timed runs, in cycles of its
    /// chain (the watch aims at 2, `WARM_CYCLES`): from 1 on, every line it
    /// timed was last used one cycle of its own loads before, as in a
    /// full-cycle chase; less where the duty budget cut it short.
    #[serde(default)]
    pub edge_warm_cycles: Vec<f64>,
    /// The share of the CPU's time the hypervisor gave to others since the
    /// interval before (steal in /proc/stat); null where it is not reported.
    pub steal: Option<f64>,
    /// Milliseconds of wall time spent measuring in this interval (warm
    /// walks and samples; on a busy machine it includes waiting for the CPU).
    pub spent_ms: f64,
    /// Milliseconds of the measuring thread's CPU time in it: what the duty
    /// cycle limits.
    #[serde(default)]
    pub cpu_ms: Option<f64>,
}

impl Interval {
    /// Whether the interval read an edge at all (a probe served half its
    /// loads or none did), as its bracket or served bytes say: where every
    /// probe was left out (walked short and missing) or the references did
    /// not hold, nothing is known of the edge, not even that it lay below
    /// the smallest probe. Files from before 2026-11-27 record neither;
    /// there a null `edge_bytes` is below the smallest (`summarise` reads
    /// a file by whether any interval says).
    pub fn edge_read(&self) -> bool {
        self.edge_bracket_bytes != [None, None] || self.edge_served_bytes.is_some()
    }

    /// The edge as one number of a series: its bytes where placed, `below`
    /// where it lay under the smallest probe, NaN where nothing was read
    /// ([`Interval::edge_read`]). `bracketed`: whether the intervals record
    /// brackets (every interval memlat measures now does); where not (files
    /// from before 2026-11-27), a null edge is below.
    pub fn edge_value(&self, bracketed: bool, below: f64) -> f64 {
        match self.edge_bytes {
            Some(b) => b as f64,
            None if bracketed && !self.edge_read() => f64::NAN,
            None => below,
        }
    }

    /// The probe the edge is only at least, where its bracket has no upper
    /// end: every probe read was served up to it, and the larger ones were
    /// walked short and left out, or there were none.
    pub fn edge_at_least(&self) -> Option<u64> {
        match self.edge_bracket_bytes {
            [Some(read), None] => Some(read),
            _ => None,
        }
    }
}

/// A figure serde_json wrote as null: NaN, as it was before writing (JSON
/// has no NaN; an edge series with no reading has no median).
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// One series over the whole watch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    /// `L1`...`memory`, or `L3 edge`.
    pub name: String,
    /// `ns`, or `bytes` for an edge.
    pub unit: String,
    /// Readings in the series (for an edge: intervals where a probe was
    /// served; the others had the edge below the smallest probe).
    pub readings: usize,
    /// Median reading. (null in the file, NaN here, for a series with no reading)
    #[serde(deserialize_with = "nan_if_null")]
    pub median: f64,
    /// 5th percentile. (null in the file, NaN here, for a series with no reading)
    #[serde(deserialize_with = "nan_if_null")]
    pub p5: f64,
    /// 95th percentile. (null in the file, NaN here, for a series with no reading)
    #[serde(deserialize_with = "nan_if_null")]
    pub p95: f64,
    /// The shifts found (see [`crate::analysis::changepoint`]).
    pub events: Vec<Event>,
    /// For an edge: the smallest probe; an event's level below it means
    /// "below the smallest probe" (taken as half of it).
    #[serde(default)]
    pub below: Option<f64>,
    /// For an edge: the largest probe; a reading there means "at least
    /// this" (every probe was served, the edge may lie beyond).
    #[serde(default)]
    pub above: Option<f64>,
}

/// One shift, with its times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// First interval away (UTC).
    pub start: String,
    /// Last interval away, for one that came back (UTC); null if it lasted.
    pub end: Option<String>,
    /// Its first interval's index.
    pub start_index: usize,
    /// Its last interval's index, when it came back.
    pub end_index: Option<usize>,
    /// The settled level before.
    pub before: f64,
    /// The level during it (farthest for an excursion, settled for a step).
    pub after: f64,
    /// `after / before - 1`.
    pub change: f64,
    /// For a level after L1: L1's own change in the intervals this event
    /// spans, when L1 had an event there in the same direction. An L1 hit
    /// takes a fixed number of core cycles, so L1 moving in ns means the core
    /// ran slower or faster (its clock, or an SMT sibling sharing it); this
    /// event is then, in part at least, the core's and not the caches' or
    /// memory's. Null otherwise.
    #[serde(default)]
    pub with_l1: Option<f64>,
    /// For the edge: memory's own change in the intervals this event spans,
    /// when memory had an event there in the same direction. A probe's
    /// share of loads served is read between the level's latency and the
    /// miss at memory's (`edge::miss_reference`), so memory reading slower
    /// makes every probe look more served, and faster, less: this event is
    /// then, in part at least, the reference's. Null otherwise.
    #[serde(default)]
    pub with_memory: Option<f64>,
}

/// The last line of a watch that ended (its duration, or Ctrl-C).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchSummary {
    /// Intervals measured.
    pub intervals: usize,
    /// Seconds from the first interval's start to the end: for a watch
    /// that ran its course, to its last interval's end (`memlat watch`
    /// takes at least its intervals times `interval_s`); for one cut short,
    /// to the moment it stopped.
    pub wall_s: f64,
    /// Seconds spent measuring (the sum of every interval's `spent_ms`;
    /// on a busy machine it includes waiting for the CPU).
    pub measuring_s: f64,
    /// CPU seconds of the measuring thread (the sum of `cpu_ms`), when known.
    #[serde(default)]
    pub measuring_cpu_s: Option<f64>,
    /// CPU seconds the whole process used (getrusage), when known: the
    /// plateaus' probe and the chains' build included.
    pub cpu_s: Option<f64>,
    /// Seconds from the process's start to the end, when known: the wall
    /// time `cpu_s` was spent in (a short watch's intervals span less
    /// than its setup).
    #[serde(default)]
    pub process_wall_s: Option<f64>,
    /// Mean steal share over the intervals that report one.
    pub steal_mean: Option<f64>,
    /// Whether it ended before its duration: Ctrl-C, SIGTERM, or its
    /// output (standard output, the `-o` file) failing.
    pub interrupted: bool,
    /// Each level, then the edge.
    pub series: Vec<SeriesSummary>,
    /// What to keep in mind about the whole watch: the settle pass's edge
    /// when it disagreed with the sweep's bounds.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The settle pass's edge against the pooled bounds of the sweep the
    /// plan came from, agreeing or not (the header line is written before
    /// that pass, so a file's header holds null there); null where no edge
    /// is tracked, and in a summary computed for a run that was killed.
    #[serde(default)]
    pub settle_edge: Option<SettleEdge>,
}

/// A watch read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchFile {
    /// The header line.
    #[serde(flatten)]
    pub header: WatchHeader,
    /// Every interval that was written whole.
    pub intervals: Vec<Interval>,
    /// The summary line; null for a run that was killed.
    pub summary: Option<WatchSummary>,
}

impl WatchFile {
    /// For a watch cut short (killed: no summary line), what to say beside
    /// its figures, which are then computed from its intervals.
    pub fn cut_short(&self) -> Option<String> {
        self.summary.is_none().then(|| {
            format!(
                "cut short: the watch ended without its summary line (killed); these figures are computed from the {} interval(s) written",
                self.intervals.len()
            )
        })
    }

    /// The summary written, or the one its intervals give (a killed run).
    pub fn summary(&self) -> WatchSummary {
        self.summary.clone().unwrap_or_else(|| {
            let wall = self.intervals.last().map_or(0.0, |i| i.t_s);
            summarise(&self.header, &self.intervals, wall, None, false)
        })
    }
}

/// The p-th quantile (0..1) of sorted values, linear between neighbours.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let x = p * (sorted.len() - 1) as f64;
    let (i, f) = (x.floor() as usize, x.fract());
    let j = (i + 1).min(sorted.len() - 1);
    sorted[i] + f * (sorted[j] - sorted[i])
}

/// A series' summary: quantiles of `measured` (the readings themselves),
/// events of `series` (the same, gaps filled as the caller says).
fn series_summary(
    name: &str,
    unit: &str,
    series: &[f64],
    measured: &[f64],
    intervals: &[Interval],
) -> SeriesSummary {
    let values = series;
    let mut sorted: Vec<f64> = measured.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let utc = |i: usize| intervals.get(i).map_or_else(String::new, |r| r.utc.clone());
    let events = changepoint::shifts(values)
        .into_iter()
        .map(|s: Shift| Event {
            start: utc(s.start),
            end: s.end.map(utc),
            start_index: s.start,
            end_index: s.end,
            change: s.change(),
            before: s.before,
            after: s.after,
            with_l1: None,
            with_memory: None,
        })
        .collect();
    SeriesSummary {
        name: name.into(),
        unit: unit.into(),
        readings: sorted.len(),
        median: quantile(&sorted, 0.5),
        p5: quantile(&sorted, 0.05),
        p95: quantile(&sorted, 0.95),
        events,
        below: None,
        above: None,
    }
}

/// The change of an event in `others` that overlaps `e` in the same
/// direction (`n` intervals in all; a lasting event runs to the last).
fn same_way(others: &[Event], e: &Event, n: usize) -> Option<f64> {
    let span = |e: &Event| (e.start_index, e.end_index.unwrap_or(n.saturating_sub(1)));
    let (a, b) = span(e);
    others
        .iter()
        .find(|c| {
            let (c0, c1) = span(c);
            c0 <= b && a <= c1 && (c.change > 0.0) == (e.change > 0.0)
        })
        .map(|c| c.change)
}

/// Sets [`Event::with_l1`] on each later level's event that an L1 event
/// of the same sign overlaps (`n` intervals in all).
fn mark_core_events(series: &mut [SeriesSummary], n: usize) {
    let Some(k) = series.iter().position(|s| s.name == "L1") else {
        return;
    };
    let l1 = series[k].events.clone();
    for s in series
        .iter_mut()
        .filter(|s| s.name != "L1" && s.unit == "ns")
    {
        for e in &mut s.events {
            e.with_l1 = same_way(&l1, e, n);
        }
    }
}

/// Sets [`Event::with_memory`] on each edge event that a memory event of
/// the same sign overlaps (`n` intervals in all).
fn mark_reference_events(series: &mut [SeriesSummary], n: usize) {
    let Some(k) = series.iter().position(|s| s.name == "memory") else {
        return;
    };
    let memory = series[k].events.clone();
    for s in series.iter_mut().filter(|s| s.unit == "bytes") {
        for e in &mut s.events {
            e.with_memory = same_way(&memory, e, n);
        }
    }
}

/// The summary of `intervals`: per level and for the edge, the median,
/// p5-p95 and the shifts.
pub fn summarise(
    header: &WatchHeader,
    intervals: &[Interval],
    wall_s: f64,
    cpu_s: Option<f64>,
    interrupted: bool,
) -> WatchSummary {
    let mut series: Vec<SeriesSummary> = header
        .plan
        .levels
        .iter()
        .enumerate()
        .map(|(k, level)| {
            let values: Vec<f64> = intervals
                .iter()
                .map(|i| i.ns.get(k).copied().unwrap_or(f64::NAN))
                .collect();
            series_summary(&level.name, "ns", &values, &values, intervals)
        })
        .collect();
    mark_core_events(&mut series, intervals.len());
    if let Some(edge) = &header.plan.edge {
        // No probe served: for the events the edge is below the smallest,
        // taken as half of it; no reading at all: missing. The quantiles
        // are of the edges found.
        let below = edge
            .sizes
            .first()
            .map_or(f64::NAN, |&s| s as f64 * BELOW_SMALLEST);
        let bracketed = intervals.iter().any(Interval::edge_read);
        let read: Vec<f64> = intervals
            .iter()
            .map(|i| i.edge_value(bracketed, below))
            .collect();
        let lower: Vec<bool> = intervals
            .iter()
            .map(|i| i.edge_at_least().is_some())
            .collect();
        let values = bounds_filled(&read, &lower);
        let found: Vec<f64> = intervals
            .iter()
            .filter_map(|i| i.edge_bytes.map(|b| b as f64))
            .collect();
        let mut summary = series_summary(
            &format!("{} edge", edge.level),
            "bytes",
            &values,
            &found,
            intervals,
        );
        summary.below = edge.sizes.first().map(|&s| s as f64);
        summary.above = edge.sizes.last().map(|&s| s as f64);
        series.push(summary);
        mark_reference_events(&mut series, intervals.len());
    }
    let steals: Vec<f64> = intervals.iter().filter_map(|i| i.steal).collect();
    WatchSummary {
        intervals: intervals.len(),
        wall_s,
        measuring_s: intervals.iter().map(|i| i.spent_ms).sum::<f64>() / 1e3,
        measuring_cpu_s: intervals
            .iter()
            .map(|i| i.cpu_ms)
            .sum::<Option<f64>>()
            .map(|ms| ms / 1e3),
        cpu_s,
        process_wall_s: None,
        steal_mean: (!steals.is_empty()).then(|| steals.iter().sum::<f64>() / steals.len() as f64),
        interrupted,
        series,
        notes: header
            .settle_edge
            .iter()
            .filter(|s| s.agrees == Some(false))
            .map(|s| s.note.clone())
            .chain(lower_bounds_note(header, intervals))
            .collect(),
        settle_edge: header.settle_edge.clone(),
    }
}

/// How many intervals' edges are only a lower bound short of the largest
/// probe (every probe read was served; the larger ones were walked short
/// of their cycles, missed, and were left out), when any is: their
/// readings count in the edge's quantiles as that bound.
fn lower_bounds_note(header: &WatchHeader, intervals: &[Interval]) -> Option<String> {
    let edge = header.plan.edge.as_ref()?;
    let largest = *edge.sizes.last()?;
    let bounds = intervals
        .iter()
        .filter(|i| i.edge_at_least().is_some_and(|read| read < largest))
        .count();
    (bounds > 0).then(|| {
        format!(
            "{} edge: {bounds} of {} intervals read only a lower bound (at least the last probe served; the larger probes were walked short of their warm cycles within the duty budget and missed, so they could not say where the level stops); a larger --duty walks them whole",
            edge.level,
            intervals.len()
        )
    })
}

/// A JSON line tagged with what it holds (`header`, `interval`, `summary`).
#[derive(Serialize)]
pub struct Tagged<'a, T: Serialize> {
    /// What the line holds.
    pub record: &'a str,
    /// The record.
    #[serde(flatten)]
    pub inner: &'a T,
}

/// Reads a watch file (JSON lines) into one JSON object: the header's
/// fields, `intervals` and `summary` (null when the run was killed). A last
/// line that does not parse is the interval a kill cut short and is left
/// out; any other line that does not is an error. `None` when the text is
/// not a watch file at all (its first line is no watch header).
pub fn read_lines(text: &str) -> Option<Result<Value, String>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    let mut header: Value = serde_json::from_str(lines.next()?).ok()?;
    if header.get("kind")?.as_str()? != "watch" || header.get("record")?.as_str()? != "header" {
        return None;
    }
    let mut intervals = Vec::new();
    let mut summary = Value::Null;
    let mut n = 1;
    while let Some(line) = lines.next() {
        n += 1;
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) if lines.peek().is_none() => break,
            Err(e) => return Some(Err(format!("line {n}: {e}"))),
        };
        // The summary is the last line a watch writes: nothing follows it.
        if !summary.is_null() {
            return Some(Err(format!(
                "line {n}: a record after the summary (a watch's summary is its last line)"
            )));
        }
        match value.get("record").and_then(Value::as_str) {
            Some("interval") => intervals.push(value),
            Some("summary") => summary = value,
            Some(other) => {
                return Some(Err(format!(
                    "line {n}: unknown record {}",
                    crate::printable::quoted(other, 40)
                )));
            }
            None => return Some(Err(format!("line {n}: a line with no record"))),
        }
    }
    let object = header.as_object_mut()?;
    object.remove("record");
    object.insert("intervals".into(), Value::Array(intervals));
    object.insert("summary".into(), summary);
    Some(Ok(header))
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
