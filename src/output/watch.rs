//! How a watch is shown: the live line per interval (with sparklines on a
//! terminal), each event as one line, the summary table, and two watches
//! compared per level.

use crate::experiments::watch::{Event, Interval, SeriesSummary, WatchHeader, WatchSummary};
use crate::output::table::{Cell, Table};
use crate::units::HumanBytes;

/// Readings a sparkline shows.
pub const SPARK_WIDTH: usize = 12;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A sparkline of `values` (the last [`SPARK_WIDTH`]); the scale spans at
/// least the smallest shift an event can be
/// ([`crate::analysis::changepoint::MIN_SHIFT`] of the median), so noise
/// draws flat and a bar's height means something.
pub fn sparkline(values: &[f64]) -> String {
    let tail = &values[values.len().saturating_sub(SPARK_WIDTH)..];
    let finite: Vec<f64> = tail.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return String::new();
    }
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(lo.abs() * crate::analysis::changepoint::MIN_SHIFT);
    tail.iter()
        .map(|&v| {
            if !v.is_finite() || span <= 0.0 {
                return BARS[0];
            }
            let k = ((v - lo) / span * (BARS.len() - 1) as f64).round() as usize;
            BARS[k.min(BARS.len() - 1)]
        })
        .collect()
}

/// A reading in its unit: ns with two figures after the point below 10,
/// one below 100, none above; bytes as KiB/MiB.
pub fn reading(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "-".into();
    }
    match unit {
        "bytes" => HumanBytes(value as u64).to_string(),
        _ if value < 10.0 => format!("{value:.2}"),
        _ if value < 100.0 => format!("{value:.1}"),
        _ => format!("{value:.0}"),
    }
}

/// The clock time of a UTC timestamp (`2026-11-25T13:05:12Z` -> `13:05:12`).
fn clock(utc: &str) -> &str {
    utc.get(11..19).unwrap_or(utc)
}

/// One interval as a line; with `history` (earlier intervals, this one
/// last) each level gets a sparkline.
pub fn live_line(header: &WatchHeader, history: &[Interval], sparks: bool) -> String {
    let Some(now) = history.last() else {
        return String::new();
    };
    let mut parts = vec![clock(&now.utc).to_string()];
    for (k, level) in header.plan.levels.iter().enumerate() {
        let v = now.ns.get(k).copied().unwrap_or(f64::NAN);
        let mut part = format!("{} {}", level.name, reading(v, "ns"));
        if sparks {
            let series: Vec<f64> = history
                .iter()
                .map(|i| i.ns.get(k).copied().unwrap_or(f64::NAN))
                .collect();
            part += &format!(" {}", sparkline(&series));
        }
        parts.push(part);
    }
    if let Some(edge) = &header.plan.edge {
        // No edge found: below the smallest probe, which 0 bytes reads as;
        // nothing read at all (every probe left out, or the references did
        // not hold): "-", no claim. The live line shows intervals measured
        // now, which record their brackets.
        let bytes = now.edge_value(true, 0.0);
        let probe = |s: Option<&u64>| s.map(|&s| s as f64);
        // Served up to the last probe read (those past it walked short and
        // left out): at least that probe, marked as at the largest.
        let upper = now
            .edge_at_least()
            .map_or_else(|| probe(edge.sizes.last()), |read| Some(read as f64));
        let mut part = format!(
            "{} edge {}",
            edge.level,
            marked(bytes, probe(edge.sizes.first()), upper, "bytes")
        );
        if sparks {
            let series: Vec<f64> = history
                .iter()
                .map(|i| i.edge_bytes.map_or(f64::NAN, |b| b as f64))
                .collect();
            part += &format!(" {}", sparkline(&series));
        }
        parts.push(part);
    }
    if let Some(steal) = now.steal {
        parts.push(format!("steal {:.0}%", steal * 100.0));
    }
    parts.push(match now.cpu_ms {
        Some(cpu) => format!("spent {:.0} ms (CPU {cpu:.0})", now.spent_ms),
        None => format!("spent {:.0} ms", now.spent_ms),
    });
    parts.join("  ")
}

/// One event as a line: `13:05:12-13:05:24 memory 148 -> 212 ns (+43%)`.
pub fn event_line(series: &SeriesSummary, e: &Event) -> String {
    let when = match &e.end {
        Some(end) => format!("{}-{}", clock(&e.start), clock(end)),
        None => format!("{}-", clock(&e.start)),
    };
    let unit = if series.unit == "ns" { " ns" } else { "" };
    let level = |v: f64| bounded(series, v);
    let whose = whose_note(series, e).map_or_else(String::new, |note| format!("; {note}"));
    format!(
        "{when} {} {} -> {}{unit} ({:+.0}%){}{whose}",
        series.name,
        level(e.before),
        level(e.after),
        e.change * 100.0,
        if e.end.is_none() { ", lasting" } else { "" }
    )
}

/// A reading of `series`, marked where the probes end: `<2 MiB` below
/// the smallest edge probe, `>=16 MiB` at the largest (every probe served).
fn bounded(series: &SeriesSummary, v: f64) -> String {
    marked(v, series.below, series.above, &series.unit)
}

/// A reading in `unit`, `<smallest` below the smallest probe and
/// `>=largest` at the largest (see [`bounded`]).
fn marked(v: f64, smallest: Option<f64>, largest: Option<f64>, unit: &str) -> String {
    match (smallest, largest) {
        // A segment's mean of readings all at one end comes back within
        // rounding of it: the smallest probe itself is a reading, not under it.
        (Some(below), _) if v < below * (1.0 - 1e-9) => format!("<{}", reading(below, unit)),
        (_, Some(above)) if v >= above * (1.0 - 1e-9) => format!(">={}", reading(above, unit)),
        _ => reading(v, unit),
    }
}

/// Whose change an event is, in part at least, where another series says:
/// L1's (an L1 hit is a fixed number of core cycles, see `Event::with_l1`),
/// or for the edge, memory's (its miss reference, see `Event::with_memory`).
fn whose_note(series: &SeriesSummary, e: &Event) -> Option<String> {
    if series.name == "L1" {
        return Some("the core ran slower or faster (its clock, or a sibling thread)".into());
    }
    if let Some(l1) = e.with_l1 {
        return Some(format!(
            "L1 moved too ({:+.0}%): the core, in part",
            l1 * 100.0
        ));
    }
    e.with_memory.map(|m| {
        format!(
            "memory moved too ({:+.0}%): the edge is read against it, so in part memory's",
            m * 100.0
        )
    })
}

/// Per level: median, p5-p95 and its events.
pub fn summary_table(summary: &WatchSummary) -> Table {
    let mut t = Table::new(&["<series", "median", "p5..p95", "readings", "<events"]);
    for s in &summary.series {
        let unit = if s.unit == "ns" { " ns" } else { "" };
        t.row(vec![
            s.name.clone().into(),
            format!("{}{unit}", bounded(s, s.median)).into(),
            format!("{}..{}", bounded(s, s.p5), bounded(s, s.p95)).into(),
            (s.readings as u64).into(),
            if s.events.is_empty() {
                "none".into()
            } else {
                s.events
                    .iter()
                    .map(|e| event_line(s, e))
                    .collect::<Vec<_>>()
                    .join("; ")
                    .into()
            },
        ]);
    }
    t.note(cost_line(summary));
    for note in &summary.notes {
        t.note(note.clone());
    }
    t
}

/// What the watch spent: measuring time and CPU time against wall time.
pub fn cost_line(summary: &WatchSummary) -> String {
    let wall = summary.wall_s.max(1e-9);
    let mut line = format!(
        "{} intervals over {:.0} s; measuring took {:.1} s of wall time ({:.1}%, waits for the CPU included)",
        summary.intervals,
        summary.wall_s,
        summary.measuring_s,
        summary.measuring_s / wall * 100.0
    );
    if let Some(cpu) = summary.measuring_cpu_s {
        line += &format!(" and {cpu:.1} s of CPU ({:.1}%)", cpu / wall * 100.0);
    }
    // The process's CPU time includes its setup (the plateaus' probe, the
    // chains' build): it is a share of the process's own wall time.
    match (summary.cpu_s, summary.process_wall_s) {
        (Some(cpu), Some(process)) if process > 0.0 => {
            line += &format!(
                "; the whole process {cpu:.1} s of CPU in {process:.1} s ({:.1}%, its setup included)",
                cpu / process * 100.0
            );
        }
        (Some(cpu), _) if cpu <= wall => {
            line += &format!(
                "; the whole process {cpu:.1} s of CPU ({:.1}%)",
                cpu / wall * 100.0
            );
        }
        (Some(cpu), _) => {
            line += &format!("; the whole process {cpu:.1} s of CPU, its setup included")
        }
        (None, _) => {}
    }
    if let Some(steal) = summary.steal_mean {
        line += &format!(", steal {:.1}% on average", steal * 100.0);
    }
    if summary.interrupted {
        line += "; cut short (Ctrl-C, SIGTERM, or its output failing)";
    }
    line
}

/// What the event table says when there is no event.
pub const NO_EVENTS: &str =
    "no events: no series shifted by 10% or more, beyond its own noise, for two intervals or more";

/// Every event of the watch, one row each, in time order; with none, one
/// cell saying so (not an empty table's header).
pub fn event_table(summary: &WatchSummary) -> Table {
    let mut rows: Vec<(&SeriesSummary, &Event)> = summary
        .series
        .iter()
        .flat_map(|s| s.events.iter().map(move |e| (s, e)))
        .collect();
    if rows.is_empty() {
        let mut t = Table::new(&["<events"]);
        t.row(vec![NO_EVENTS.into()]);
        return t;
    }
    let mut t = Table::new(&[
        "<start", "<end", "<series", "before", "after", "change", "<whose",
    ]);
    rows.sort_by_key(|(_, e)| e.start_index);
    for (s, e) in &rows {
        t.row(vec![
            e.start.clone().into(),
            e.end.clone().unwrap_or_else(|| "lasting".into()).into(),
            s.name.clone().into(),
            bounded(s, e.before).into(),
            bounded(s, e.after).into(),
            format!("{:+.0}%", e.change * 100.0).into(),
            whose_note(s, e).unwrap_or_default().into(),
        ]);
    }
    t
}

/// Two watches per series: each one's median and p5-p95, and the ratio of medians.
pub fn compare_table(labels: [&str; 2], a: &WatchSummary, b: &WatchSummary) -> Table {
    let mut t = Table::new(&[
        "<series",
        &format!("{} median", labels[0]),
        &format!("{} p5..p95", labels[0]),
        &format!("{} median", labels[1]),
        &format!("{} p5..p95", labels[1]),
        "ratio",
        "spread ratio",
    ]);
    for sa in &a.series {
        let Some(sb) = b.series.iter().find(|s| s.name == sa.name) else {
            continue;
        };
        let spread = |s: &SeriesSummary| (s.p95 - s.p5) / s.median;
        t.row(vec![
            sa.name.clone().into(),
            bounded(sa, sa.median).into(),
            format!("{}..{}", bounded(sa, sa.p5), bounded(sa, sa.p95)).into(),
            bounded(sb, sb.median).into(),
            format!("{}..{}", bounded(sb, sb.p5), bounded(sb, sb.p95)).into(),
            Cell::float(sb.median / sa.median, 3),
            Cell::float(spread(sb) / spread(sa), 2),
        ]);
    }
    t.note("ratio: the second's median over the first's; spread ratio: the second's (p95 - p5) / median over the first's");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines_are_flat_for_noise_and_tall_for_a_shift() {
        assert_eq!(sparkline(&[100.0, 101.0, 100.0]), "▁▂▁");
        assert_eq!(sparkline(&[100.0, 100.0, 200.0]), "▁▁█");
        assert_eq!(sparkline(&[]), "");
        let long: Vec<f64> = (0..40).map(f64::from).collect();
        assert_eq!(sparkline(&long).chars().count(), SPARK_WIDTH);
    }

    #[test]
    fn a_watch_without_events_says_so_instead_of_an_empty_table() {
        let summary = WatchSummary {
            intervals: 40,
            wall_s: 40.0,
            measuring_s: 2.0,
            measuring_cpu_s: Some(1.8),
            cpu_s: None,
            process_wall_s: None,
            steal_mean: None,
            interrupted: false,
            series: Vec::new(),
            notes: vec!["settle pass: L3 edge <14.7 MiB, under the sweep's pooled bounds".into()],
            settle_edge: None,
        };
        let t = event_table(&summary);
        assert_eq!(t.columns.len(), 1);
        assert_eq!(t.rows.len(), 1);
        assert!(t.text().contains(NO_EVENTS), "{}", t.text());
        // The settle pass's disagreement shows under the summary.
        assert!(
            summary_table(&summary)
                .text()
                .contains("settle pass: L3 edge")
        );
    }

    #[test]
    fn events_read_as_the_issue_writes_them() {
        let s = SeriesSummary {
            name: "memory".into(),
            unit: "ns".into(),
            readings: 40,
            median: 150.0,
            p5: 145.0,
            p95: 210.0,
            events: vec![],
            below: None,
            above: None,
        };
        let e = Event {
            start: "2026-11-25T13:05:12Z".into(),
            end: Some("2026-11-25T13:05:24Z".into()),
            start_index: 12,
            end_index: Some(24),
            before: 148.0,
            after: 212.0,
            change: 212.0 / 148.0 - 1.0,
            with_l1: None,
            with_memory: None,
        };
        assert_eq!(
            event_line(&s, &e),
            "13:05:12-13:05:24 memory 148 -> 212 ns (+43%)"
        );
        let edge = SeriesSummary {
            name: "L3 edge".into(),
            unit: "bytes".into(),
            below: Some(2.0 * 1048576.0),
            above: Some(16.0 * 1048576.0),
            ..s.clone()
        };
        let step = Event {
            end: None,
            end_index: None,
            before: 8.0 * 1048576.0,
            after: 4.5 * 1048576.0,
            change: 4.5 / 8.0 - 1.0,
            ..e.clone()
        };
        assert_eq!(
            event_line(&edge, &step),
            "13:05:12- L3 edge 8 MiB -> 4.5 MiB (-44%), lasting"
        );
        // Below the smallest probe reads as such, not as half of it.
        let under = Event {
            after: 1048576.0,
            change: -0.875,
            ..step.clone()
        };
        assert_eq!(
            event_line(&edge, &under),
            "13:05:12- L3 edge 8 MiB -> <2 MiB (-88%), lasting"
        );
        // A segment whose every reading was the smallest probe (its mean a
        // rounding under it) reads as that probe, not as under it.
        let at_smallest = Event {
            before: 2.0 * 1048576.0 * (1.0 - 4e-15),
            after: 1048576.0,
            change: -0.5,
            ..step.clone()
        };
        assert_eq!(
            event_line(&edge, &at_smallest),
            "13:05:12- L3 edge 2.0 MiB -> <2 MiB (-50%), lasting"
        );
        // At the largest probe, every probe was served: at least that.
        let over = Event {
            after: 16.0 * 1048576.0,
            change: 1.0,
            ..step
        };
        assert_eq!(
            event_line(&edge, &over),
            "13:05:12- L3 edge 8 MiB -> >=16 MiB (+100%), lasting"
        );
        // Where memory moved the same way, the edge's line says it is read against it.
        let wider = Event {
            with_memory: Some(0.85),
            ..over
        };
        assert!(
            event_line(&edge, &wider).ends_with(
                "; memory moved too (+85%): the edge is read against it, so in part memory's"
            ),
            "{}",
            event_line(&edge, &wider)
        );
        // Where L1 moved too, the line says the core did.
        let l2 = SeriesSummary {
            name: "L2".into(),
            ..s.clone()
        };
        let slower = Event {
            before: 3.87,
            after: 4.28,
            change: 4.28 / 3.87 - 1.0,
            with_l1: Some(0.15),
            ..e.clone()
        };
        assert_eq!(
            event_line(&l2, &slower),
            "13:05:12-13:05:24 L2 3.87 -> 4.28 ns (+11%); L1 moved too (+15%): the core, in part"
        );
        let l1 = SeriesSummary {
            name: "L1".into(),
            ..s.clone()
        };
        assert!(
            event_line(
                &l1,
                &Event {
                    with_l1: None,
                    with_memory: None,
                    ..slower
                }
            )
            .ends_with("; the core ran slower or faster (its clock, or a sibling thread)")
        );
    }
}
