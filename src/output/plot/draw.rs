//! Draws planned charts with plotters on an SVG or bitmap backend.

use std::path::Path;
use std::sync::Once;

use anyhow::{Result, anyhow};
use plotters::chart::DualCoordChartContext;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{self, Axis};
use super::{Chart, ImageFormat, PANEL_HEIGHT, WIDTH};

/// DejaVu Sans 2.37 (Debian's fonts-dejavu-core; licence in assets/DejaVuSans-LICENSE.txt).
static FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

/// The family name charts ask for; bound to the embedded font.
pub(super) const FAMILY: &str = "sans-serif";

/// Line colours, in the order series get them (distinct for colour-blind readers first).
const COLOURS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// Band fills, alternating.
const BAND_FILLS: [RGBColor; 2] = [RGBColor(222, 232, 247), RGBColor(250, 238, 214)];

/// Pixel height of one line of band label.
const LABEL_LINE: i32 = 18;

/// Pixel height of one footnote line.
const FOOT_LINE: i32 = 17;

/// Characters of 13-pixel footnote text that fit across a chart.
const FOOT_CHARS: usize = 150;

/// Axes place values linearly over their drawing coordinates, with the ticks
/// axis.rs planned (labelled ticks bold, the in-between grid light).
impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let fraction = (value - self.lo) / (self.hi - self.lo);
        let length = (limit.1 - limit.0) as f64;
        if !fraction.is_finite() {
            return limit.0;
        }
        limit.0 + (length * fraction + 1e-3).floor() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

pub(super) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans font is a valid TrueType file"));
    });
}

fn drawing<E: std::fmt::Display>(error: E) -> anyhow::Error {
    anyhow!("drawing the chart: {error}")
}

/// Draws `charts` stacked into `path`.
pub(super) fn figure(path: &Path, format: ImageFormat, charts: &[Chart]) -> Result<()> {
    register_font();
    let size = (WIDTH, PANEL_HEIGHT * charts.len() as u32);
    let context = || format!("writing {}", path.display());
    match format {
        ImageFormat::Svg => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw_all(&root, charts)?;
            root.present().map_err(|e| anyhow!("{}: {e}", context()))?;
        }
        ImageFormat::Png => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw_all(&root, charts)?;
            root.present().map_err(|e| anyhow!("{}: {e}", context()))?;
        }
    }
    Ok(())
}

fn draw_all<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, charts: &[Chart]) -> Result<()> {
    root.fill(&WHITE).map_err(drawing)?;
    let panels = root.split_evenly((charts.len(), 1));
    // Stacked charts share their x positions: all keep room for a right axis if one has it.
    let right_axis = charts.iter().any(|c| c.y2.is_some());
    for (panel, chart) in panels.iter().zip(charts) {
        draw_chart(panel, chart, right_axis)?;
    }
    Ok(())
}

/// A series' points in drawing coordinates, in x order, off-axis values dropped.
fn mapped(points: &[(f64, f64)], x: &Axis, y: &Axis) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|&(px, py)| Some((x.map(px)?, y.map(py)?)))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The chart's context: the primary axes and the secondary (right) ones.
type Ctx<'a, DB> = DualCoordChartContext<'a, DB, Cartesian2d<Axis, Axis>, Cartesian2d<Axis, Axis>>;

/// A band as drawn: its left and right x in axis coordinates, and its label.
type BandEdge<'c> = (f64, f64, &'c str);

/// A drawn series: its label and points in axis coordinates (for the legend).
type Drawn<'c> = (&'c str, Vec<(f64, f64)>);

/// Draws one chart: its axes, bands, sysfs markers, lines, band labels,
/// legend and footnote, in that order (later ones on top).
fn draw_chart<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    chart: &Chart,
    right_axis: bool,
) -> Result<()> {
    let label_lines = chart
        .bands
        .iter()
        .map(|b| b.label.lines().count())
        .max()
        .unwrap_or(0);
    let foot_lines = chart.footnote.as_deref().map_or_else(Vec::new, wrap);
    let (main, foot) = match foot_lines.len() {
        0 => (panel.clone(), None),
        n => {
            let height = panel.dim_in_pixel().1 as i32;
            let (main, foot) = panel.split_vertically(height - 8 - FOOT_LINE * n as i32);
            (main, Some(foot))
        }
    };
    let (x, y) = axes_with_room(chart, label_lines, plot_size(&main, right_axis));
    let mut ctx = frame(&main, chart, &x, &y, right_axis)?;
    let band_edges = draw_bands(&mut ctx, chart, &x, &y)?;
    draw_markers(&mut ctx, chart, &x, &y)?;
    draw_envelopes(&mut ctx, chart, &x, &y)?;
    let legend = draw_lines(&mut ctx, chart, &x, &y)?;
    draw_band_labels(&mut ctx, &band_edges, &y)?;
    if !legend.is_empty() {
        let (w, h) = ctx.plotting_area().dim_in_pixel();
        let place = legend_place(&legend, &x, &y, (w as i32, h as i32), label_lines);
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::Coordinate(place.0, place.1))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(170, 170, 170))
            .label_font((FAMILY, 14))
            .draw()
            .map_err(drawing)?;
    }
    if let Some(foot) = foot {
        for (i, line) in foot_lines.iter().enumerate() {
            foot.draw(&Text::new(
                line.as_str(),
                (14, 2 + FOOT_LINE * i as i32),
                (FAMILY, 13).into_font().color(&RGBColor(90, 90, 90)),
            ))
            .map_err(drawing)?;
        }
    }
    Ok(())
}

/// The x and y axes the chart's points need, with headroom on top for
/// `label_lines` lines of band labels.
/// The plotting area's size in pixels inside `main`, as [`frame`] lays it
/// out (margins, label areas, caption), before anything is drawn.
fn plot_size<DB: DrawingBackend>(main: &DrawingArea<DB, Shift>, right_axis: bool) -> (i32, i32) {
    let (w, h) = main.dim_in_pixel();
    let right = if right_axis { 70 } else { 0 };
    (w as i32 - 24 - 70 - right, h as i32 - 24 - 50 - 30)
}

/// The axes, with the y axis raised where every place for the legend would
/// cover data: a legend over the lines hides them, so the lines move down
/// until it fits above them.
fn axes_with_room(chart: &Chart, label_lines: usize, size: (i32, i32)) -> (Axis, Axis) {
    let base = 0.06 + 0.045 * label_lines as f64;
    let (x, y) = axes(chart, base);
    let drawn: Vec<Drawn> = chart
        .series
        .iter()
        .map(|s| (s.label.as_str(), mapped(&s.points, &x, &y)))
        .filter(|(_, points)| !points.is_empty())
        .collect();
    if drawn.is_empty() || size.1 <= 0 {
        return (x, y);
    }
    // Only the top corners count: the size here is an estimate, and a free
    // top corner is where the legend goes first (a bottom one may be off by pixels).
    let (_, covered) = legend_cover(&drawn, &x, &y, size, label_lines, 2);
    let need = (8 + LABEL_LINE * label_lines as i32 + legend_height(drawn.len()) + 12) as f64;
    let height = size.1 as f64;
    if covered == 0 || need * 2.0 > height {
        return (x, y);
    }
    // Headroom h puts the data's top at 1/(1+h) of the height: leave `need` pixels free.
    axes(chart, base.max(need / (height - need)))
}

fn axes(chart: &Chart, headroom: f64) -> (Axis, Axis) {
    let points = || {
        let envelopes = chart
            .envelopes
            .iter()
            .flat_map(|e| e.points.iter().flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)]));
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .chain(envelopes)
    };
    let x = axis::x_axis(points().map(|p| p.0), chart.x_log, chart.x_bytes);
    let y = axis::y_axis(points().map(|p| p.1), chart.y_log, headroom);
    (x, y)
}

/// The caption, the mesh and the axes' descriptions, the right axis when
/// the chart has one (room for it kept when `right_axis`).
fn frame<'a, DB: DrawingBackend>(
    main: &'a DrawingArea<DB, Shift>,
    chart: &Chart,
    x: &Axis,
    y: &Axis,
    right_axis: bool,
) -> Result<Ctx<'a, DB>> {
    let mut builder = ChartBuilder::on(main);
    builder
        .caption(&chart.title, (FAMILY, 22))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70);
    if right_axis {
        builder.right_y_label_area_size(70);
    }
    let y2 = chart
        .y2
        .as_ref()
        .filter(|s| s.factor.is_finite() && s.factor > 0.0)
        .map(|s| axis::secondary(y, s.factor));
    let y2_plan = y2.clone().unwrap_or_else(|| y.clone());
    let mut ctx = builder
        .build_cartesian_2d(x.clone(), y.clone())
        .map_err(drawing)?
        .set_secondary_coord(x.clone(), y2_plan);
    ctx.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .x_label_formatter(&|t| x.label(*t))
        .y_label_formatter(&|t| y.label(*t))
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .bold_line_style(RGBColor(200, 200, 200))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .map_err(drawing)?;
    if let (Some(secondary), Some(spec)) = (&y2, &chart.y2) {
        ctx.configure_secondary_axes()
            .y_desc(spec.label.as_str())
            .y_label_formatter(&|t| secondary.label(*t))
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()
            .map_err(drawing)?;
    }
    Ok(ctx)
}

/// The level bands, under the lines, with a grey rule at each inner edge.
fn draw_bands<'c, DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    chart: &'c Chart,
    x: &Axis,
    y: &Axis,
) -> Result<Vec<BandEdge<'c>>> {
    let mut band_edges = Vec::new();
    for (i, band) in chart.bands.iter().enumerate() {
        let from = x.map(band.from).map_or(x.lo, |t| x.clamp(t));
        let to = x.map(band.to).map_or(x.hi, |t| x.clamp(t));
        if to <= from {
            continue;
        }
        let fill = BAND_FILLS[i % BAND_FILLS.len()];
        ctx.draw_series(std::iter::once(Rectangle::new(
            [(from, y.lo), (to, y.hi)],
            fill.mix(0.7).filled(),
        )))
        .map_err(drawing)?;
        band_edges.push((from, to, band.label.as_str()));
    }
    for &(_, to, _) in &band_edges {
        if to < x.hi {
            ctx.draw_series(std::iter::once(PathElement::new(
                vec![(to, y.lo), (to, y.hi)],
                RGBColor(150, 150, 150).stroke_width(1),
            )))
            .map_err(drawing)?;
        }
    }
    Ok(band_edges)
}

/// The claimed cache sizes as dashed verticals with rotated labels.
fn draw_markers<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    chart: &Chart,
    x: &Axis,
    y: &Axis,
) -> Result<()> {
    let marker_style =
        TextStyle::from((FAMILY, 12).into_font().transform(FontTransform::Rotate270))
            .color(&RGBColor(110, 110, 110));
    // The rotated labels are 12 px tall: markers closer than 16 px to the
    // previous one (p99 and p99.9 often are) share one label, at the first.
    let mut labels: Vec<(f64, i32, String)> = Vec::new();
    for marker in &chart.markers {
        let Some(at) = x.map(marker.at).filter(|t| (x.lo..=x.hi).contains(t)) else {
            continue;
        };
        ctx.draw_series(DashedLineSeries::new(
            [(at, y.lo), (at, y.hi)],
            6,
            4,
            RGBColor(120, 120, 120).stroke_width(1),
        ))
        .map_err(drawing)?;
        let px = ctx.backend_coord(&(at, y.lo)).0;
        match labels.last_mut() {
            Some((_, last, text)) if (px - *last).abs() < 16 => {
                *last = px;
                text.push_str(", ");
                text.push_str(&marker.label);
            }
            _ => labels.push((at, px, marker.label.clone())),
        }
    }
    for (at, _, text) in labels {
        ctx.plotting_area()
            .draw(
                &(EmptyElement::at((at, y.lo)) + Text::new(text, (-15, -6), marker_style.clone())),
            )
            .map_err(drawing)?;
    }
    Ok(())
}

/// Each envelope as a light polygon in its line's colour, under the lines.
fn draw_envelopes<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    chart: &Chart,
    x: &Axis,
    y: &Axis,
) -> Result<()> {
    for envelope in &chart.envelopes {
        let colour = COLOURS[envelope.series % COLOURS.len()];
        let low: Vec<(f64, f64)> = envelope.points.iter().map(|p| (p.0, p.1)).collect();
        let high: Vec<(f64, f64)> = envelope.points.iter().map(|p| (p.0, p.2)).collect();
        let (low, mut high) = (mapped(&low, x, y), mapped(&high, x, y));
        if low.len() < 2 || low.len() != high.len() {
            continue;
        }
        high.reverse();
        let outline: Vec<(f64, f64)> = low.into_iter().chain(high).collect();
        ctx.draw_series(std::iter::once(Polygon::new(
            outline,
            colour.mix(0.22).filled(),
        )))
        .map_err(drawing)?;
    }
    Ok(())
}

/// The series as lines with dots; returns each drawn series' label and
/// points, for placing the legend where it covers the fewest.
fn draw_lines<'c, DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    chart: &'c Chart,
    x: &Axis,
    y: &Axis,
) -> Result<Vec<Drawn<'c>>> {
    let mut legend = Vec::new();
    for (i, series) in chart.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points = mapped(&series.points, x, y);
        if points.is_empty() {
            continue;
        }
        ctx.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
            .map_err(drawing)?
            .label(series.label.as_str())
            .legend(move |(lx, ly)| {
                PathElement::new(vec![(lx, ly), (lx + 22, ly)], colour.stroke_width(3))
            });
        ctx.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(drawing)?;
        legend.push((series.label.as_str(), points));
    }
    Ok(legend)
}

/// Each band's label, centred at its top, over the lines.
fn draw_band_labels<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    band_edges: &[BandEdge],
    y: &Axis,
) -> Result<()> {
    let label_style = TextStyle::from((FAMILY, 14).into_font())
        .color(&RGBColor(60, 60, 60))
        .pos(Pos::new(HPos::Center, VPos::Top));
    for &(from, to, label) in band_edges {
        let centre = (from + to) / 2.0;
        for (line_no, line) in label.lines().enumerate() {
            ctx.plotting_area()
                .draw(
                    &(EmptyElement::at((centre, y.hi))
                        + Text::new(
                            line.to_string(),
                            (0, 5 + LABEL_LINE * line_no as i32),
                            label_style.clone(),
                        )),
                )
                .map_err(drawing)?;
        }
    }
    Ok(())
}

/// Splits a footnote into lines that fit the width: at its newlines, and
/// at `; ` or spaces before [`FOOT_CHARS`] characters.
fn wrap(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split_inclusive(' ') {
            if line.chars().count() + word.chars().count() > FOOT_CHARS && !line.is_empty() {
                lines.push(line.trim_end().to_string());
                line.clear();
            }
            line.push_str(word);
        }
        if !line.trim().is_empty() {
            lines.push(line.trim_end().to_string());
        }
    }
    lines
}

/// The legend's top-left corner in plotting-area pixels: of six candidate
/// places (below the band labels at the top, the middle, the bottom; left or
/// right), the one that covers the fewest points of the lines.
fn legend_place(
    legend: &[Drawn],
    x: &Axis,
    y: &Axis,
    size: (i32, i32),
    label_lines: usize,
) -> (i32, i32) {
    legend_cover(legend, x, y, size, label_lines, usize::MAX).0
}

/// The legend's height in pixels for `entries` lines.
fn legend_height(entries: usize) -> i32 {
    10 + 20 * entries as i32
}

/// The place for the legend that covers the fewest points of the lines, and
/// how many it covers, among the first `tried` places (the top corners first).
fn legend_cover(
    legend: &[Drawn],
    x: &Axis,
    y: &Axis,
    (w, h): (i32, i32),
    label_lines: usize,
    tried: usize,
) -> ((i32, i32), usize) {
    let longest = legend
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0) as i32;
    let lw = 50 + 8 * longest;
    let lh = legend_height(legend.len());
    let top = 8 + LABEL_LINE * label_lines as i32;
    let left = 10;
    let right = (w - lw - 10).max(left);
    let bottom = (h - lh - 10).max(top);
    let middle = ((top + bottom) / 2).max(top);
    let candidates = [
        (left, top),
        (right, top),
        (right, bottom),
        (left, bottom),
        (left, middle),
        (right, middle),
    ];
    // Points along every segment, in pixels.
    let to_px = |(tx, ty): (f64, f64)| {
        let px = (tx - x.lo) / (x.hi - x.lo) * w as f64;
        let py = (y.hi - ty) / (y.hi - y.lo) * h as f64;
        (px, py)
    };
    let mut trace = Vec::new();
    for (_, points) in legend {
        for pair in points.windows(2) {
            let (a, b) = (to_px(pair[0]), to_px(pair[1]));
            for k in 0..=8 {
                let f = k as f64 / 8.0;
                trace.push((a.0 + (b.0 - a.0) * f, a.1 + (b.1 - a.1) * f));
            }
        }
        trace.extend(points.iter().map(|&p| to_px(p)));
    }
    let covered = |&(cx, cy): &(i32, i32)| {
        let (cx, cy) = (cx as f64 - 6.0, cy as f64 - 6.0);
        trace
            .iter()
            .filter(|&&(px, py)| {
                px >= cx && px <= cx + lw as f64 + 12.0 && py >= cy && py <= cy + lh as f64 + 12.0
            })
            .count()
    };
    candidates
        .iter()
        .take(tried)
        .map(|c| (*c, covered(c)))
        .min_by_key(|&(_, n)| n)
        .unwrap_or(((left, top), 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::plot::Series;

    fn lines(series: Vec<Vec<(f64, f64)>>) -> Chart {
        Chart {
            series: series
                .into_iter()
                .enumerate()
                .map(|(i, points)| Series {
                    label: format!("line {i}"),
                    points,
                })
                .collect(),
            ..Chart::default()
        }
    }

    #[test]
    fn the_y_axis_rises_only_when_the_top_corners_hold_data() {
        let size = (800, 400);
        // Flat at the top from edge to edge: no top corner is free.
        let covered = lines(vec![(1..=20).map(|i| (i as f64, 10.0)).collect()]);
        let (_, plain) = axes(&covered, 0.06);
        let (_, raised) = axes_with_room(&covered, 0, size);
        assert!(raised.hi > plain.hi + 0.5, "{} vs {}", raised.hi, plain.hi);
        // Falling from the top-left to the bottom-right: the top-right is free.
        let falling = lines(vec![
            (1..=20).map(|i| (i as f64, 21.0 - i as f64)).collect(),
        ]);
        let (_, plain) = axes(&falling, 0.06);
        let (_, kept) = axes_with_room(&falling, 0, size);
        assert_eq!(kept.hi, plain.hi);
    }

    #[test]
    fn footnotes_wrap_between_words() {
        let long = "word ".repeat(70);
        let lines = wrap(&long);
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.len() <= FOOT_CHARS));
        assert_eq!(wrap("a\nb"), ["a", "b"]);
        assert!(wrap("").is_empty());
    }
}
