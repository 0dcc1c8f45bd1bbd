//! A watch's timeline: one panel per level (and the shared edge), each
//! event shaded from its first interval to its last.

use std::path::Path;

use anyhow::Result;

use super::{Band, Chart, Series};
use crate::experiments::watch::{WatchFile, WatchSummary};

/// One chart per series of `file` over seconds since its start.
pub fn charts(file: &WatchFile, summary: &WatchSummary) -> Vec<Chart> {
    let t: Vec<f64> = file.intervals.iter().map(|i| i.t_s).collect();
    let interval = file.header.plan.interval_s;
    let end_t = |k: usize| t.get(k).copied().unwrap_or(f64::NAN) + interval;
    summary
        .series
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let edge = s.unit == "bytes";
            let values: Vec<f64> = file
                .intervals
                .iter()
                .map(|i| {
                    if edge {
                        i.edge_bytes.map_or(f64::NAN, |b| b as f64 / 1048576.0)
                    } else {
                        i.ns.get(k).copied().unwrap_or(f64::NAN)
                    }
                })
                .collect();
            let bands: Vec<Band> = s
                .events
                .iter()
                .map(|e| Band {
                    from: t.get(e.start_index).copied().unwrap_or(0.0),
                    to: e.end_index.map_or_else(
                        || t.last().copied().unwrap_or(0.0) + interval,
                        end_t,
                    ),
                    label: format!("{:+.0}%", e.change * 100.0),
                })
                .collect();
            let span = t.last().copied().unwrap_or(0.0) + interval - t.first().copied().unwrap_or(0.0);
            let bands = staggered(bands, span);
            // The edge's readings at the largest probe (every probe served)
            // or below the smallest are bounds, not places: drawn apart.
            let mib = |b: f64| b / 1048576.0;
            let (above, below) = (s.above.map(mib), s.below.map(mib));
            let split = |keep: &dyn Fn(f64) -> bool| -> Vec<(f64, f64)> {
                t.iter()
                    .zip(&values)
                    .map(|(&x, &v)| (x, if keep(v) { v } else { f64::NAN }))
                    .collect()
            };
            let at_top = |v: f64| edge && above.is_some_and(|a| v >= a * (1.0 - 1e-9));
            let at_bottom = |v: f64| edge && below.is_some_and(|b| v < b);
            let mut series = vec![Series {
                label: s.name.clone(),
                points: split(&|v| !at_top(v) && !at_bottom(v)),
            }];
            if let Some(a) = above.filter(|_| values.iter().any(|&v| at_top(v))) {
                series.push(Series {
                    label: format!(">= {a:.1} MiB: every probe served (a bound)"),
                    points: split(&at_top),
                });
            }
            if let Some(b) = below.filter(|_| values.iter().any(|&v| at_bottom(v))) {
                series.push(Series {
                    label: format!("< {b:.1} MiB: no probe served (a bound)"),
                    points: split(&at_bottom),
                });
            }
            Chart {
                title: format!("{}: {}", s.name, if edge { "where the probes leave the level" } else { "ns per load" }),
                x_label: format!("seconds since {}", file.header.started),
                y_label: if edge { "MiB".into() } else { "ns per load".into() },
                series,
                bands,
                footnote: Some(format!(
                    "memlat watch, CPU {}, every {} s; shaded: events (shifts of 10% or more beyond the series' own noise)",
                    file.header.cpu, interval
                )),
                ..Chart::default()
            }
        })
        .collect()
}

/// Band labels closer than about a twelfth of the chart's `span` (in x
/// units) to the last one on a line go a line lower, so events close in
/// time do not print their labels over each other.
fn staggered(mut bands: Vec<Band>, span: f64) -> Vec<Band> {
    let room = span.abs() / 12.0;
    // The centre of the last label on each line.
    let mut last: Vec<f64> = Vec::new();
    bands.sort_by(|a, b| a.from.total_cmp(&b.from));
    for band in &mut bands {
        let centre = (band.from + band.to) / 2.0;
        let line = last
            .iter()
            .position(|&c| centre - c >= room)
            .unwrap_or(last.len());
        if line == last.len() {
            last.push(centre);
        } else {
            last[line] = centre;
        }
        band.label = format!("{}{}", "\n".repeat(line), band.label);
    }
    bands
}

/// Draws [`charts`] one above the other to `path` (SVG or PNG by extension).
pub fn plot(file: &WatchFile, summary: &WatchSummary, path: &Path) -> Result<()> {
    super::figure(path, &charts(file, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_of_events_close_in_time_go_a_line_lower() {
        let band = |from: f64| Band {
            from,
            to: from + 1.0,
            label: "+12%".into(),
        };
        let out = staggered(vec![band(0.0), band(2.0), band(50.0), band(3.0)], 120.0);
        let labels: Vec<&str> = out.iter().map(|b| b.label.as_str()).collect();
        // 0 and 50 on the first line; 2 and 3 below, each a line lower.
        assert_eq!(labels, ["+12%", "\n+12%", "\n\n+12%", "+12%"]);
    }
}
