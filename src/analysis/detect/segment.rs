//! Splits a latency curve into plateaus and the transitions between them.
//!
//! Works on logarithms: `x = ln(size)`, `y = ln(ns)`, so a level is a run of
//! points with nearly the same `y`, whatever the latency scale.
//!
//! 0. **Smoothing.** A running median of three replaces each point's latency,
//!    so one disturbed point (another tenant, an interrupt) cannot split a
//!    level or end a curve; steps and monotone ramps pass through unchanged.
//! 1. **Candidates.** From every point, the longest run onward whose
//!    latencies stay within [`FLAT_BAND`] of each other. A run is a plateau
//!    only if it has at least [`MIN_POINTS`] points over at least [`MIN_SPAN`]
//!    in size and is flat: its least-squares slope `d ln(ns) / d ln(size)` is
//!    at most [`MAX_SLOPE`]. A ramp, however finely sampled, rises with size
//!    and is no plateau; three points flat relative to their neighbours are,
//!    however short (a guest's share of a shared L3).
//! 2. **Choice.** Candidates are taken longest first (then flattest), each
//!    one that overlaps none taken before; the points between them are
//!    transitions. Nothing else becomes a plateau: a level the data do not
//!    show is not invented.

/// Latencies of one plateau span at most this factor: a level serves every
/// load of its plateau, so its latency moves only with the noise (2-3%
/// between repeats) and the small growth of translation and set conflicts
/// across it; a fifth of the [`super::LEVEL_RATIO`] step keeps two levels
/// out of one plateau.
pub const FLAT_BAND: f64 = 1.2;

/// Points in a transition that stay within this factor of each other pause
/// there (a note names the pause; it is not a level). Looser than a
/// plateau's [`FLAT_BAND`] (a pause is less settled), tighter than a
/// level's step [`super::LEVEL_RATIO`] (it must not span two levels).
pub const MERGE_RATIO: f64 = 1.3;

/// A pause is named only when it stands this far from the plateaus beside
/// it: more than a level's step ([`super::LEVEL_RATIO`]) plus a point's
/// noise, so it cannot be the edge of either plateau.
pub const MAX_BAND: f64 = 1.6;

/// A plateau needs at least this many points: two can be a transition that
/// happens to look flat (or one disturbed point beside a real one).
pub const MIN_POINTS: usize = 3;

/// A plateau spans at least this factor in size: refined points a few per
/// cent apart sit on one edge of one level, and a level serves a range of
/// sizes, not one.
pub const MIN_SPAN: f64 = 1.2;

/// A plateau's latency grows at most this fast with size (log-log slope):
/// three points rising 9% a step (sizes 1.3x apart) are a ramp.
pub const MAX_SLOPE: f64 = 0.25;

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

fn is_plateau(x: &[f64], y: &[f64]) -> bool {
    x.len() >= MIN_POINTS
        && x[x.len() - 1] - x[0] >= MIN_SPAN.ln()
        && slope(x, y).abs() <= MAX_SLOPE
}

/// The longest flat run from `start`: `start..end`.
fn flat_run(y: &[f64], start: usize) -> usize {
    let band = FLAT_BAND.ln();
    let (mut lo, mut hi) = (y[start], y[start]);
    let mut end = start + 1;
    while end < y.len() {
        let (l, h) = (lo.min(y[end]), hi.max(y[end]));
        if h - l > band {
            break;
        }
        (lo, hi, end) = (l, h, end + 1);
    }
    end
}

/// Groups `y` (log latencies, in size order) into plateaus and the
/// transitions between them, given `x` (log sizes, increasing).
pub fn segment(x: &[f64], y: &[f64]) -> Vec<Group> {
    let n = y.len();
    let mut candidates: Vec<(usize, usize, f64)> = (0..n)
        .filter_map(|start| {
            let mut end = flat_run(y, start);
            // A run that is too steep may hold a flat core: trim its rising end.
            while end - start >= MIN_POINTS && !is_plateau(&x[start..end], &y[start..end]) {
                end -= 1;
            }
            is_plateau(&x[start..end], &y[start..end]).then(|| {
                let run = &y[start..end];
                let band = run.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                    - run.iter().copied().fold(f64::INFINITY, f64::min);
                (start, end, band)
            })
        })
        .collect();
    candidates.sort_by(|a, b| (b.1 - b.0).cmp(&(a.1 - a.0)).then(a.2.total_cmp(&b.2)));
    let mut plateaus: Vec<(usize, usize)> = Vec::new();
    for (start, end, _) in candidates {
        if plateaus.iter().all(|&(s, e)| end <= s || start >= e) {
            plateaus.push((start, end));
        }
    }
    plateaus.sort_unstable();
    let mut groups = Vec::new();
    let mut at = 0;
    for (start, end) in plateaus {
        if at < start {
            groups.push(Group {
                start: at,
                end: start,
                plateau: false,
            });
        }
        groups.push(Group {
            start,
            end,
            plateau: true,
        });
        at = end;
    }
    if at < n {
        groups.push(Group {
            start: at,
            end: n,
            plateau: false,
        });
    }
    groups
}

/// Runs of at least two transition points in `start..end` whose latencies
/// stay within [`MERGE_RATIO`]: where the curve pauses without a plateau.
pub fn pauses(y: &[f64], start: usize, end: usize) -> Vec<(usize, usize)> {
    let band = MERGE_RATIO.ln();
    let mut out = Vec::new();
    let mut i = start;
    while i < end {
        let (mut lo, mut hi, mut j) = (y[i], y[i], i + 1);
        while j < end && hi.max(y[j]) - lo.min(y[j]) <= band {
            (lo, hi, j) = (lo.min(y[j]), hi.max(y[j]), j + 1);
        }
        if j - i >= 2 {
            out.push((i, j));
        }
        i = j;
    }
    out
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
        // Nor is a gentler one of 9% per 30% of size.
        let sizes: Vec<f64> = (0..12).map(|i| 1e6 * 1.3f64.powi(i)).collect();
        let ns: Vec<f64> = (0..12).map(|i| 5.0 * 1.09f64.powi(i)).collect();
        let (x, y) = logs(&sizes, &ns);
        assert!(segment(&x, &y).iter().all(|g| !g.plateau));
    }

    #[test]
    fn a_short_flat_plateau_between_steep_neighbours_is_a_level() {
        // The guest's share of an L3: 3 points at 36 ns between 29 and 44.
        let sizes: Vec<f64> = (0..7).map(|i| 2e6 * 1.3f64.powi(i)).collect();
        let ns = [16.0, 29.3, 35.8, 36.8, 37.7, 44.2, 73.0];
        let (x, y) = logs(&sizes, &ns);
        let plateaus: Vec<Group> = segment(&x, &y).into_iter().filter(|g| g.plateau).collect();
        assert_eq!(plateaus.len(), 1, "{plateaus:?}");
        assert_eq!((plateaus[0].start, plateaus[0].end), (2, 5));
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
    fn two_flat_points_are_not_a_plateau_but_a_pause() {
        let sizes = [1.0, 1.5, 2.25, 3.4, 5.1, 7.6, 11.4];
        let ns = [1.0, 1.0, 1.0, 2.4, 2.6, 4.0, 4.0];
        let (x, y) = logs(&sizes, &ns);
        let groups = segment(&x, &y);
        assert_eq!(groups.iter().filter(|g| g.plateau).count(), 1);
        assert_eq!(pauses(&y, 3, 7), vec![(3, 5), (5, 7)]);
    }

    #[test]
    fn slope_and_median() {
        assert!((slope(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0]) - 1.0).abs() < 1e-12);
        assert_eq!(slope(&[1.0, 1.0], &[1.0, 3.0]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
