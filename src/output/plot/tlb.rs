//! The TLB chart: translation cost per load against pages touched, one line
//! per page size, each level's reach marked.

use std::path::Path;

use anyhow::Result;

use super::{Chart, Marker, Series};
use crate::experiments::tlb::TlbPageResult;
use crate::units::HumanBytes;

/// Translation ns against pages (log x), one line per page size.
pub fn chart(results: &[TlbPageResult]) -> Chart {
    let series = results
        .iter()
        .map(|r| Series {
            label: format!("{} pages", HumanBytes(r.page_bytes)),
            points: r
                .points
                .iter()
                .map(|p| (p.pages as f64, p.translation_ns))
                .collect(),
        })
        .collect();
    let markers = results
        .iter()
        .flat_map(|r| {
            r.levels.iter().map(move |l| Marker {
                at: l.entries as f64,
                label: format!(
                    "{} {} ({} entries)",
                    HumanBytes(r.page_bytes),
                    l.name,
                    l.entries
                ),
            })
        })
        .collect();
    Chart {
        title: "TLB reach: translation cost per load against pages touched".into(),
        x_label: "pages touched (one line each)".into(),
        y_label: "ns per load more than the same lines packed".into(),
        x_log: true,
        series,
        markers,
        footnote: Some("memlat tlb: a random chain with one line per page, minus one over the same lines packed into few pages".into()),
        ..Chart::default()
    }
}

/// Draws [`chart`] to `path` (SVG or PNG by extension).
pub fn plot(results: &[TlbPageResult], path: &Path) -> Result<()> {
    super::line_chart(path, &chart(results))
}
