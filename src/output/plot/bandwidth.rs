//! The bandwidth chart: GB/s against the size per thread, one line per
//! operation and thread count.

use std::path::Path;

use anyhow::Result;

use super::{Chart, Series};
use crate::experiments::bandwidth::BandwidthPoint;

/// An operation's figure of a point (None where it was not measured).
type Figure = fn(&BandwidthPoint) -> Option<f64>;

/// GB/s by size (log x in bytes, log y), a line per operation and thread count.
pub fn chart(points: &[BandwidthPoint], kernel: &str) -> Chart {
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
        footnote: Some(format!(
            "memlat bandwidth, {kernel} kernels; copy counts bytes read plus bytes written"
        )),
        ..Chart::default()
    }
}

/// Draws [`chart`] to `path` (SVG or PNG by extension).
pub fn plot(points: &[BandwidthPoint], kernel: &str, path: &Path) -> Result<()> {
    super::line_chart(path, &chart(points, kernel))
}
