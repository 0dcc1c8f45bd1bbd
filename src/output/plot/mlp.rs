//! The memory-level parallelism chart: bytes per second against chains
//! walked side by side, one line per level.

use std::path::Path;

use anyhow::Result;

use super::{Chart, Series};
use crate::experiments::mlp::MlpLevel;
use crate::units::HumanBytes;

/// GB/s (a line per load) against chains, one line per level; log y, since
/// L1 and memory differ a hundredfold.
pub fn chart(levels: &[MlpLevel], cpu: usize) -> Chart {
    let series: Vec<Series> = levels
        .iter()
        .map(|l| Series {
            label: format!(
                "{} ({}){}",
                l.name,
                HumanBytes(l.size_bytes),
                l.saturation_chains
                    .map(|n| format!(": levels off at {n}"))
                    .unwrap_or_default()
            ),
            points: l
                .points
                .iter()
                .map(|p| (f64::from(p.chains), p.bytes_per_second / 1e9))
                .collect(),
        })
        .collect();
    Chart {
        title: "Memory-level parallelism: throughput against chains walked side by side".into(),
        x_label: "independent chains in one thread (N)".into(),
        y_label: "GB/s (a whole line per load)".into(),
        y_log: true,
        series,
        footnote: Some(format!(
            "memlat mlp, random chains, CPU {cpu}; a level's line flattens where the core runs out of misses it can keep in flight"
        )),
        ..Chart::default()
    }
}

/// Draws [`chart`] to `path` (SVG or PNG by extension).
pub fn plot(levels: &[MlpLevel], cpu: usize, path: &Path) -> Result<()> {
    super::line_chart(path, &chart(levels, cpu))
}
