//! Splits a latency curve into plateaus and the transitions between them.
//!
//! Works on logarithms: `x = ln(size)`, `y = ln(ns)`, so a level is a run of
//! points with nearly the same `y`, whatever the latency scale.
//!
//! 0. **Smoothing.** A running median of three replaces each point's latency,
//!    so one disturbed point (another tenant, an interrupt) cannot split a
//!    level or end a curve; steps and monotone ramps pass through unchanged.
//! 1. **Grouping.** Every point starts as its own group; the two adjacent
//!    groups whose median latencies are closest merge, again and again, while
//!    they differ by less than [`MERGE_RATIO`] and the merged group spans less
//!    than [`MAX_BAND`]. Cache levels differ by 2x or more in latency, so a
//!    level is not split by noise, and two levels are not merged.
//! 2. **Plateau or transition.** A group is a plateau only if it has at least
//!    [`MIN_POINTS`] points over at least [`MIN_SPAN`] in size and is flat: its
//!    least-squares slope `d ln(ns) / d ln(size)` is below [`MAX_SLOPE`]. A
//!    ramp between two levels, however finely sampled, rises with size and is
//!    a transition; so is a lone point. Nothing else becomes a plateau: a level
//!    that the data do not show is not invented.

/// Adjacent groups merge while their median latencies differ by less than this factor.
pub const MERGE_RATIO: f64 = 1.3;

/// A group's point latencies may span at most this factor.
pub const MAX_BAND: f64 = 1.6;

/// A plateau needs at least this many points: two can be a transition that
/// happens to look flat (or one disturbed point beside a real one).
pub const MIN_POINTS: usize = 3;

/// A plateau spans at least this factor in size.
pub const MIN_SPAN: f64 = 1.2;

/// A plateau's latency grows at most this fast with size (log-log slope).
pub const MAX_SLOPE: f64 = 0.3;

/// A run of consecutive points, `start..end` (end exclusive).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Group {
    /// First point.
    pub start: usize,
    /// One past the last point.
    pub end: usize,
    /// Whether the run is a plateau (else a transition).
    pub plateau: bool,
}

/// Median of a non-empty slice (any order).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Running median of three; each end by Tukey's rule: the median of itself,
/// its smoothed neighbour, and the line through the next two extrapolated
/// to it (so a straight ramp stays straight and a lone end spike goes).
pub fn smooth(y: &[f64]) -> Vec<f64> {
    let n = y.len();
    if n < 3 {
        return y.to_vec();
    }
    let mut out: Vec<f64> = (0..n)
        .map(|i| {
            let c = i.clamp(1, n - 2);
            median(&y[c - 1..=c + 1])
        })
        .collect();
    if n >= 4 {
        out[0] = median(&[y[0], out[1], 3.0 * out[1] - 2.0 * out[2]]);
        out[n - 1] = median(&[y[n - 1], out[n - 2], 3.0 * out[n - 2] - 2.0 * out[n - 3]]);
    } else {
        out[0] = y[0];
        out[n - 1] = y[n - 1];
    }
    out
}

/// Least-squares slope of `y` on `x` (0 when `x` does not vary).
pub fn slope(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let sxx: f64 = x.iter().map(|v| (v - mx).powi(2)).sum();
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    if sxx <= 0.0 { 0.0 } else { sxy / sxx }
}

/// Groups `y` (log latencies, in size order) and classifies each group, given
/// `x` (log sizes, increasing).
pub fn segment(x: &[f64], y: &[f64]) -> Vec<Group> {
    let merge = MERGE_RATIO.ln();
    let band = MAX_BAND.ln();
    let mut groups: Vec<(usize, usize)> = (0..y.len()).map(|i| (i, i + 1)).collect();
    loop {
        let mut best: Option<(usize, f64)> = None;
        for k in 0..groups.len().saturating_sub(1) {
            let (a0, a1) = groups[k];
            let (_, b1) = groups[k + 1];
            let diff = (median(&y[a0..a1]) - median(&y[groups[k + 1].0..b1])).abs();
            let merged = &y[a0..b1];
            let lo = merged.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = merged.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if diff < merge && hi - lo <= band && best.is_none_or(|(_, d)| diff < d) {
                best = Some((k, diff));
            }
        }
        let Some((k, _)) = best else { break };
        groups[k].1 = groups[k + 1].1;
        groups.remove(k + 1);
    }
    groups
        .into_iter()
        .map(|(start, end)| Group {
            start,
            end,
            plateau: is_plateau(&x[start..end], &y[start..end]),
        })
        .collect()
}

fn is_plateau(x: &[f64], y: &[f64]) -> bool {
    x.len() >= MIN_POINTS
        && x[x.len() - 1] - x[0] >= MIN_SPAN.ln()
        && slope(x, y).abs() <= MAX_SLOPE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logs(sizes: &[f64], ns: &[f64]) -> (Vec<f64>, Vec<f64>) {
        (
            sizes.iter().map(|s| s.ln()).collect(),
            ns.iter().map(|v| v.ln()).collect(),
        )
    }

    #[test]
    fn two_levels_and_a_step() {
        let sizes: Vec<f64> = (0..8).map(|i| 4096.0 * 2f64.powi(i)).collect();
        let ns = [1.0, 1.02, 0.99, 1.01, 4.0, 4.1, 3.95, 4.05];
        let (x, y) = logs(&sizes, &ns);
        let groups = segment(&x, &y);
        assert_eq!(groups.len(), 2);
        assert!(groups.iter().all(|g| g.plateau && g.end - g.start == 4));
    }

    #[test]
    fn a_finely_sampled_ramp_is_not_a_plateau() {
        // Latency rising 15% per 10% of size: no flat run anywhere.
        let sizes: Vec<f64> = (0..12).map(|i| 1e6 * 1.1f64.powi(i)).collect();
        let ns: Vec<f64> = (0..12).map(|i| 5.0 * 1.15f64.powi(i)).collect();
        let (x, y) = logs(&sizes, &ns);
        assert!(segment(&x, &y).iter().all(|g| !g.plateau));
    }

    #[test]
    fn smoothing_removes_lone_spikes_and_keeps_steps() {
        let y = [1.0, 1.0, 5.0, 1.0, 1.0, 4.0, 4.0, 4.0, 9.0];
        assert_eq!(smooth(&y), [1.0, 1.0, 1.0, 1.0, 1.0, 4.0, 4.0, 4.0, 4.0]);
        assert_eq!(smooth(&[1.0, 2.0]), [1.0, 2.0]);
        let ramp = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(smooth(&ramp), ramp);
    }

    #[test]
    fn two_flat_points_are_not_a_plateau() {
        let sizes = [1.0, 1.5, 2.25, 3.4, 5.1, 7.6, 11.4];
        let ns = [1.0, 1.0, 1.0, 2.4, 2.6, 4.0, 4.0];
        let (x, y) = logs(&sizes, &ns);
        let groups = segment(&x, &y);
        assert_eq!(groups.iter().filter(|g| g.plateau).count(), 1);
    }

    #[test]
    fn a_lone_point_is_a_transition() {
        let sizes = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        let ns = [1.0, 1.0, 1.0, 2.5, 6.0, 6.1, 6.0];
        let (x, y) = logs(&sizes, &ns);
        let groups = segment(&x, &y);
        assert_eq!(groups.len(), 3);
        assert!(groups[0].plateau && !groups[1].plateau && groups[2].plateau);
    }

    #[test]
    fn slope_and_median() {
        assert!((slope(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0]) - 1.0).abs() < 1e-12);
        assert_eq!(slope(&[1.0, 1.0], &[1.0, 3.0]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
