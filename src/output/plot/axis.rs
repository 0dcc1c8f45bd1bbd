//! Axis ranges, tick positions and tick labels: pure arithmetic, tested here,
//! so the drawing code only places what this computes.
//!
//! A logarithmic axis is drawn as a linear axis over log2 of the value, which
//! puts ticks exactly on powers of two (cache sizes) or of ten (plain numbers).

use crate::units::HumanBytes;

/// Labels wanted on an axis, at most.
const MAX_TICKS: usize = 12;

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    /// Values as they are.
    Linear,
    /// log2 of the value (values must be positive).
    Log,
}

/// A planned axis: its range and ticks in drawing coordinates.
#[derive(Debug, Clone)]
pub(crate) struct Axis {
    /// Linear, or log2 of the value.
    pub scale: Scale,
    /// Tick labels as byte sizes.
    pub bytes: bool,
    /// Drawing-coordinate range, low end.
    pub lo: f64,
    /// Drawing-coordinate range, high end.
    pub hi: f64,
    /// Labelled ticks, drawing coordinates.
    pub ticks: Vec<f64>,
    /// Unlabelled grid lines between ticks, drawing coordinates.
    pub light: Vec<f64>,
}

impl Axis {
    /// Value -> drawing coordinate (`None` when a log axis gets a value <= 0 or NaN).
    pub fn map(&self, value: f64) -> Option<f64> {
        let t = match self.scale {
            Scale::Linear => value,
            Scale::Log if value > 0.0 => value.log2(),
            Scale::Log => return None,
        };
        t.is_finite().then_some(t)
    }

    /// Drawing coordinate -> value.
    pub fn unmap(&self, t: f64) -> f64 {
        match self.scale {
            Scale::Linear => t,
            Scale::Log => t.exp2(),
        }
    }

    /// The label of the tick at drawing coordinate `t`.
    pub fn label(&self, t: f64) -> String {
        let value = self.unmap(t);
        if self.bytes {
            byte_label(value)
        } else {
            number_label(value)
        }
    }

    /// A drawing coordinate clamped into the axis range.
    pub fn clamp(&self, t: f64) -> f64 {
        t.clamp(self.lo, self.hi)
    }
}

/// A byte count as a tick label: `1 KiB`, `1.5 MiB`, `100 B`.
pub fn byte_label(bytes: f64) -> String {
    HumanBytes(bytes.max(0.0).round() as u64).to_string()
}

/// A number as a tick label: `0`, `12`, `2.5`, `0.125`, `1e6`.
pub fn number_label(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    let magnitude = value.abs();
    if !(1e-3..1e6).contains(&magnitude) {
        // Three significant digits: a tick at 2^23.25 is `1e7`, not
        // `9.99999999999994e6`.
        let text = format!("{value:.2e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exponent}");
    }
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

/// A round step for about `span / MAX_TICKS`-sized intervals: 1, 2, 2.5 or 5 x 10^k.
fn nice_step(span: f64) -> f64 {
    let raw = span / (MAX_TICKS as f64 - 2.0);
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * power)
}

/// Multiples of `step` within `lo..=hi`.
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// The range of finite `values`, or `None` when there are none.
fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
        })
}

/// An x axis covering `values`, with a little room at both ends.
pub(crate) fn x_axis(values: impl IntoIterator<Item = f64>, log: bool, bytes: bool) -> Axis {
    let scale = if log { Scale::Log } else { Scale::Linear };
    let mapped = values.into_iter().filter_map(|v| match scale {
        Scale::Linear => Some(v),
        Scale::Log => (v > 0.0).then(|| v.log2()),
    });
    let (lo, hi) = extent(mapped).unwrap_or((0.0, 1.0));
    let pad = if hi > lo { (hi - lo) * 0.03 } else { 0.5 };
    ticked(scale, bytes, lo - pad, hi + pad)
}

/// A y axis covering `values`: from zero (or below, for negative values) when
/// linear, with `headroom` (a fraction of the span) above the largest value.
pub(crate) fn y_axis(values: impl IntoIterator<Item = f64>, log: bool, headroom: f64) -> Axis {
    match log {
        false => {
            let (lo, hi) = extent(values).unwrap_or((0.0, 1.0));
            let lo = lo.min(0.0);
            let hi = if hi > lo { hi } else { lo + 1.0 };
            ticked(Scale::Linear, false, lo, hi + (hi - lo) * headroom)
        }
        true => {
            let logs = values.into_iter().filter(|&v| v > 0.0).map(f64::log2);
            let (lo, hi) = extent(logs).unwrap_or((0.0, 1.0));
            let span = if hi > lo { hi - lo } else { 1.0 };
            ticked(Scale::Log, false, lo - span * 0.05, hi + span * headroom)
        }
    }
}

/// The axis of `y`'s values times `factor` (for a right-hand axis).
pub(crate) fn secondary(y: &Axis, factor: f64) -> Axis {
    match y.scale {
        Scale::Linear => ticked(Scale::Linear, false, y.lo * factor, y.hi * factor),
        Scale::Log => ticked(
            Scale::Log,
            false,
            y.lo + factor.log2(),
            y.hi + factor.log2(),
        ),
    }
}

/// Ticks for a drawing-coordinate range.
fn ticked(scale: Scale, bytes: bool, lo: f64, hi: f64) -> Axis {
    let (ticks, light) = match scale {
        Scale::Linear => {
            let step = nice_step(hi - lo);
            (multiples(lo, hi, step), multiples(lo, hi, step / 2.0))
        }
        Scale::Log => log_ticks(lo, hi, bytes),
    };
    Axis {
        scale,
        bytes,
        lo,
        hi,
        ticks,
        light,
    }
}

/// Ticks over log2 coordinates: powers of two every 1, 2, 5 or 10 octaves
/// (so 1 KiB, 1 MiB, 1 GiB stay labelled), or for plain numbers spanning
/// three decades or more, powers of ten with 2x and 5x as grid lines.
fn log_ticks(lo: f64, hi: f64, bytes: bool) -> (Vec<f64>, Vec<f64>) {
    let octaves = hi - lo;
    if !bytes && octaves >= 3.0 * 10f64.log2() {
        let decades = multiples(lo / 10f64.log2(), hi / 10f64.log2(), 1.0);
        let ticks: Vec<f64> = decades.iter().map(|d| d * 10f64.log2()).collect();
        let first = (lo / 10f64.log2()).floor() as i32;
        let last = (hi / 10f64.log2()).ceil() as i32;
        let light = (first..=last)
            .flat_map(|d| [2.0, 5.0].map(|m| (m * 10f64.powi(d)).log2()))
            .filter(|t| (lo..=hi).contains(t))
            .collect();
        return (ticks, light);
    }
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|s| octaves / s <= MAX_TICKS as f64)
        .unwrap_or(10.0);
    (multiples(lo, hi, step), multiples(lo, hi, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_like_people_write_them() {
        assert_eq!(byte_label(1024.0), "1 KiB");
        assert_eq!(byte_label(1536.0 * 1024.0), "1.5 MiB");
        assert_eq!(byte_label(256.0 * 1048576.0), "256 MiB");
        assert_eq!(number_label(0.0), "0");
        assert_eq!(number_label(12.0), "12");
        assert_eq!(number_label(2.5), "2.5");
        assert_eq!(number_label(0.125), "0.125");
        assert_eq!(number_label(1e6), "1e6");
        assert_eq!(number_label(9_999_999.999_999_94), "1e7");
        assert_eq!(number_label(2.5e-4), "2.5e-4");
    }

    #[test]
    fn byte_axes_tick_on_powers_of_two_keeping_kib_and_mib() {
        let axis = x_axis([1024.0, 256.0 * 1048576.0], true, true);
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert!(labels.len() <= MAX_TICKS, "{labels:?}");
        assert!(labels.contains(&"1 KiB".to_string()), "{labels:?}");
        assert!(labels.contains(&"1 MiB".to_string()), "{labels:?}");
        assert!(axis.lo < 10.0 && axis.hi > 28.0);
        assert_eq!(axis.light.len(), 19);
    }

    #[test]
    fn wide_plain_log_axes_tick_on_powers_of_ten() {
        let axis = x_axis([1.0, 1e5], true, false);
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert_eq!(labels, ["1", "10", "100", "1000", "10000", "100000"]);
    }

    #[test]
    fn linear_y_axes_start_at_zero_with_round_ticks() {
        let axis = y_axis([3.0, 97.0], false, 0.1);
        assert_eq!(axis.lo, 0.0);
        assert!(axis.hi >= 97.0 * 1.1 - 1e-9);
        assert_eq!(axis.ticks[0], 0.0);
        assert!(axis.ticks.len() <= MAX_TICKS && axis.ticks.len() >= 4);
        let step = axis.ticks[1] - axis.ticks[0];
        assert!([10.0, 20.0, 25.0].contains(&step), "{step}");
    }

    #[test]
    fn secondary_axes_scale_the_primary() {
        let y = y_axis([0.0, 10.0], false, 0.0);
        let y2 = secondary(&y, 2.5);
        assert_eq!((y2.lo, y2.hi), (0.0, 25.0));
        let y = y_axis([1.0, 8.0], true, 0.0);
        let y2 = secondary(&y, 4.0);
        assert!((y2.unmap(y2.lo) / y.unmap(y.lo) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn non_positive_values_stay_off_log_axes() {
        let axis = y_axis([0.0, -1.0, 4.0, 64.0], true, 0.1);
        assert_eq!(axis.map(0.0), None);
        assert_eq!(axis.map(f64::NAN), None);
        assert_eq!(axis.map(4.0), Some(2.0));
        assert!(axis.lo < 2.0 && axis.hi > 6.0);
        let empty = x_axis([f64::NAN], true, true);
        assert!(empty.lo < empty.hi);
    }
}
