//! Shifts in a time series of readings (`memlat watch`): where a level's
//! latency, or a shared cache's edge, moved and for how long.
//!
//! The method, on the logarithm of the readings (a shift is a ratio, so a
//! 10% rise weighs the same at 1 ns and at 150 ns):
//! 1. the series' own noise: the robust spread of its interval-to-interval
//!    differences (1.4826 x MAD / sqrt 2), which a step does not inflate;
//! 2. a running median of three (Tukey's rule at the ends), so a
//!    one-interval spike cannot start a segment ("a spike is not an event");
//! 3. PELT (Killick, Fearnhead and Eckley 2012, optimal partitioning with
//!    pruning) with a Gaussian mean-shift cost in units of that noise and a
//!    penalty of [`PENALTY_PER_LOG_N`] x ln n per change point;
//! 4. neighbouring segments closer than [`MIN_SHIFT`] or [`NOISE_Z`] noise
//!    widths are merged; what remains becomes events: a departure from a
//!    settled level that comes back is one excursion (start and end), one
//!    that does not is a lasting step. Short segments between two settled
//!    levels that lead on to the new level are its transition (a ramp);
//!    those that came back to the level before, or lay on its other side,
//!    are excursions of their own: on a shared host the other tenants move
//!    a level for a few seconds before or after a neighbour, and such a
//!    dip is not where the neighbour started.

use std::ops::Range;

use serde::{Deserialize, Serialize};

/// The smallest shift reported, as a fraction: users of shared machines
/// report 13-15% run-to-run swings (issue 31), and the repeats of a DRAM
/// point on the recorded guests spread 1-6% (median sd of log latency on
/// tests/fixtures/curves), so a shift below 10% is not told from drift.
/// Fitted to the machines seen (the series' own noise is the measured
/// rule, [`NOISE_Z`]; this is the floor under it on a quiet series).
pub const MIN_SHIFT: f64 = 0.10;

/// A shift must also exceed this many noise widths of the series itself:
/// a Gaussian difference passes 3 sigma in 0.27% of intervals (two-sided),
/// a few times in an hour of 1 s intervals, and the running median and
/// PELT's penalty keep those single intervals from becoming segments.
pub const NOISE_Z: f64 = 3.0;

/// Penalty per change point, times ln n: BIC's 2 ln n for a mean and a
/// location, raised by half so a quiet series of hours stays quiet. A
/// choice on top of a statistical rule (Schwarz's criterion).
pub const PENALTY_PER_LOG_N: f64 = 3.0;

/// Segments are at least this many intervals long: after the running
/// median of three (`median3`) no lone interval can stand apart, so a
/// segment of one is noise by construction.
pub const MIN_SEGMENT: usize = 2;

/// A segment this long or longer is a level the series settled at; shorter
/// ones between two settled levels are the transition (a ramp over several
/// intervals comes out of PELT as a staircase of short segments). A
/// choice: five intervals hold a mean to 1/sqrt 5 = 45% of one reading's
/// noise, and a ramp is seldom read as more than a few short steps.
pub const SETTLED: usize = 5;

/// The noise is taken as at least this (log units): the repeat spread of an
/// L1 point on the recorded guests is about 0.1-0.5%, and a series of
/// identical readings (an edge that never moves) must not make every
/// difference infinitely significant. Fitted to the recorded guests; it
/// acts only on PELT's cost (how finely a series is cut before the merge),
/// since [`NOISE_Z`] times it (0.9%) is under [`MIN_SHIFT`], which then
/// decides what a shift is.
pub const NOISE_FLOOR: f64 = 0.003;

/// The median absolute deviation of a Gaussian times 1.4826 is its sigma
/// (1 / 0.6745, the normal distribution's third quartile).
const SIGMA_PER_MAD: f64 = 1.4826;

/// One shift in a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shift {
    /// The first interval (index into the series) away from the level before.
    pub start: usize,
    /// The last interval away, for an excursion that came back; `None` for
    /// a step that lasted to the end of the series.
    pub end: Option<usize>,
    /// The settled level before it (in the series' units).
    pub before: f64,
    /// The level during it: for an excursion the one farthest from
    /// `before`, for a step the level it settled at.
    pub after: f64,
}

impl Shift {
    /// `after / before - 1`.
    pub fn change(&self) -> f64 {
        self.after / self.before - 1.0
    }
}

/// The noise of a series of logarithms: the robust spread of its
/// interval-to-interval differences, at least [`NOISE_FLOOR`].
pub fn noise(logs: &[f64]) -> f64 {
    let mut diffs: Vec<f64> = logs.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if diffs.is_empty() {
        return NOISE_FLOOR;
    }
    diffs.sort_by(f64::total_cmp);
    let mad = diffs[diffs.len() / 2];
    // A difference of two readings has sqrt 2 times one reading's sigma.
    (SIGMA_PER_MAD * mad / std::f64::consts::SQRT_2).max(NOISE_FLOOR)
}

/// The shifts in `series` (positive readings in time order). A non-finite
/// or non-positive reading is no reading: it is left out, and the shifts'
/// indices are those of `series`. Taken as the one before it, a gap after a
/// lone reading made two of it, which the running median keeps: an
/// excursion from one reading (a watch interval with no edge reading).
pub fn shifts(series: &[f64]) -> Vec<Shift> {
    let (at, logs): (Vec<usize>, Vec<f64>) = series
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite() && **v > 0.0)
        .map(|(i, v)| (i, v.ln()))
        .unzip();
    let sigma = noise(&logs);
    let smooth = median3(&logs);
    let n = smooth.len();
    if n < 2 * MIN_SEGMENT {
        return Vec::new();
    }
    let beta = PENALTY_PER_LOG_N * (n as f64).ln();
    let bounds = pelt(&smooth, sigma, beta, MIN_SEGMENT);
    let threshold = (1.0 + MIN_SHIFT).ln().max(NOISE_Z * sigma);
    let segments = merge(&smooth, bounds, threshold);
    let mut out = events(&segments, threshold);
    for s in &mut out {
        s.start = at[s.start];
        s.end = s.end.map(|e| at[e]);
    }
    out
}

/// A running median of three; each end by Tukey's end-point rule, the
/// median of the reading, its smoothed neighbour and the line through the
/// next two smoothed values extended to it, so a spike in the first or
/// last interval (a watch's first samples meet a cold clock or caches) is
/// no more an event than one in the middle.
fn median3(x: &[f64]) -> Vec<f64> {
    let med = |a: f64, b: f64, c: f64| {
        let mut w = [a, b, c];
        w.sort_by(f64::total_cmp);
        w[1]
    };
    let n = x.len();
    let mut y: Vec<f64> = (0..n)
        .map(|i| {
            if i == 0 || i + 1 == n {
                x[i]
            } else {
                med(x[i - 1], x[i], x[i + 1])
            }
        })
        .collect();
    if n >= 4 {
        y[0] = med(x[0], y[1], 3.0 * y[1] - 2.0 * y[2]);
        y[n - 1] = med(x[n - 1], y[n - 2], 3.0 * y[n - 2] - 2.0 * y[n - 3]);
    }
    y
}

/// Segment ends (exclusive, the last is `y.len()`) of the optimal
/// partition under a mean-shift cost in units of `sigma`, `beta` a change.
fn pelt(y: &[f64], sigma: f64, beta: f64, min_seg: usize) -> Vec<usize> {
    let n = y.len();
    let (mut s1, mut s2) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for i in 0..n {
        s1[i + 1] = s1[i] + y[i];
        s2[i + 1] = s2[i] + y[i] * y[i];
    }
    let var = sigma * sigma;
    let cost = |a: usize, b: usize| {
        let m = (b - a) as f64;
        let s = s1[b] - s1[a];
        ((s2[b] - s2[a]) - s * s / m).max(0.0) / var
    };
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -beta;
    let mut candidates = vec![0usize];
    for t in min_seg..=n {
        // A start becomes a candidate once a whole segment fits after it.
        let s_new = t - min_seg;
        if s_new >= min_seg && f[s_new].is_finite() {
            candidates.push(s_new);
        }
        let (mut best, mut arg) = (f64::INFINITY, 0);
        for &s in &candidates {
            let v = f[s] + cost(s, t) + beta;
            if v < best {
                (best, arg) = (v, s);
            }
        }
        f[t] = best;
        last[t] = arg;
        // Pruning: a start that cannot beat t now never will (the cost is additive).
        candidates.retain(|&s| f[s] + cost(s, t) <= f[t]);
    }
    let mut ends = vec![n];
    let mut t = n;
    while t > 0 && last[t] > 0 {
        t = last[t];
        ends.push(t);
    }
    ends.reverse();
    ends
}

/// One segment: `[from, to)` and its mean (log units).
#[derive(Debug, Clone, Copy)]
struct Segment {
    from: usize,
    to: usize,
    mean: f64,
}

impl Segment {
    fn len(&self) -> usize {
        self.to - self.from
    }
}

fn mean(y: &[f64]) -> f64 {
    y.iter().sum::<f64>() / y.len() as f64
}

/// The segments between `ends`, neighbours closer than `threshold` merged
/// (the closest pair first, until none is).
fn merge(y: &[f64], ends: Vec<usize>, threshold: f64) -> Vec<Segment> {
    let mut from = 0;
    let mut segs: Vec<Segment> = ends
        .into_iter()
        .map(|to| {
            let s = Segment {
                from,
                to,
                mean: mean(&y[from..to]),
            };
            from = to;
            s
        })
        .collect();
    loop {
        let closest = (1..segs.len())
            .map(|i| (i, (segs[i].mean - segs[i - 1].mean).abs()))
            .filter(|&(_, d)| d < threshold)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _)) = closest else {
            return segs;
        };
        let (a, b) = (segs[i - 1].from, segs[i].to);
        segs[i - 1] = Segment {
            from: a,
            to: b,
            mean: mean(&y[a..b]),
        };
        segs.remove(i);
    }
}

/// Events from merged segments (see the module docs).
fn events(segs: &[Segment], threshold: f64) -> Vec<Shift> {
    let mut out: Vec<Shift> = Vec::new();
    let Some(first) = segs.first() else {
        return out;
    };
    let mut anchor = first.mean;
    // The step, if any, whose settled level is `anchor` and that nothing
    // has happened since: a step back to where it came from ends it.
    let mut open_step: Option<usize> = None;
    let mut i = 1;
    while i < segs.len() {
        // The next settled segment: the transition ends there.
        let k = (i..segs.len())
            .find(|&k| segs[k].len() >= SETTLED || k + 1 == segs.len())
            .unwrap_or(segs.len() - 1);
        let target = segs[k].mean;
        let runs = away_runs(segs, i..k, anchor, threshold);
        if (target - anchor).abs() < threshold {
            // Back at the level it left: each run away was an excursion.
            if !runs.is_empty() {
                out.extend(runs.iter().map(|&r| excursion(segs, r, anchor)));
                open_step = None;
            }
            i = k + 1;
            continue;
        }
        // The level moved. The last run is its ramp when it leads into the
        // settled segment on the side the level moves to; runs that came
        // back before it were excursions of their own (the host's other
        // tenants), not the start of this move.
        let leads =
            |r: &&(usize, usize)| r.1 == k && (segs[r.0].mean > anchor) == (target > anchor);
        let ramp = runs.last().filter(leads).copied();
        let lone = &runs[..runs.len() - usize::from(ramp.is_some())];
        let back = open_step
            .filter(|&p| lone.is_empty() && (out[p].before.ln() - target).abs() < threshold);
        if let Some(p) = back {
            // A step back to where the previous step came from ends that
            // step as one excursion (a neighbour came and went).
            let (last_away, after) = step_back(segs, (i, k), anchor, threshold);
            out[p].end = Some(last_away.max(out[p].start + 1) - 1);
            out.extend(after);
            open_step = None;
        } else {
            out.extend(lone.iter().map(|&r| excursion(segs, r, anchor)));
            out.push(Shift {
                start: ramp.map_or(segs[k].from, |r| segs[r.0].from),
                end: None,
                before: anchor.exp(),
                after: target.exp(),
            });
            open_step = Some(out.len() - 1);
        }
        anchor = target;
        i = k + 1;
    }
    out
}

/// For a step back from `anchor` through the short segments `from..to`
/// into the settled `segs[to]`: one past the last interval still short of
/// that level (on the anchor's side of it), and what overshot it or left it
/// again, as excursions of their own from it.
fn step_back(
    segs: &[Segment],
    (from, to): (usize, usize),
    anchor: f64,
    threshold: f64,
) -> (usize, Vec<Shift>) {
    let level = segs[to].mean;
    let short_of = |j: usize| {
        let m = segs[j].mean;
        (m - level).abs() >= threshold && (m > level) == (anchor > level)
    };
    let leading = (from..to).find(|&j| !short_of(j)).unwrap_or(to);
    let last_away = if leading > from {
        segs[leading - 1].to
    } else {
        segs[from].from
    };
    let after = away_runs(segs, leading..to, level, threshold)
        .into_iter()
        .map(|run| excursion(segs, run, level))
        .collect();
    (last_away, after)
}

/// The runs of the segments `span` away from `anchor` (by `threshold` or
/// more), as `(first, one past the last)` indices into `segs`: a run ends
/// where a segment is back at the anchor or the next lies on the other
/// side of it.
fn away_runs(
    segs: &[Segment],
    span: Range<usize>,
    anchor: f64,
    threshold: f64,
) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    // The open run's first index and side (above the anchor or not).
    let mut open: Option<(usize, bool)> = None;
    let end = span.end;
    for j in span {
        let m = segs[j].mean;
        let side = ((m - anchor).abs() >= threshold).then_some(m > anchor);
        if let Some((from, open_side)) = open {
            if side == Some(open_side) {
                continue;
            }
            runs.push((from, j));
        }
        open = side.map(|above| (j, above));
    }
    if let Some((from, _)) = open {
        runs.push((from, end));
    }
    runs
}

/// The excursion of the segments `run` (`(first, one past the last)`)
/// from `anchor`: its ends, and the level farthest from the anchor.
fn excursion(segs: &[Segment], run: (usize, usize), anchor: f64) -> Shift {
    let far = segs[run.0..run.1]
        .iter()
        .map(|s| s.mean)
        .max_by(|a, b| (a - anchor).abs().total_cmp(&(b - anchor).abs()))
        .unwrap_or(anchor);
    Shift {
        start: segs[run.0].from,
        end: Some(segs[run.1 - 1].to - 1),
        before: anchor.exp(),
        after: far.exp(),
    }
}

#[cfg(test)]
#[path = "changepoint_tests.rs"]
mod tests;
