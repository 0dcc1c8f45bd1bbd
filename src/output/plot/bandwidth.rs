//! The bandwidth chart: GB/s against the size per thread, one line per
//! operation and thread count; a sweep's measured levels shaded behind.

use std::path::Path;

use anyhow::Result;

use super::{Band, Chart, Series};
use crate::experiments::bandwidth::{self, BandwidthPoint};
use crate::experiments::plateaus::MeasuredLevels;

/// An operation's figure of a point (None where it was not measured).
type Figure = fn(&BandwidthPoint) -> Option<f64>;

/// GB/s by size (log x in bytes, log y), a line per operation and thread
/// count; with `levels`, each measured plateau and memory as a band.
pub fn chart(points: &[BandwidthPoint], kernel: &str, levels: Option<&MeasuredLevels>) -> Chart {
    let mut threads: Vec<usize> = points.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut series = Vec::new();
    for &t in &threads {
        let at: Vec<&BandwidthPoint> = points.iter().filter(|p| p.threads == t).collect();
        let ops: [(&str, Figure); 4] = [
            ("read", |p| Some(p.read_gb_per_s)),
            ("write", |p| Some(p.write_gb_per_s)),
            ("copy", |p| Some(p.copy_gb_per_s)),
            ("nt-write", |p| p.nt_write_gb_per_s),
        ];
        for (name, value) in ops {
            let xy: Vec<(f64, f64)> = at
                .iter()
                .filter_map(|p| value(p).map(|v| (p.size_bytes as f64, v)))
                .collect();
            if !xy.is_empty() {
                series.push(Series {
                    label: format!("{name}, {t} thread(s)"),
                    points: xy,
                });
            }
        }
    }
    Chart {
        title: "Bandwidth by working-set size".into(),
        x_label: "buffer per thread".into(),
        y_label: "GB/s (all threads)".into(),
        x_log: true,
        x_bytes: true,
        y_log: true,
        series,
        bands: levels.map_or_else(Vec::new, level_bands),
        footnote: Some(format!(
            "memlat bandwidth, {kernel} kernels; copy counts bytes read plus bytes written{}",
            if levels.is_some() {
                "; shaded: the measured latency plateaus, and memory from twice the last capacity"
            } else {
                ""
            }
        )),
        ..Chart::default()
    }
}

/// Each measured plateau as a band (the first from the left edge: smaller
/// sizes fit it too), and memory from [`bandwidth::memory_from`] on.
pub fn level_bands(levels: &MeasuredLevels) -> Vec<Band> {
    let mut bands: Vec<Band> = levels
        .levels
        .iter()
        .enumerate()
        .map(|(k, p)| Band {
            from: if k == 0 { 0.0 } else { p.from_bytes as f64 },
            to: p.to_bytes as f64,
            label: p.name.clone(),
        })
        .collect();
    if let Some(m) = bandwidth::memory_from(levels) {
        bands.push(Band {
            from: m as f64,
            to: f64::INFINITY,
            label: "memory".into(),
        });
    }
    bands
}

/// Draws [`chart`] to `path` (SVG or PNG by extension).
pub fn plot(
    points: &[BandwidthPoint],
    kernel: &str,
    levels: Option<&MeasuredLevels>,
    path: &Path,
) -> Result<()> {
    super::line_chart(path, &chart(points, kernel, levels))
}
