//! Reading a load-use curve: where it is flat, where it starts to grow, how
//! steeply, and what that says about the load and the core. Pure functions on
//! `(nops, time per iteration)` points, so they are tested on synthetic data
//! and on seed 003's own timings.
//!
//! The model. An iteration is a load, N NOPs and an `add` that uses the loaded
//! value. On a **single-issue in-order** core (seed 003's JZ4770) the NOPs fill
//! the load's shadow one per cycle, and the add issues at cycle
//! `max(L, N + 1)` after the load, so
//!
//! ```text
//! cycles per iteration = max(L, N + 1) + 1 (the add) + loop overhead
//! ```
//!
//! is flat until N reaches the load-to-use latency L, then grows one cycle per
//! NOP: the first N where the time grows *is* L (seed 003: 4). With a spread
//! of latencies (L2, DRAM) the curve is a staircase: it starts to grow at the
//! shortest latency and meets the line `N + 2 + overhead` at the longest.
//!
//! On a core that issues **W instructions per cycle** (out-of-order, or
//! superscalar in-order) the NOPs issue W at a time while the load is in flight
//! (and an out-of-order core runs ahead into the next iterations' NOPs too), so
//!
//! ```text
//! cycles per iteration ~ max(L + 1, (N + 2) / W)
//! ```
//!
//! The knee sits near `N = W (L + 1) - 2`, not at L, and the slope past it is
//! `1 / W` cycles per NOP. There the latency is read from the plateau instead,
//! `L = plateau - 1 - overhead`, and the slope gives the issue width.

use serde::{Deserialize, Serialize};

/// Cycles the use (`add`) adds to every iteration on every core memlat
/// targets: a register-to-register integer add has a latency of one cycle
/// on the x86, ARM, RISC-V and MIPS cores memlat runs on (the vendors'
/// optimisation manuals, Agner Fog's instruction tables).
pub const USE_CYCLES: f64 = 1.0;

/// Instructions per iteration besides the NOPs: the load and the add (the
/// model in the module docs: `N + 2` instructions an iteration).
const BODY_INSTRUCTIONS: f64 = 2.0;

/// Widths up to this (slope of at least 1/1.4 cycles per NOP) read as
/// single-issue. Issue widths are whole numbers and the nearest choices are
/// 1 and 2; 1.4 is near their geometric mean (sqrt 2 = 1.414), so a slope
/// is read as the width it is nearer to by ratio: a width of 1 read up to
/// 40% high, or of 2 up to 30% low (timer noise, a clock estimate at
/// another frequency), keeps its verdict.
pub const SINGLE_ISSUE_MAX_WIDTH: f64 = 1.4;

/// A wobble of a level is not a knee unless it exceeds this many standard
/// deviations of the curve's own timing noise ([`noise`]): a Gaussian
/// reading passes 3 sigma one time in 740 (one-sided): one point of a flat
/// curve of 40 passes it in about 5% of curves, and a knee also needs the
/// points after it up ([`Tolerance::confirm`]), which one stray is not.
const NOISE_WIDTHS: f64 = 3.0;

/// Fewest points [`noise`] reads a deviation from: the median of fewer than
/// 6 second differences is itself too noisy to scale a tolerance with
/// (a choice: 8 points leave 6 differences).
const MIN_NOISE_POINTS: usize = 8;

/// The median absolute deviation of a Gaussian is 0.6745 sigma (the normal
/// distribution's third quartile).
const MAD_PER_SIGMA: f64 = 0.6745;

/// The floor is the median of the lowest `1 / FLOOR_SHARE` of the points,
/// at least [`FLOOR_POINTS`]: a choice; it trades one or two timings read
/// too low (kept out of the floor) against a short plateau (an eighth of a
/// curve of 64 NOPs is 8 points, all on the plateau when the knee is past 8).
const FLOOR_SHARE: usize = 8;

/// See [`FLOOR_SHARE`]: the median of 3 is the fewest that outvotes one
/// stray timing.
const FLOOR_POINTS: usize = 3;

/// A point of a curve: N (NOPs) and the time per iteration (cycles, or any unit).
pub type Point = (u32, f64);

/// How far above a level a value must be to count as growth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Fraction of the level.
    pub relative: f64,
    /// Plus this much, in the curve's unit.
    pub absolute: f64,
    /// Points after a knee that must be up too (0 trusts a rise at the last point).
    pub confirm: usize,
}

impl Tolerance {
    /// For cycles per iteration on a shared machine: 1.5 % plus 0.15 cycles,
    /// and two points after a knee to confirm it. Fitted, a rule to
    /// rethink: 1.5 % and 0.15 cycles were chosen with the first load-use
    /// curves (seed 003's, the knee tests), not derived from a fact of the
    /// run; the run's own noise only raises the absolute part (see
    /// [`Tolerance::widened_for`]) and cannot replace it, since a quiet
    /// curve of whole-cycle timings reads a noise near 0. Two confirming points: a
    /// knee must survive one disturbed timing on either side of it, so one
    /// high timing at the end of the range is no knee.
    pub const CYCLES: Tolerance = Tolerance {
        relative: 0.015,
        absolute: 0.15,
        confirm: 2,
    };

    /// Whether `value` is above `level` by more than the tolerance.
    pub fn above(&self, level: f64, value: f64) -> bool {
        value > level + level.abs() * self.relative + self.absolute
    }

    /// This tolerance, with the absolute part raised to three times the
    /// timing noise `points` show (see [`noise`]): on a busy machine a level
    /// can wobble by more than any fixed tolerance, and a wobble is not a knee.
    pub fn widened_for(&self, points: &[Point]) -> Tolerance {
        Tolerance {
            absolute: self
                .absolute
                .max(NOISE_WIDTHS * noise(points).unwrap_or(0.0)),
            ..*self
        }
    }
}

/// The timing noise of a curve of N one apart, as a standard deviation: from
/// the median absolute second difference, which a flat stretch, a straight
/// ramp and a rare step all leave near zero (for independent Gaussian noise
/// `y[i+1] - 2 y[i] + y[i-1]` has deviation `sqrt(6) sigma`, and the median of
/// its absolute value is 0.6745 of that). `None` below 8 points.
pub fn noise(points: &[Point]) -> Option<f64> {
    if points.len() < MIN_NOISE_POINTS {
        return None;
    }
    let mut second: Vec<f64> = points
        .windows(3)
        .map(|w| (w[2].1 - 2.0 * w[1].1 + w[0].1).abs())
        .collect();
    Some(median(&mut second)? / (MAD_PER_SIGMA * 6f64.sqrt()))
}

/// The curve's lowest level, robustly: the median of its lowest eighth (at
/// least 3 points), so one timing read too low (a clock estimate taken at
/// another frequency) does not lower the floor everything is compared with.
pub fn floor(points: &[Point]) -> Option<f64> {
    let mut values: Vec<f64> = points.iter().map(|p| p.1).collect();
    values.sort_by(f64::total_cmp);
    let k = (values.len() / FLOOR_SHARE)
        .max(FLOOR_POINTS)
        .min(values.len());
    (k > 0).then(|| values[(k - 1) / 2])
}

/// Index of the first point where the curve rises for good: the point after
/// the last one within the tolerance of the curve's floor, when at least
/// `tol.confirm` points follow it. More NOPs never make an iteration faster,
/// so once the time has grown every later point stays up; a point or a run of
/// points that falls back to the plateau was a disturbed timing (another
/// tenant, a busy SMT sibling), not a knee. `None` when the curve never rises.
pub fn first_knee(points: &[Point], tol: Tolerance) -> Option<usize> {
    let floor = floor(points)?;
    let last_flat = points.iter().rposition(|p| !tol.above(floor, p.1))?;
    let knee = last_flat + 1;
    if knee + tol.confirm >= points.len() {
        return None;
    }
    // What follows a knee lies above the plateau before it, not merely above
    // the floor: a noisy plateau with a quiet end is not a knee.
    let mut after: Vec<f64> = points[knee..].iter().map(|p| p.1).collect();
    let after = median(&mut after)?;
    tol.above(plateau(points, Some(knee)), after)
        .then_some(knee)
}

/// Every knee of a staircase: the first, then each later point where the
/// curve starts to grow again after a flat stretch (seed 003's L2 and DRAM).
/// Meant for single-issue cores: on a wide core the curve past the knee is a
/// ramp, not a staircase, and a ramp shallower than the tolerance would read
/// as a step every few NOPs.
pub fn staircase(points: &[Point], tol: Tolerance) -> Vec<usize> {
    // A choice: a rise is climbed while each step is above half the
    // tolerance, so a knee spread over two points (the step between two
    // timings) still counts once; half keeps a flat stretch's wobble,
    // under the whole tolerance, from extending a climb for long.
    let half = Tolerance {
        relative: tol.relative / 2.0,
        absolute: tol.absolute / 2.0,
        ..tol
    };
    let mut found = Vec::new();
    let mut start = 0;
    while let Some(k) = first_knee(&points[start..], tol) {
        let mut k = start + k;
        found.push(k);
        // Climb while each point is still well above the one before it: one
        // rise, however many points it spans, is one knee.
        while k + 1 < points.len() && half.above(points[k].1, points[k + 1].1) {
            k += 1;
        }
        start = k;
    }
    found
}

/// The median of the points before `knee` (all points when there is none).
pub fn plateau(points: &[Point], knee: Option<usize>) -> f64 {
    let end = knee.unwrap_or(points.len()).max(1).min(points.len());
    let mut values: Vec<f64> = points[..end].iter().map(|p| p.1).collect();
    median(&mut values).unwrap_or(f64::NAN)
}

/// A robust line `y = a + s N` through `points` (Theil-Sen: the median of the
/// slopes between every pair, then the median intercept), so a few disturbed
/// timings past the knee do not tilt it: `(a, s)`; `None` for fewer than two
/// distinct N.
pub fn line_fit(points: &[Point]) -> Option<(f64, f64)> {
    let mut slopes = Vec::new();
    for (i, p) in points.iter().enumerate() {
        for q in &points[i + 1..] {
            if q.0 != p.0 {
                slopes.push((q.1 - p.1) / (q.0 as f64 - p.0 as f64));
            }
        }
    }
    let slope = median(&mut slopes)?;
    let mut intercepts: Vec<f64> = points.iter().map(|p| p.1 - slope * p.0 as f64).collect();
    Some((median(&mut intercepts)?, slope))
}

fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The shape of one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveShape {
    /// Median time per iteration before the first knee (the whole curve if none).
    pub plateau: f64,
    /// N of the first point above the plateau: where the time starts to grow.
    pub knee_nops: Option<u32>,
    /// Where the line through the points from the knee on meets the plateau (fractional N).
    pub crossing_nops: Option<f64>,
    /// Slope of the robust line from the last flat point on, per NOP.
    pub slope: Option<f64>,
}

/// Finds the plateau, the first knee and the slope past it.
pub fn shape(points: &[Point], tol: Tolerance) -> CurveShape {
    let knee = first_knee(points, tol);
    let plateau = plateau(points, knee);
    let fit = knee.and_then(|k| line_fit(&points[k - 1..]));
    let crossing = match (knee, fit) {
        (Some(k), Some((a, s))) if s > 0.0 => {
            Some(((plateau - a) / s).clamp(points[0].0 as f64, points[k].0 as f64))
        }
        _ => None,
    };
    CurveShape {
        plateau,
        knee_nops: knee.map(|k| points[k].0),
        crossing_nops: crossing,
        slope: fit.map(|(_, s)| s),
    }
}

/// What the curve says about the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Issue {
    /// One instruction per cycle past the knee: seed 003's reading holds, the knee is the latency.
    SingleIssue,
    /// Several per cycle (out-of-order or superscalar): the knee is (latency + 1) x width.
    MultiIssue,
    /// No knee in the range and no proof of overlap: widen `--nops`.
    Undetermined,
}

/// The core's issue behaviour as read from one curve in cycles.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// The verdict.
    pub issue: Issue,
    /// Instructions per cycle from the slope past the knee (1 / slope).
    pub width_from_slope: Option<f64>,
    /// Instructions per cycle at the knee: (crossing N + 2) / plateau cycles.
    pub width_at_knee: Option<f64>,
    /// Without a knee: (largest N + 2) / plateau, a lower bound on the width.
    pub width_at_least: Option<f64>,
}

/// Reads the issue behaviour from a curve in cycles per iteration whose
/// largest N is `last_nops`.
pub fn read_issue(shape: &CurveShape, last_nops: u32) -> Reading {
    let width_from_slope = shape.slope.filter(|s| *s > 0.0).map(|s| 1.0 / s);
    let width_at_knee = shape
        .crossing_nops
        .map(|n| (n + BODY_INSTRUCTIONS) / shape.plateau);
    let width_at_least = shape
        .knee_nops
        .is_none()
        .then(|| (last_nops as f64 + BODY_INSTRUCTIONS) / shape.plateau);
    let issue = match (width_from_slope, width_at_least) {
        (Some(w), _) if w <= SINGLE_ISSUE_MAX_WIDTH => Issue::SingleIssue,
        (Some(_), _) => Issue::MultiIssue,
        (None, Some(w)) if w > SINGLE_ISSUE_MAX_WIDTH => Issue::MultiIssue,
        _ => Issue::Undetermined,
    };
    Reading {
        issue,
        width_from_slope,
        width_at_knee,
        width_at_least,
    }
}

/// Load-to-use latency in cycles, as seed 003's table gives it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Shortest: the first N where the time grows (single-issue cores only).
    pub min: Option<f64>,
    /// Average: plateau - 1 (the add) - loop overhead per iteration.
    pub avg: f64,
    /// Longest: N + 1 at the first N where the time meets `N + 2 + overhead`
    /// (single-issue cores only; `None` when the range ends before).
    pub max: Option<f64>,
}

/// The latency figures of one curve in cycles, given how the core issues and
/// the loop overhead per iteration.
pub fn latency(
    points: &[Point],
    shape: &CurveShape,
    issue: Issue,
    overhead: f64,
    tol: Tolerance,
) -> Latency {
    let avg = shape.plateau - USE_CYCLES - overhead;
    if issue != Issue::SingleIssue {
        return Latency {
            min: None,
            avg,
            max: None,
        };
    }
    // The model: the add issues at cycle N + 1 after the load, once every
    // NOP before it has (one a cycle, single-issue).
    let exposed = |n: u32| n as f64 + 1.0 + USE_CYCLES + overhead;
    let max = points
        .iter()
        .find(|&&(n, y)| !tol.above(exposed(n), y))
        .map(|&(n, _)| n as f64 + 1.0);
    // A table must read min <= avg <= max: a figure that breaks the order
    // comes from a curve too noisy to read it from, and is left out.
    Latency {
        min: shape.knee_nops.map(f64::from).filter(|m| *m <= avg),
        avg,
        max: max.filter(|m| *m >= avg),
    }
}

/// Seed 003's own derivation, for a single-issue core timed in any unit
/// (seconds for the whole run, there): past the knee one NOP costs one cycle
/// per iteration, so the slope is the unit of a cycle; the first N that grows
/// is the latency; the load, the shadow and the add take `latency + 1` cycles;
/// what the plateau holds beyond that is loop overhead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedReading {
    /// The curve's unit per cycle per iteration (seed 003: 4.37 s).
    pub unit_per_cycle: f64,
    /// Load-to-use latency, cycles (the knee's N).
    pub latency: u32,
    /// Plateau, cycles per iteration.
    pub plateau_cycles: f64,
    /// Load + shadow + use: latency + 1 cycles.
    pub body_cycles: f64,
    /// Plateau - body: the loop's own cycles per iteration.
    pub loop_overhead_cycles: f64,
}

/// Reads a single-issue curve the way seed 003 does; `None` without a knee.
pub fn seed_reading(points: &[Point], tol: Tolerance) -> Option<SeedReading> {
    let shape = shape(points, tol);
    let unit = shape.slope?;
    let latency = shape.knee_nops?;
    let plateau_cycles = shape.plateau / unit;
    let body_cycles = latency as f64 + USE_CYCLES;
    Some(SeedReading {
        unit_per_cycle: unit,
        latency,
        plateau_cycles,
        body_cycles,
        loop_overhead_cycles: plateau_cycles - body_cycles,
    })
}

/// Bytes per second a chain of dependent `word_bytes` loads delivers at
/// `ghz` with `cycles` per load: seed 003's throughput column (it prints
/// these in units of 10^6 B/s: 4 bytes x 996 MHz / 4 cycles = 996).
pub fn throughput_bytes_per_s(word_bytes: f64, ghz: f64, cycles: f64) -> f64 {
    word_bytes * ghz * 1e9 / cycles
}

#[cfg(test)]
#[path = "knee_tests.rs"]
mod tests;
