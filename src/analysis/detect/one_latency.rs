//! Whether a level serves its loads at one latency, read from how single
//! loads spread. A flat stretch between two levels can be their mixture:
//! loads served now by the level below (at `a` ns), now by the one above
//! (at `c`), in a proportion that holds steady over a range of sizes (the
//! Zen 4 guest's 1 MiB L2 under a busy host: 9.3 ns over 0.7-1.2 MiB,
//! between the L2's 4.2 ns and the L3's 16 ns, taken for the L3). Medians
//! cannot tell it from a level at 9.3 ns; the loads can.
//!
//! Any stretch's loads that miss it go to the level above, at `c`. Read as
//! two latencies, `c` and one other, `x`, loads of mean `m` and variance
//! `v` put the other at `x = m - v / (c - m)` (a two-point distribution).
//! A level serves the rest itself: `x` is its own latency, near the
//! stretch's. A mixture's rest is served by the level below: `x` is near
//! `a`. The verdict is the nearer of the two (in log): the stretch is a
//! mixture when `x` lies below the geometric middle of `a` and the
//! stretch's latency. A level whose edge a neighbour erodes (its loads
//! partly in memory) stays a level: its `x` is its own latency however many
//! loads miss.
//!
//! No loads between `a` and `c` of mean `m` spread more than `(m - a)(c - m)`
//! (all of them at `a` or `c`), which puts `x` at `a`. An `x` well below `a`
//! (as far below as the stretch's latency is above it, in log) is no
//! mixture of latencies, but loads slowed together: another tenant's
//! bursts, a whole group at a time (a sweep beside a compiler on the Zen 4
//! guest: one load's variance 4503 ns^2 at 1.7 MiB in its L3, where the
//! L3 and memory mixed at that mean allow 1971; `x` -6 ns). That tells
//! nothing, and the stretch stays as the curve shows it.
//!
//! The sweep times groups of `k` dependent loads at the middle of each
//! cache level's plateau, with one `k` at every size (the smallest power of
//! two whose group the timer resolves at the fastest level tested), so the
//! timer's own share of the spread is the same in each and the level
//! below's spread can be taken off. A random chain's consecutive loads go
//! to unrelated sets, so a group's time is a sum of independent loads: the
//! groups' mean is `m`, and their variance times `k` is one load's `v`.

use serde::{Deserialize, Serialize};

use super::unresolved::Unresolved;
use super::{CurvePoint, Level};

/// The share of groups set aside as disturbed, the slowest: an interrupt
/// or another tenant only slows a group, and a few slowed groups would
/// weigh in a variance as much as every miss.
pub const DISTURBED_SHARE: f64 = 0.02;

/// Groups of dependent loads timed at one size: how the single loads spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadSpread {
    /// The chain's size, bytes (the middle of a level's plateau).
    pub size_bytes: u64,
    /// Dependent loads between two timer reads.
    pub loads_per_group: u32,
    /// Groups kept (the slowest [`DISTURBED_SHARE`] set aside).
    pub groups: u64,
    /// ns per load, the mean of the groups kept.
    pub mean_ns: f64,
    /// The variance of one load, ns^2: the groups' variance (ns per load)
    /// times the loads in a group, whose mean of `k` independent loads has
    /// `1/k` of it.
    pub load_variance: f64,
}

impl LoadSpread {
    /// The spread of the groups in `ns_per_load` (ns per load, any order),
    /// the slowest [`DISTURBED_SHARE`] set aside; `None` without groups
    /// or with one not finite. Of several timelines, the caller keeps the
    /// one of least variance (another tenant only widens one).
    pub fn of(size_bytes: u64, loads_per_group: u32, ns_per_load: &mut [f64]) -> Option<Self> {
        if ns_per_load.is_empty() || ns_per_load.iter().any(|x| !x.is_finite()) {
            return None;
        }
        ns_per_load.sort_by(f64::total_cmp);
        let kept = ns_per_load.len() - (ns_per_load.len() as f64 * DISTURBED_SHARE) as usize;
        let groups = &ns_per_load[..kept.max(1)];
        let n = groups.len() as f64;
        let mean = groups.iter().sum::<f64>() / n;
        let variance = groups.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        Some(LoadSpread {
            size_bytes,
            loads_per_group,
            groups: groups.len() as u64,
            mean_ns: mean,
            load_variance: variance * f64::from(loads_per_group),
        })
    }
}

/// How a stretch's loads spread against its neighbours'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpreadVerdict {
    /// The latency that serves the loads the level above does not, ns:
    /// `m - v / (c - m)`.
    pub rest_ns: f64,
    /// The geometric middle of the level below's latency and the
    /// stretch's, ns: below it, the rest is the level below's.
    pub middle_ns: f64,
    /// As far below the level below's latency as `middle_ns` is above it
    /// (in log), ns: below it, the loads spread more than any latencies
    /// between the neighbours could, so they were slowed together.
    pub floor_ns: f64,
}

impl SpreadVerdict {
    /// Whether the loads the level above does not serve are the level
    /// below's: the stretch is their mixture, not a level.
    pub fn is_mixture(&self) -> bool {
        (self.floor_ns..self.middle_ns).contains(&self.rest_ns)
    }

    /// Whether the loads spread more than any mixture of latencies between
    /// the neighbours could (slowed together: no verdict).
    pub fn overspread(&self) -> bool {
        self.rest_ns < self.floor_ns
    }
}

/// The verdict on a stretch at `ns` (its plateau's latency) between levels
/// at `below_ns` and `above_ns`, from its loads' spread and the level
/// below's (`reference`: the timer's and the level's own spread, taken
/// off), both timed in groups of the same size; `None` where they were
/// not, where `ns` does not lie between its neighbours, or where the loads
/// timed were not faster than the level above.
pub fn judge(
    stretch: &LoadSpread,
    reference: &LoadSpread,
    below_ns: f64,
    ns: f64,
    above_ns: f64,
) -> Option<SpreadVerdict> {
    let m = stretch.mean_ns;
    let usable = below_ns < ns
        && ns < above_ns
        && m < above_ns
        && stretch.loads_per_group == reference.loads_per_group;
    usable.then(|| {
        let v = (stretch.load_variance - reference.load_variance).max(0.0);
        let middle = (below_ns * ns).sqrt();
        SpreadVerdict {
            rest_ns: m - v / (above_ns - m),
            middle_ns: middle,
            floor_ns: below_ns * below_ns / middle,
        }
    })
}

/// The spread measured inside `level`'s plateau, if any.
fn spread_in<'a>(
    points: &[CurvePoint],
    level: &Level,
    spreads: &'a [LoadSpread],
) -> Option<&'a LoadSpread> {
    let (from, to) = (
        points[level.start].size_bytes,
        points[level.end - 1].size_bytes,
    );
    spreads.iter().find(|s| (from..=to).contains(&s.size_bytes))
}

/// Takes out of `levels` (memory last) every cache level between two
/// others whose loads spread as their mixture does, the clearest first
/// (taking one out changes its neighbours' test), noting each, while the
/// curve shows more caches than the `sysfs_count` data caches sysfs lists
/// (any number where it lists none). Within sysfs's count the test is not
/// read: another tenant's bursts slow a level's loads a group at a time and
/// can pass for a mixture (the catalogue's model, a tenth of the groups
/// bursting, sets aside a true L3 on five rows of sixteen), and a level
/// sysfs lists is not set aside on that.
pub(super) fn drop_load_mixtures(
    points: &[CurvePoint],
    levels: &mut Vec<Level>,
    spreads: &[LoadSpread],
    sysfs_count: usize,
    notes: &mut Vec<String>,
    unresolved: &mut Vec<Unresolved>,
) {
    while sysfs_count == 0 || levels.len().saturating_sub(1) > sysfs_count {
        let clearest = (1..levels.len().saturating_sub(1))
            .filter_map(|k| {
                let stretch = spread_in(points, &levels[k], spreads)?;
                let reference = spread_in(points, &levels[k - 1], spreads)?;
                let (below, above) = (levels[k - 1].ns, levels[k + 1].ns);
                let verdict = judge(stretch, reference, below, levels[k].ns, above)?;
                verdict.is_mixture().then_some((k, verdict))
            })
            .min_by(|x, y| (x.1.rest_ns / x.1.middle_ns).total_cmp(&(y.1.rest_ns / y.1.middle_ns)));
        let Some((k, verdict)) = clearest else {
            return;
        };
        let (below, above) = (levels[k - 1].ns, levels[k + 1].ns);
        let why = format!(
            "is the mixture of its neighbours, not a level: timed one by one, the loads the level above ({above:.1} ns) does not serve there take {:.1} ns, the level below's ({below:.1} ns), not a latency of their own",
            verdict.rest_ns.max(0.0)
        );
        super::unresolved::set_aside(points, levels, k, &why, notes, unresolved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(size_bytes: u64, k: u32, mean_ns: f64, load_variance: f64) -> LoadSpread {
        LoadSpread {
            size_bytes,
            loads_per_group: k,
            groups: 4096,
            mean_ns,
            load_variance,
        }
    }

    #[test]
    fn the_zen4_guests_l2_tail_is_a_mixture_and_its_l3_a_level() {
        // An independent rdtscp chase on the Zen 4 guest, groups of 16
        // loads (a 10 ns timer): the L2 at 200 KiB (every group 4.4 ns a
        // load), the 9.3 ns stretch at 950 KiB (quartiles 8.1, 8.8, 10.0),
        // the L3 at 2.6 MiB (14.4, 15.0, 15.6); variances from the
        // quartiles as a normal's (sd = IQR / 1.349, times 16).
        let l2 = spread(200 << 10, 16, 4.38, 0.1);
        let tail = spread(950 << 10, 16, 9.0, 31.0);
        let l3 = spread(2600 << 10, 16, 15.0, 13.5);
        let v = judge(&tail, &l2, 4.2, 9.3, 16.1).unwrap();
        assert!(v.is_mixture(), "{v:?}");
        // The L3 between the L2 and memory: a level.
        let v = judge(&l3, &l2, 4.2, 15.0, 166.0).unwrap();
        assert!(!v.is_mixture(), "{v:?}");
        // The L3 a neighbour eroded while its spread was timed (a sweep on
        // the Zen 4 guest, 3.8 MiB into a 5.6 MiB plateau at 15.9 ns:
        // groups of 32 at 17.9, 21.9, 26.4 ns): loads went to memory, and
        // the rest are still the L3's, a level.
        let eroded = spread(3977152, 32, 22.0, 1266.0);
        let l2 = spread(131456, 32, 3.85, 1.5);
        let v = judge(&eroded, &l2, 3.9, 15.9, 153.8).unwrap();
        assert!(
            !v.is_mixture() && (10.0..15.9).contains(&v.rest_ns),
            "{v:?}"
        );
        // The L3 beside a compiler on the other CPU (1.7 MiB into a plateau
        // at 13.6 ns): groups slowed together, more spread than memory and
        // the L3 could make at that mean. No verdict: it stays a level.
        let burst = spread(1781184, 32, 27.75, 4503.2 + 0.6);
        let l2_then = spread(123264, 32, 3.97, 0.6);
        let v = judge(&burst, &l2_then, 3.96, 13.6, 160.8).unwrap();
        assert!(!v.is_mixture() && v.overspread(), "{v:?}");
        // Groups of another size, or a stretch outside its neighbours: no verdict.
        assert!(judge(&spread(1 << 20, 8, 9.0, 31.0), &l2, 4.2, 9.3, 16.1).is_none());
        assert!(judge(&tail, &spread(1, 16, 4.38, 0.1), 4.2, 17.0, 16.1).is_none());
    }

    #[test]
    fn the_spread_of_the_groups_without_the_slowest() {
        // 100 groups of 4 loads: 98 at 10 or 12 ns a load, two interrupted.
        let mut ns: Vec<f64> = (0..98)
            .map(|i| if i % 2 == 0 { 10.0 } else { 12.0 })
            .collect();
        ns.extend([500.0, 900.0]);
        let s = LoadSpread::of(1 << 20, 4, &mut ns).unwrap();
        assert_eq!(s.groups, 98);
        assert!((s.mean_ns - 11.0).abs() < 1e-9, "{s:?}");
        // The groups' variance (1 ns^2) times 4 loads a group.
        assert!((s.load_variance - 4.0).abs() < 1e-9, "{s:?}");
        assert!(LoadSpread::of(1, 4, &mut []).is_none());
        assert!(LoadSpread::of(1, 4, &mut [1.0, f64::NAN]).is_none());
    }
}
