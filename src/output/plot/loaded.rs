//! The loaded-latency chart: chase latency against the traffic threads'
//! bandwidth, idle at zero, the knee marked.

use std::path::Path;

use anyhow::Result;

use super::{Chart, Marker, Series};
use crate::experiments::loaded::LoadedResult;

/// Latency (median) against GB/s, one line, the knee as a dashed line.
pub fn chart(r: &LoadedResult) -> Chart {
    let traffic = r.points.get(1).map_or("none".into(), |p| p.traffic.clone());
    let series = vec![Series {
        label: format!("chase latency, {traffic} traffic"),
        points: r
            .points
            .iter()
            .map(|p| (p.bandwidth_bytes_per_second / 1e9, p.latency_ns.median))
            .collect(),
    }];
    let markers = r
        .knee
        .map(|k| Marker {
            at: k.bandwidth_bytes_per_second / 1e9,
            label: format!(
                "knee: 2x unloaded at {:.1} GB/s",
                k.bandwidth_bytes_per_second / 1e9
            ),
        })
        .into_iter()
        .collect();
    Chart {
        title: "Loaded latency: chase latency against the bandwidth of traffic threads".into(),
        x_label: "traffic bandwidth, GB/s (as the threads counted it)".into(),
        y_label: "chase latency, ns per load".into(),
        series,
        markers,
        footnote: Some(format!(
            "memlat loaded, chaser on CPU {}, {} traffic thread(s) on {:?}; idle {:.1} ns",
            r.cpus.chaser,
            r.cpus.traffic.len(),
            r.cpus.traffic,
            r.idle_latency_ns
        )),
        ..Chart::default()
    }
}

/// Draws [`chart`] to `path` (SVG or PNG by extension).
pub fn plot(r: &LoadedResult, path: &Path) -> Result<()> {
    super::line_chart(path, &chart(r))
}
