//! The edge series' lower bounds, for the events: an interval whose edge
//! is only "at least this probe" (the larger probes walked short and left
//! out) takes a value from the readings around it, so that a bound is no
//! fall (`record::summarise`).

use crate::analysis::changepoint;

/// The most readings on each side of a bound that its value is taken from:
/// two each side, so that one reading never outweighs the others (a
/// reading 10-12% under the level, then a bound, then the level: a bound
/// that took its nearest reading, the earlier of two as near, made the low
/// reading two intervals, which the running median keeps as an excursion;
/// the catalogue's quiet watches on four rows, tests/machines/watch.rs).
const AROUND_EACH_SIDE: usize = 2;

/// The edge series the events are found in, where some readings are only
/// lower bounds (`lower`: at least that probe was served, and the larger
/// ones were walked short and left out, or there were none). Each bound
/// takes the median of what lies around it up to the first sign that the
/// edge moved: on each side the nearest [`AROUND_EACH_SIDE`] readings not
/// under it by an event's least shift ([`changepoint::MIN_SHIFT`]: the
/// events cannot tell such a reading from the bound), up to the first
/// reading under that (there the edge had moved away) or the first bound
/// above it, which counts with the value it took and ends that side (past
/// it, its own surroundings speak). Where nothing beside it agrees, the
/// nearest value each side that does, wherever it lies. Never under its
/// own probe; itself where nothing agrees anywhere.
///
/// A bound says nothing of how far above it the edge lay: taken as itself,
/// a quiet watch on the Zen 5 guest, whose 11.8 MiB probe was walked whole
/// in some intervals and short in others, read events "6.8 MiB -> 9.7 MiB"
/// and back between the two. Taken as the bound above it, the catalogue's
/// watches ran an event two intervals past a neighbour's end, where ">=2.6
/// MiB" took the ">=3.3" beside it and the level was 3.9. Taken as its
/// nearest agreeing reading, a lone low reading beside it counted twice.
/// The quantiles still count each bound as it is.
pub fn bounds_filled(values: &[f64], lower: &[bool]) -> Vec<f64> {
    let n = values.len();
    let is_bound = |i: usize| lower.get(i).copied().unwrap_or(false) && values[i].is_finite();
    let tolerance = 1.0 + changepoint::MIN_SHIFT;
    // What a bound needs a reading to be to agree with it; NaN for the rest.
    let wanted: Vec<f64> = (0..n)
        .map(|i| {
            if is_bound(i) {
                values[i] / tolerance
            } else {
                f64::NAN
            }
        })
        .collect();
    let readings: Vec<f64> = (0..n)
        .map(|i| if is_bound(i) { f64::NAN } else { values[i] })
        .collect();
    let bounds: Vec<(usize, f64)> = (0..n)
        .filter(|&i| is_bound(i))
        .map(|i| (i, values[i]))
        .collect();
    let sides = [
        Side::new(&readings, &wanted, bounds.iter().copied(), (0..n).collect()),
        Side::new(
            &readings,
            &wanted,
            bounds.iter().rev().copied(),
            (0..n).rev().collect(),
        ),
    ];
    // A bound's value may lean on the bounds above it: the highest first.
    let mut order = bounds;
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut filled = values.to_vec();
    for (i, bound) in order {
        let mut logs: Vec<f64> = sides
            .iter()
            .flat_map(|side| side.around(i, &readings, wanted[i], &filled))
            .collect();
        if logs.is_empty() {
            // Nothing beside it agrees. A lone reading under it, or one at
            // the edge of a short dip, is no sign of where the edge stays.
            logs = sides
                .iter()
                .filter_map(|side| side.nearest_agreeing(i, &readings, &filled))
                .collect();
        }
        if let Some(median) = median(&mut logs) {
            filled[i] = median.exp().max(bound);
        }
    }
    filled
}

/// One direction from each interval (before it, or after it).
struct Side {
    /// The nearest reading (no bound, finite) that way.
    reading: Vec<Option<usize>>,
    /// The nearest bound above this one's value that way (bounds only).
    above: Vec<Option<usize>>,
    /// The nearest reading that agrees with this bound, however far.
    agreeing: Vec<Option<usize>>,
}

impl Side {
    /// The side met visiting the intervals in `order`, and the bounds
    /// (index, value) in the same order (each one's nearest is among those
    /// visited before it).
    fn new(
        readings: &[f64],
        wanted: &[f64],
        bounds: impl Iterator<Item = (usize, f64)>,
        order: Vec<usize>,
    ) -> Side {
        let n = readings.len();
        Side {
            reading: nearest_where(order.iter().copied(), |i| readings[i].is_finite(), n),
            above: nearest_above(bounds, n),
            agreeing: nearest_at_least(readings, wanted, order),
        }
    }

    /// The logarithms of what lies this way of bound `i` up to the first
    /// sign the edge moved: up to [`AROUND_EACH_SIDE`] readings at least
    /// `wanted`, ending at a reading under it or at the first bound above
    /// (counted with the value it took, `filled`).
    fn around(&self, i: usize, readings: &[f64], wanted: f64, filled: &[f64]) -> Vec<f64> {
        let mut logs = Vec::with_capacity(AROUND_EACH_SIDE);
        let mut next = self.reading[i];
        while logs.len() < AROUND_EACH_SIDE {
            match (next, self.above[i]) {
                (r, Some(a)) if r.is_none_or(|r| i.abs_diff(a) < i.abs_diff(r)) => {
                    logs.push(filled[a].ln());
                    break;
                }
                (Some(r), _) if readings[r] >= wanted => {
                    logs.push(readings[r].ln());
                    next = self.reading[r];
                }
                _ => break,
            }
        }
        logs
    }

    /// The logarithm of the nearer this way of bound `i`'s nearest
    /// agreeing reading and its nearest bound above (with what it took).
    fn nearest_agreeing(&self, i: usize, readings: &[f64], filled: &[f64]) -> Option<f64> {
        let value = match (self.agreeing[i], self.above[i]) {
            (Some(r), Some(a)) if i.abs_diff(r) <= i.abs_diff(a) => readings[r],
            (_, Some(a)) => filled[a],
            (Some(r), None) => readings[r],
            (None, None) => return None,
        };
        Some(value.ln())
    }
}

/// The median of `logs` (the mean of the middle two for an even count),
/// `None` for none.
fn median(logs: &mut [f64]) -> Option<f64> {
    if logs.is_empty() {
        return None;
    }
    logs.sort_by(f64::total_cmp);
    let m = logs.len();
    Some((logs[(m - 1) / 2] + logs[m / 2]) / 2.0)
}

/// For each of `n` indices, the nearest one visited before it (in `visit`'s
/// order) for which `wanted` holds.
fn nearest_where(
    visit: impl Iterator<Item = usize>,
    wanted: impl Fn(usize) -> bool,
    n: usize,
) -> Vec<Option<usize>> {
    let mut found = vec![None; n];
    let mut last = None;
    for i in visit {
        found[i] = last;
        if wanted(i) {
            last = Some(i);
        }
    }
    found
}

/// For each index with a finite `wanted[i]`, the nearest index visited
/// before it in `order` whose `readings` value is finite and at least
/// `wanted[i]`. One pass with a stack of the readings no later one has
/// passed (values falling towards its top): the nearest reading at least
/// as high lies on it, the topmost such.
fn nearest_at_least(readings: &[f64], wanted: &[f64], order: Vec<usize>) -> Vec<Option<usize>> {
    let mut found = vec![None; readings.len()];
    let mut stack: Vec<(usize, f64)> = Vec::new();
    for i in order {
        if wanted[i].is_finite() {
            let reach = stack.partition_point(|&(_, v)| v >= wanted[i]);
            found[i] = reach.checked_sub(1).map(|k| stack[k].0);
        }
        let v = readings[i];
        if v.is_finite() {
            while stack.last().is_some_and(|&(_, s)| s <= v) {
                stack.pop();
            }
            stack.push((i, v));
        }
    }
    found
}

/// For each of `n` readings, visited as `visit` gives them (index, value),
/// the nearest one visited before it whose value is finite and above its
/// own. One pass with a stack of the readings no nearer one has passed: a
/// day-long watch has 86,400 intervals, and a scan out from each one in
/// turn is quadratic where a watch that read "at least the largest probe"
/// throughout has nothing above to find.
fn nearest_above(visit: impl Iterator<Item = (usize, f64)>, n: usize) -> Vec<Option<usize>> {
    let mut found = vec![None; n];
    let mut stack: Vec<(usize, f64)> = Vec::new();
    for (i, v) in visit.filter(|(_, v)| v.is_finite()) {
        while stack.last().is_some_and(|&(_, s)| s <= v) {
            stack.pop();
        }
        found[i] = stack.last().map(|&(j, _)| j);
        stack.push((i, v));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| {
                (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-9 * x.abs().max(1.0)
            })
    }

    #[test]
    fn a_lower_bound_takes_the_median_of_the_readings_around_it_that_agree() {
        let nan = f64::NAN;
        // A reading 11% under the level, then a bound the level and it both
        // satisfy: the bound reads the level (low, level, level, level), and
        // the low reading stays one interval, which is no event.
        let mut read = vec![4.0; 20];
        read[10] = 3.55;
        read[11] = 3.3;
        let mut lower = vec![false; 20];
        lower[11] = true;
        let filled = bounds_filled(&read, &lower);
        assert_eq!(filled[11], 4.0);
        assert!(changepoint::shifts(&filled).is_empty());
        // Between two levels that both satisfy it: their middle (the
        // geometric mean), siding with neither.
        let filled = bounds_filled(&[9.0, 6.8, 7.5], &[false, true, false]);
        assert!(close(&filled, &[9.0, (9.0f64 * 7.5).sqrt(), 7.5]));
        // Nothing past a reading under it (there the edge had moved): 11.8
        // (a bound), 9.7, 6.8 (a bound), 3.4, 6.8 (a bound), 11.8 (a bound).
        // The first has no reading that agrees before the 9.7 under it:
        // itself. The 6.8 at 2 takes 9.7 and the bound above it (11.8),
        // not the 3.4; at 4 the 11.8 beside it. A missing one stays.
        let read = [11.8, 9.7, 6.8, 3.4, 6.8, 11.8, nan];
        let lower = [true, false, true, false, true, true, true];
        let filled = bounds_filled(&read, &lower);
        let mid = (9.7f64 * 11.8).sqrt();
        assert!(close(&filled, &[11.8, 9.7, mid, 3.4, 11.8, 11.8, nan]));
        // A bound never takes a reading below it: under every probe is no
        // evidence that the edge was only at the bound.
        assert_eq!(bounds_filled(&[3.4, 6.8], &[false, true]), [3.4, 6.8]);
        // A bound above counts with what it took and ends its side: after a
        // neighbour (2.9 MiB), ">=2.6" between ">=3.3" and the level (3.9)
        // reads as the level, not as 3.3, 15% under it.
        let filled = bounds_filled(
            &[2.9, 2.0, 3.3, 2.6, 4.0],
            &[false, true, true, true, false],
        );
        let mid = (2.9f64 * 4.0).sqrt();
        assert!(close(&filled, &[2.9, mid, 4.0, 4.0, 4.0]));
        let filled = bounds_filled(&[6.8, nan, 6.8, 9.0], &[true, false, true, true]);
        assert!(close(&filled, &[9.0, nan, 9.0, 9.0]));
        // A reading within an event's least shift of a bound agrees with it:
        // ">=0.7" beside a 0.7 reads 0.7, not the 0.9 further back.
        let filled = bounds_filled(
            &[0.9, 0.7, 0.7, 0.4, 0.7],
            &[true, false, true, true, false],
        );
        assert!(close(&filled, &[0.9, 0.7, 0.7, 0.7, 0.7]));
        // A reading within it, under the bound: the bound's own probe.
        assert_eq!(bounds_filled(&[3.5, 3.6], &[false, true]), [3.5, 3.6]);
        // Not a bound under it by more: that is below it.
        assert_eq!(bounds_filled(&[0.6, 0.7], &[false, true]), [0.6, 0.7]);
        // A day of intervals at the largest probe, nothing above: at once.
        let day = vec![35.3; 86_400];
        let filled = bounds_filled(&day, &vec![true; 86_400]);
        assert_eq!(filled, day);
    }
}
