//! A square matrix as a heatmap (`memlat c2c`, `memlat numa`): one cell per
//! pair, darker for slower, the value written in each cell when they fit.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ImageFormat;
use super::draw::{FAMILY, register_font};

/// What to draw.
#[derive(Debug, Clone, Default)]
pub struct Heatmap {
    /// Caption above the matrix.
    pub title: String,
    /// Row and column labels, in matrix order.
    pub labels: Vec<String>,
    /// What the rows are (e.g. `CPU`, `from node`).
    pub row_name: String,
    /// What the columns are.
    pub column_name: String,
    /// Values (ns); `None` is drawn empty (the diagonal of c2c).
    pub values: Vec<Vec<Option<f64>>>,
    /// Small print under the matrix.
    pub footnote: String,
}

/// Pixel size of the whole image.
const SIZE: u32 = 900;

/// Light (fast) to dark (slow).
fn colour(fraction: f64) -> RGBColor {
    let f = fraction.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    RGBColor(lerp(255.0, 8.0), lerp(247.0, 48.0), lerp(188.0, 107.0))
}

fn drawing<E: std::fmt::Display>(error: E) -> anyhow::Error {
    anyhow!("drawing the heatmap: {error}")
}

/// Draws `map` to `path` (SVG or PNG by extension), replacing it only when done.
pub fn draw(path: &Path, map: &Heatmap) -> Result<()> {
    let format = ImageFormat::of(path, "the plot file")?;
    register_font();
    // Drawn in a fresh private directory beside the target, as every plot
    // is (the backend opens its file by name, following links), then renamed.
    crate::safe_fs::write_via(path, |temporary| match format {
        ImageFormat::Svg => {
            let root = SVGBackend::new(temporary, canvas(map)).into_drawing_area();
            paint(&root, map).and_then(|()| root.present().map_err(drawing))
        }
        ImageFormat::Png => {
            let root = BitMapBackend::new(temporary, canvas(map)).into_drawing_area();
            paint(&root, map).and_then(|()| root.present().map_err(drawing))
        }
    })
    .map_err(|e| e.context(format!("writing {}", path.display())))
}

/// `map` drawn as SVG and returned as text (for an HTML report): drawn in
/// memory, no file.
pub fn svg_string(map: &Heatmap) -> Result<String> {
    register_font();
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, canvas(map)).into_drawing_area();
        paint(&root, map)?;
        root.present().map_err(drawing)?;
    }
    Ok(text)
}

/// Margins around the matrix: left (row labels), top (title), bottom (column labels, notes).
const LEFT: i32 = 110;
const TOP: i32 = 70;
const BOTTOM: i32 = 110;

/// The largest cell, px: a 2-CPU guest's 2x2 matrix stays a small picture
/// rather than a canvas of four 230 px squares.
const MAX_CELL: i32 = 64;

/// One cell's side in pixels for `map`.
fn cell(map: &Heatmap) -> i32 {
    let n = map.labels.len().max(1) as i32;
    let side = (SIZE as i32 - LEFT - 40).min(SIZE as i32 - TOP - BOTTOM);
    (side / n).clamp(1, MAX_CELL)
}

/// The picture's size: full width for the title and notes, as tall as the matrix needs.
fn canvas(map: &Heatmap) -> (u32, u32) {
    let n = map.labels.len().max(1) as i32;
    (SIZE, (TOP + n * cell(map) + BOTTOM) as u32)
}

fn paint<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, map: &Heatmap) -> Result<()> {
    root.fill(&WHITE).map_err(drawing)?;
    let n = map.labels.len().max(1) as i32;
    let (left, top) = (LEFT, TOP);
    let cell = cell(map);
    let text = |size: u32| TextStyle::from((FAMILY, size).into_font()).color(&BLACK);
    root.draw(&Text::new(map.title.clone(), (20, 20), text(20)))
        .map_err(drawing)?;
    let finite: Vec<f64> = map
        .values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(0.0, f64::max);
    let show_values = n <= 24;
    for (i, row) in map.values.iter().enumerate() {
        for (j, value) in row.iter().enumerate() {
            let (x, y) = (left + j as i32 * cell, top + i as i32 * cell);
            let fill = match value {
                Some(v) if hi > lo => colour((v - lo) / (hi - lo)),
                Some(_) => colour(0.5),
                None => RGBColor(235, 235, 235),
            };
            root.draw(&Rectangle::new(
                [(x, y), (x + cell, y + cell)],
                fill.filled(),
            ))
            .map_err(drawing)?;
            if let (Some(v), true) = (value, show_values) {
                let dark = hi > lo && (v - lo) / (hi - lo) > 0.55;
                let style = TextStyle::from((FAMILY, 13).into_font())
                    .color(if dark { &WHITE } else { &BLACK })
                    .pos(Pos::new(HPos::Center, VPos::Center));
                root.draw(&Text::new(
                    format!("{v:.0}"),
                    (x + cell / 2, y + cell / 2),
                    style,
                ))
                .map_err(drawing)?;
            }
        }
    }
    let every = (map.labels.len() / 32).max(1);
    for (k, label) in map
        .labels
        .iter()
        .enumerate()
        .filter(|(k, _)| k % every == 0)
    {
        let centre = k as i32 * cell + cell / 2;
        let right =
            TextStyle::from((FAMILY, 13).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(label.clone(), (left - 6, top + centre), right))
            .map_err(drawing)?;
        let below =
            TextStyle::from((FAMILY, 13).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(
            label.clone(),
            (left + centre, top + n * cell + 6),
            below,
        ))
        .map_err(drawing)?;
    }
    let under = top + n * cell + 30;
    let scale = if hi > lo {
        format!("light {lo:.0} ns to dark {hi:.0} ns")
    } else if lo.is_finite() {
        format!("every pair {lo:.0} ns")
    } else {
        "no pair measured".to_string()
    };
    root.draw(&Text::new(
        format!(
            "rows: {}, columns: {}; {scale}",
            map.row_name, map.column_name
        ),
        (left, under),
        text(14),
    ))
    .map_err(drawing)?;
    root.draw(&Text::new(
        map.footnote.clone(),
        (left, under + 22),
        text(12),
    ))
    .map_err(drawing)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_matrix_draws_to_svg_and_png() {
        let dir = tempfile::tempdir().unwrap();
        let map = Heatmap {
            title: "test".into(),
            labels: vec!["0".into(), "1".into()],
            row_name: "CPU".into(),
            column_name: "CPU".into(),
            values: vec![vec![None, Some(40.0)], vec![Some(42.0), None]],
            footnote: "made in a test".into(),
        };
        for name in ["m.svg", "m.png"] {
            let path = dir.path().join(name);
            draw(&path, &map).unwrap();
            assert!(std::fs::metadata(&path).unwrap().len() > 100);
        }
        let svg = svg_string(&map).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("made in a test"),
            "{svg}"
        );
    }

    fn square(n: usize, value: f64) -> Heatmap {
        Heatmap {
            title: "t".into(),
            labels: (0..n).map(|i| i.to_string()).collect(),
            row_name: "CPU".into(),
            column_name: "CPU".into(),
            values: vec![vec![Some(value); n]; n],
            footnote: String::new(),
        }
    }

    #[test]
    fn a_small_matrix_is_a_small_picture_and_one_value_is_said_once() {
        let two = square(2, 23.0);
        assert_eq!(canvas(&two), (SIZE, (TOP + 2 * MAX_CELL + BOTTOM) as u32));
        // Many CPUs still fill the full square.
        assert_eq!(
            canvas(&square(64, 1.0)).1,
            (TOP + 64 * cell(&square(64, 1.0)) + BOTTOM) as u32
        );
        assert!(canvas(&square(64, 1.0)).1 > canvas(&two).1);
        let svg = svg_string(&two).unwrap();
        assert!(svg.contains("every pair 23 ns"), "{svg}");
        assert!(!svg.contains("23 ns to dark 23 ns"), "{svg}");
    }
}
