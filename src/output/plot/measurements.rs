//! Measurements read back from result files (`memlat compare`, `memlat
//! report`) as ns per load by size: one line per result and series.

use super::{Chart, Series};
use crate::analysis::compare::Found;

/// The lines of `sets` (a label, or none, and that result's measurements):
/// one line per series in the order first met; a sweep's pooled levels,
/// which have no size of their own, are left out.
pub fn chart(title: &str, sets: &[(Option<&str>, &[Found])], footnote: Option<String>) -> Chart {
    let mut series = Vec::new();
    for (label, points) in sets {
        let mut lines: Vec<&str> = Vec::new();
        for p in points.iter().filter(|p| p.series != "levels") {
            if !lines.contains(&p.series.as_str()) {
                lines.push(&p.series);
            }
        }
        for line in lines {
            series.push(Series {
                label: label.map_or_else(|| line.to_string(), |l| format!("{l}: {line}")),
                points: points
                    .iter()
                    .filter(|p| p.series == line)
                    .map(|p| (p.size as f64, p.median))
                    .collect(),
            });
        }
    }
    Chart {
        title: title.to_string(),
        x_label: "working-set size".into(),
        y_label: "ns per load".into(),
        x_log: true,
        x_bytes: true,
        y_log: true,
        series,
        footnote,
        ..Chart::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(series: &str, size: u64) -> Found {
        Found {
            key: format!("{series} {size}"),
            series: series.into(),
            size,
            samples: vec![1.0],
            median: 1.0,
        }
    }

    #[test]
    fn one_line_per_series_however_the_points_interleave() {
        let points = [
            found("levels", 1),
            found("stride 64", 1024),
            found("random", 1024),
            found("stride 64", 2048),
            found("random", 2048),
        ];
        let c = chart("t", &[(Some("a"), &points), (None, &points[..2])], None);
        let labels: Vec<&str> = c.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["a: stride 64", "a: random", "stride 64"]);
        assert_eq!(c.series[0].points.len(), 2);
    }
}
