//! A flat run that no level served: a level serves its loads at one
//! latency, so where a run's repeats read, at one size, both the level
//! below it and the one above, the loads there went now to one level, now
//! to the other (a shared level's share moving while the sweep measured),
//! and the run's latency is their mixture, however flat its medians.
//!
//! Found on a Zen 3 guest whose L3 share moved between 1 and 4 MiB during
//! one sweep: repeats at 2.6 and 3.3 MiB read 17 ns (the L3) and 153 ns
//! (memory), the medians sat level at about 100 ns, and that "level" was
//! then taken for memory.

use super::confidence::crosses;
use super::unresolved::Unresolved;
use super::{CurvePoint, Level};

/// Whether at half of `level`'s sizes or more the repeats reached half-way
/// to both neighbouring plateaus (`below_ns` and `above_ns`): no level
/// served those sizes steadily, and the run is not one.
fn is_mixture(points: &[CurvePoint], level: &Level, below_ns: f64, above_ns: f64) -> bool {
    let run = &points[level.start..level.end];
    let both = run
        .iter()
        .filter(|p| crosses(p, level.ns, below_ns) && crosses(p, level.ns, above_ns))
        .count();
    2 * both >= run.len()
}

/// Takes out of `plateaus` (in size order) every one between two others
/// that [`is_mixture`] finds no level served, into `mixtures`. The first
/// and the last plateau have one neighbour and stay: a mixture lies between
/// two levels. Judged against the plateaus as the curve showed them.
pub(super) fn drop_mixtures(
    points: &[CurvePoint],
    plateaus: &mut Vec<Level>,
    mixtures: &mut Vec<Unresolved>,
) {
    let flagged: Vec<bool> = (0..plateaus.len())
        .map(|k| {
            k > 0
                && k + 1 < plateaus.len()
                && is_mixture(points, &plateaus[k], plateaus[k - 1].ns, plateaus[k + 1].ns)
        })
        .collect();
    let mut k = 0;
    plateaus.retain(|l| {
        let drop = flagged[k];
        k += 1;
        if drop {
            mixtures.push(Unresolved::of(points, l.start, l.end));
        }
        !drop
    });
}

/// What a note says of a stretch [`drop_mixtures`] took out.
pub(super) const MIXTURE: &str = "looks level, but at half of its sizes or more the repeats read the levels on both sides of it: loads went now to one, now to the other (a shared level's share moving during the sweep); not taken for a level";

#[cfg(test)]
mod tests {
    use super::*;

    fn point(size: u64, ns: f64, ns_min: f64, ns_max: f64) -> CurvePoint {
        CurvePoint {
            size_bytes: size,
            ns,
            ns_min,
            ns_max,
            cycles: 0.0,
        }
    }

    #[test]
    fn a_run_read_as_both_neighbours_is_dropped_a_level_with_a_moving_edge_kept() {
        const M: u64 = 1 << 20;
        let points = [
            point(M / 4, 4.0, 3.9, 4.1),
            point(M / 2, 4.0, 3.9, 4.1),
            point(M, 16.0, 15.5, 16.5),
            point(2 * M, 17.0, 16.0, 17.5),
            // The L3's upper edge: a repeat read memory (one side only).
            point(3 * M, 18.0, 16.5, 150.0),
            point(5 * M, 160.0, 155.0, 165.0),
            point(8 * M, 162.0, 157.0, 166.0),
        ];
        let l2 = Level::of(&points, 0, 2, true);
        let l3 = Level::of(&points, 2, 5, true);
        let memory = Level::of(&points, 5, 7, true);
        let mut plateaus = vec![l2.clone(), l3.clone(), memory.clone()];
        let mut mixtures = Vec::new();
        drop_mixtures(&points, &mut plateaus, &mut mixtures);
        assert_eq!(plateaus.len(), 3, "a level with a moving edge was dropped");
        assert!(mixtures.is_empty());
        // The same run with its repeats reading 4 ns and 150 ns at two of
        // its three sizes: no level served it.
        let mut mixed = points;
        mixed[2] = point(M, 60.0, 4.2, 150.0);
        mixed[3] = point(2 * M, 62.0, 4.5, 155.0);
        mixed[4] = point(3 * M, 65.0, 50.0, 80.0);
        let run = Level::of(&mixed, 2, 5, true);
        let mut plateaus = vec![l2, run, memory];
        drop_mixtures(&mixed, &mut plateaus, &mut mixtures);
        assert_eq!(plateaus.len(), 2);
        assert_eq!((mixtures[0].from_bytes, mixtures[0].to_bytes), (M, 3 * M));
    }
}
