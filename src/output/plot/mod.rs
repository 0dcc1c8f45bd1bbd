//! Line charts as SVG or PNG (plotters, pure Rust): a generic [`Chart`] that any
//! command can fill in, drawn by [`line_chart`] (one chart) or [`figure`]
//! (several stacked in one file). The file extension picks the format.
//!
//! PNG text is drawn with DejaVu Sans compiled into the binary (assets/, with
//! its licence), so nothing depends on fontconfig or the fonts a machine has;
//! SVG text names `sans-serif` and the viewer draws it.

mod axis;
pub mod bandwidth;
pub mod distribution;
mod draw;
pub mod heatmap;
pub mod loaded;
pub mod loaduse;
pub mod measurements;
pub mod mlp;
pub mod sweep;
pub mod tlb;
pub mod watch;

use std::path::Path;

use anyhow::Result;

use crate::error::UsageError;

pub use axis::{byte_label, number_label};

/// One chart: axes, lines and shaded bands.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    /// Caption above the chart.
    pub title: String,
    /// Text under the x axis.
    pub x_label: String,
    /// Text beside the y axis.
    pub y_label: String,
    /// Logarithmic x axis (ticks at powers of 2, or of 10 for plain numbers over wide ranges).
    pub x_log: bool,
    /// Label x ticks as byte sizes (`1 KiB`, `4 MiB`) rather than numbers.
    pub x_bytes: bool,
    /// Logarithmic y axis; otherwise linear from zero (seed 004's `ylim(0)`).
    pub y_log: bool,
    /// The lines, each drawn with point markers and named in the legend.
    pub series: Vec<Series>,
    /// Vertical shaded x ranges with a label at their top (e.g. detected cache levels).
    pub bands: Vec<Band>,
    /// Shaded ranges around lines (e.g. p50 to p99 around the median).
    pub envelopes: Vec<Envelope>,
    /// Dashed vertical lines with a label along them (e.g. the cache sizes sysfs claims).
    pub markers: Vec<Marker>,
    /// A second y axis on the right showing the same values scaled (e.g. GB/s beside bytes/cycle).
    pub y2: Option<SecondaryAxis>,
    /// Small print under the chart (how the values were obtained).
    pub footnote: Option<String>,
}

/// One line of a chart.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Name in the legend.
    pub label: String,
    /// (x, y) points; non-finite values are skipped and points are drawn in x order.
    pub points: Vec<(f64, f64)>,
}

/// A shaded range around the line `series` (an index into `Chart::series`,
/// whose colour it takes): from `low` to `high` at each x.
#[derive(Debug, Clone, Default)]
pub struct Envelope {
    /// The line it surrounds.
    pub series: usize,
    /// (x, low, high) points, drawn in x order; non-finite ones are skipped.
    pub points: Vec<(f64, f64, f64)>,
}

/// A shaded vertical band from `from` to `to` on the x axis.
#[derive(Debug, Clone, Default)]
pub struct Band {
    /// Left edge (x units; clipped to the chart).
    pub from: f64,
    /// Right edge (x units; clipped to the chart).
    pub to: f64,
    /// Text at the top of the band; `\n` starts a second line.
    pub label: String,
}

/// A dashed vertical line at `at` on the x axis, labelled along its foot.
#[derive(Debug, Clone, Default)]
pub struct Marker {
    /// Position (x units); markers off the chart are not drawn.
    pub at: f64,
    /// Text written upwards beside the line.
    pub label: String,
}

/// A right-hand y axis: the left axis's values times `factor`.
#[derive(Debug, Clone, Default)]
pub struct SecondaryAxis {
    /// Text beside the right axis.
    pub label: String,
    /// Right value = left value x factor (must be positive).
    pub factor: f64,
}

/// Output formats, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// `.svg`: vector, text drawn by the viewer.
    Svg,
    /// `.png`: bitmap, text drawn with the embedded font.
    Png,
}

impl ImageFormat {
    /// The format for `path`'s extension (case-insensitive), or a usage error naming `flag`.
    pub fn of(path: &Path, flag: &str) -> Result<ImageFormat, UsageError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(ImageFormat::Svg),
            Some("png") => Ok(ImageFormat::Png),
            _ => Err(UsageError(format!(
                "{flag} {}: the plot file must end in .svg or .png",
                path.display()
            ))),
        }
    }
}

/// Width of a chart in pixels.
pub const WIDTH: u32 = 1100;
/// Height of one chart (one panel of a figure) in pixels.
pub const PANEL_HEIGHT: u32 = 620;

/// Draws one chart to `path` (SVG or PNG by extension).
pub fn line_chart(path: &Path, chart: &Chart) -> Result<()> {
    figure(path, std::slice::from_ref(chart))
}

/// Draws `charts` one above the other in one file (SVG or PNG by
/// extension): into a temporary file beside it, renamed over it when done,
/// so a failed or interrupted drawing leaves an existing plot as it was.
pub fn figure(path: &Path, charts: &[Chart]) -> Result<()> {
    let format = ImageFormat::of(path, "the plot file")?;
    if charts.is_empty() {
        anyhow::bail!("nothing to plot in {}", path.display());
    }
    // Drawn in a fresh private directory beside the target (the backend
    // opens its file by name, following links: none can be planted inside),
    // then renamed over it. The temporary keeps the name and so the
    // extension: it tells the backend what to draw.
    crate::safe_fs::write_via(path, |temporary| draw::figure(temporary, format, charts))
        .map_err(|e| e.context(format!("writing {}", path.display())))
}

/// `charts` drawn as SVG and returned as text (for an HTML report): drawn
/// in a fresh private directory under the temporary directory, read back
/// and removed with it.
pub fn svg_string(charts: &[Chart]) -> Result<String> {
    let tmp = crate::safe_fs::Dir::open(&std::env::temp_dir())?;
    let private = crate::safe_fs::PrivateDir::create(&tmp)?;
    let path = private.dir.path_for("chart.svg".as_ref());
    if charts.is_empty() {
        anyhow::bail!("nothing to plot");
    }
    draw::figure(&path, ImageFormat::Svg, charts)?;
    Ok(std::fs::read_to_string(&path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_chart() -> Chart {
        Chart {
            title: "latency".into(),
            x_label: "size".into(),
            y_label: "ns per load".into(),
            x_log: true,
            x_bytes: true,
            series: vec![
                Series {
                    label: "stride 64".into(),
                    points: vec![(1024.0, 1.0), (65536.0, 3.0), (1e8, 9.0)],
                },
                Series {
                    label: "random".into(),
                    points: vec![(1024.0, 1.2), (65536.0, 4.0), (1e8, f64::NAN)],
                },
            ],
            bands: vec![
                Band {
                    from: 0.0,
                    to: 32768.0,
                    label: "L1\n1.0 ns".into(),
                },
                Band {
                    from: 32768.0,
                    to: 1e9,
                    label: "memory".into(),
                },
            ],
            markers: vec![Marker {
                at: 32768.0,
                label: "sysfs L1d".into(),
            }],
            y2: Some(SecondaryAxis {
                label: "GB/s".into(),
                factor: 2.5,
            }),
            footnote: Some("test".into()),
            ..Chart::default()
        }
    }

    #[test]
    fn svg_and_png_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("a.svg");
        line_chart(&svg, &sample_chart()).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.starts_with("<svg"));
        assert!(text.contains("stride 64"));
        let png = dir.path().join("a.PNG");
        figure(&png, &[sample_chart(), sample_chart()]).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
    }

    #[test]
    fn a_linear_chart_and_an_empty_series_still_draw() {
        let dir = tempfile::tempdir().unwrap();
        let chart = Chart {
            title: "cycles vs nops".into(),
            series: vec![
                Series {
                    label: "a".into(),
                    points: vec![(0.0, 4.0), (10.0, 5.0), (20.0, 12.0)],
                },
                Series::default(),
            ],
            ..Chart::default()
        };
        line_chart(&dir.path().join("b.png"), &chart).unwrap();
    }

    #[test]
    fn the_extension_picks_the_format() {
        assert_eq!(
            ImageFormat::of(Path::new("x.svg"), "--plot").unwrap(),
            ImageFormat::Svg
        );
        assert_eq!(
            ImageFormat::of(Path::new("x.Png"), "--plot").unwrap(),
            ImageFormat::Png
        );
        let err = ImageFormat::of(Path::new("x.pdf"), "--plot").unwrap_err();
        assert!(err.0.contains("--plot x.pdf"));
    }
}
