//! The edge series' lower bounds, for the events: an interval whose edge
//! is only "at least this probe" (the larger probes walked short and left
//! out) takes a value from the readings around it, so that a bound is no
//! fall (`record::summarise`).

use crate::analysis::changepoint;

/// The edge series the events are found in, where some readings are only
/// lower bounds (`lower`: at least that probe was served, and the larger
/// ones were walked short and left out, or there were none): each bound
/// takes the nearest reading not under it by an event's least shift
/// ([`changepoint::MIN_SHIFT`]: the events cannot tell such a reading
/// from the bound) or the nearest bound above it, and where that is a
/// bound, what that bound took in turn (the edge may well have stayed
/// there); it stays as it is where neither lies anywhere. A bound says nothing of how
/// far above it the edge lay: taken as itself, a quiet watch on the Zen 5
/// guest, whose 11.8 MiB probe was walked whole in some intervals and
/// short in others, read events "6.8 MiB -> 9.7 MiB" and back between the
/// two, and a streaming neighbour's edge event ran two intervals past its
/// end while that probe's walks grew back. Taken as a bound above it, the
/// catalogue's watches (tests/machines/watch.rs) ran an event two
/// intervals past a neighbour's end, where ">=2.6 MiB" took the ">=3.3"
/// beside it and the level was 3.9; and a neighbour's edge read 0.7 MiB
/// and then ">=0.7", which took the quiet 0.9 MiB two intervals back where
/// the reading just before it was the bound itself. The quantiles still
/// count each bound as it is.
pub fn bounds_filled(values: &[f64], lower: &[bool]) -> Vec<f64> {
    let n = values.len();
    let is_bound = |i: usize| lower.get(i).copied().unwrap_or(false) && values[i].is_finite();
    // Readings a bound may take: those not under it by an event's least
    // shift (one within it is the bound as the events tell it), and
    // bounds above it (what those took in turn).
    let tolerance = 1.0 + changepoint::MIN_SHIFT;
    let readings: Vec<f64> = (0..n)
        .map(|i| if is_bound(i) { f64::NAN } else { values[i] })
        .collect();
    let wanted: Vec<f64> = (0..n)
        .map(|i| {
            if is_bound(i) {
                values[i] / tolerance
            } else {
                f64::NAN
            }
        })
        .collect();
    let nearest = |a: Option<usize>, b: Option<usize>, i: usize| match (a, b) {
        (Some(a), Some(b)) => Some(if i.abs_diff(a) <= i.abs_diff(b) { a } else { b }),
        (a, b) => a.or(b),
    };
    // Bounds above: a reading above is within the tolerance too.
    let bounds: Vec<(usize, f64)> = (0..n)
        .filter(|&i| is_bound(i))
        .map(|i| (i, values[i]))
        .collect();
    let before = nearest_above(bounds.iter().copied(), n);
    let after = nearest_above(bounds.iter().rev().copied(), n);
    let read_before = nearest_at_least(&readings, &wanted, (0..n).collect::<Vec<_>>());
    let read_after = nearest_at_least(&readings, &wanted, (0..n).rev().collect::<Vec<_>>());
    // Where each bound takes its value from: the nearest candidate, the
    // earlier where two are as near.
    let source: Vec<Option<usize>> = (0..n)
        .map(|i| {
            if !is_bound(i) {
                return None;
            }
            let earlier = nearest(read_before[i], before[i], i);
            let later = nearest(read_after[i], after[i], i);
            nearest(earlier, later, i)
        })
        .collect();
    // Each chain of bounds ends at a reading or at a bound with nothing
    // above it; a bound passes only to one strictly above it, so a chain
    // never comes back on itself.
    let mut filled: Vec<Option<f64>> = vec![None; n];
    for start in 0..n {
        let mut path = Vec::new();
        let mut i = start;
        let value = loop {
            if let Some(v) = filled[i] {
                break v;
            }
            match source[i] {
                Some(j) => {
                    path.push(i);
                    i = j;
                }
                None => break values[i],
            }
        };
        filled[i] = Some(value);
        // Never under a bound's own probe: a reading within the tolerance
        // under it says the edge stayed about there, and the bound says
        // at least there (a lone low reading beside a bound would read as
        // two, an event the running median does not remove).
        let mut value = value;
        for k in path.into_iter().rev() {
            value = value.max(values[k]);
            filled[k] = Some(value);
        }
    }
    filled
        .into_iter()
        .zip(values)
        .map(|(f, &v)| f.unwrap_or(v))
        .collect()
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

    #[test]
    fn a_lower_bound_takes_the_nearest_reading_above_it_for_the_events() {
        let nan = f64::NAN;
        // 11.8 (a bound), 9.7 (read), 6.8 (a bound), 3.4 (under every probe),
        // 6.8 (a bound), 11.8 (a bound).
        let read = [11.8, 9.7, 6.8, 3.4, 6.8, 11.8, nan];
        let lower = [true, false, true, false, true, true, true];
        let filled = bounds_filled(&read, &lower);
        // The first bound has nothing above it: itself. The 6.8 at 2 takes
        // the nearer of 9.7 (1 before) and 11.8 (3 after); at 4 the 11.8 next
        // to it (a bound with nothing above: itself). Readings that are no
        // bound, and a missing one, stay.
        assert_eq!(filled[..6], [11.8, 9.7, 9.7, 3.4, 11.8, 11.8]);
        assert!(filled[6].is_nan());
        // A bound never takes a reading below it: under every probe is no
        // evidence that the edge was only at the bound.
        assert_eq!(bounds_filled(&[3.4, 6.8], &[false, true]), [3.4, 6.8]);
        // As near either side: the earlier. A reading equal to the bound is no
        // reading above it, and a missing one is passed over.
        let filled = bounds_filled(&[9.0, 6.8, 7.5], &[false, true, false]);
        assert_eq!(filled, [9.0, 9.0, 7.5]);
        let filled = bounds_filled(&[6.8, nan, 6.8, 9.0], &[true, false, true, true]);
        assert_eq!(filled[2..], [9.0, 9.0]);
        assert_eq!(filled[0], 9.0);
        // A bound whose nearest reading above is a bound takes what that one
        // took: after a neighbour (2.9 MiB), ">=2.6" beside ">=3.3" beside the
        // level (3.9) reads as the level, not as 3.3, 15% under it.
        let filled = bounds_filled(
            &[2.9, 2.0, 3.3, 2.6, 4.0],
            &[false, true, true, true, false],
        );
        assert_eq!(filled, [2.9, 2.9, 4.0, 4.0, 4.0]);
        // A reading within an event's least shift of a bound is as good as
        // above it: ">=0.7" beside a 0.7 reads 0.7, not the 0.9 further back.
        let filled = bounds_filled(
            &[0.9, 0.7, 0.7, 0.4, 0.7],
            &[true, false, true, true, false],
        );
        assert_eq!(filled, [0.9, 0.7, 0.7, 0.7, 0.7]);
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
