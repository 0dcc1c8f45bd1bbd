//! The load-to-use chart: cycles per iteration against N, one line per level.

use std::path::Path;

use anyhow::Result;

use super::{Chart, Series};
use crate::analysis::knee::Issue;
use crate::experiments::loaduse::report::LoaduseResult;
use crate::output::present::loaduse::label;

/// Cycles per iteration against N, one line per level (a log y axis when the
/// levels span more than a factor of 20, so L1's knee still shows beside DRAM).
pub fn chart(r: &LoaduseResult) -> Chart {
    let series: Vec<Series> = r
        .levels
        .iter()
        .map(|level| Series {
            label: label(level),
            points: level
                .points
                .iter()
                .map(|p| (f64::from(p.nops), p.cycles_per_iteration))
                .collect(),
        })
        .collect();
    let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    Chart {
        title: "Load to use: cycles per iteration against NOPs between the load and the use".into(),
        x_label: "NOPs between the load and the add (N)".into(),
        y_label: "cycles per iteration".into(),
        y_log: lo > 0.0 && hi / lo > 20.0,
        series,
        footnote: Some(format!(
            "memlat loaduse, {} chain, CPU {}, cycles: {}; reading: {}",
            r.pattern,
            r.cpu,
            r.cycle_source,
            match r.reading.issue {
                Issue::SingleIssue => "single-issue: the knee is the latency".to_string(),
                Issue::MultiIssue => format!(
                    "multi-issue{}: the knee is (latency + 1) x width",
                    r.reading
                        .issue_width
                        .map(|w| format!(", about {w:.1} a cycle"))
                        .unwrap_or_default()
                ),
                Issue::Undetermined => "undetermined".to_string(),
            }
        )),
        ..Chart::default()
    }
}

/// Draws [`chart`] to `path` (SVG or PNG by extension).
pub fn plot(r: &LoaduseResult, path: &Path) -> Result<()> {
    crate::output::plot::line_chart(path, &chart(r))
}
