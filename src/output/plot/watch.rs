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
            let bands = s
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
            Chart {
                title: format!("{}: {}", s.name, if edge { "where the probes leave the level" } else { "ns per load" }),
                x_label: format!("seconds since {}", file.header.started),
                y_label: if edge { "MiB".into() } else { "ns per load".into() },
                series: vec![Series {
                    label: s.name.clone(),
                    points: t.iter().copied().zip(values).collect(),
                }],
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

/// Draws [`charts`] one above the other to `path` (SVG or PNG by extension).
pub fn plot(file: &WatchFile, summary: &WatchSummary, path: &Path) -> Result<()> {
    super::figure(path, &charts(file, summary))
}
