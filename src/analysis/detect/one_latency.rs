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
//!
//! What is not independent persists from one group to the next: another
//! tenant slowing the loads for microseconds to milliseconds (hundreds of
//! groups), a hit rate that drifts along the walk. So `v` is read from
//! consecutive groups' differences (half their mean square: von Neumann's
//! estimator), which such slow changes barely reach, where the groups'
//! variance takes them in whole. On the Zen 4 guest (an rdtscp chase,
//! groups of 32, 2026-11-28) the L2's edge at 960 KiB, a mixture, spread
//! 55-160 ns^2 a load between groups but 30-42 between neighbours: the
//! first more than any mix of the L2 (4.2 ns) and the L3 (16 ns) allows,
//! the second as a mix of the two would.

use serde::{Deserialize, Serialize};

use super::unresolved::Unresolved;
use super::{CurvePoint, Level};
use crate::units::HumanBytes;

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
    /// The variance of one load read from consecutive groups: half the
    /// mean square of their difference, times the loads in a group. What
    /// persists over many groups (a neighbour's burst, a drifting hit rate)
    /// does not reach it. Absent in sweeps written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_variance: Option<f64>,
}

impl LoadSpread {
    /// The spread of the groups in `ns_per_load` (ns per load, in the
    /// order they were timed), the slowest [`DISTURBED_SHARE`] set aside;
    /// `None` without groups or with one not finite. Of several timelines,
    /// the caller keeps the one of least [`LoadSpread::variance`] (another
    /// tenant only widens one).
    pub fn of(size_bytes: u64, loads_per_group: u32, ns_per_load: &[f64]) -> Option<Self> {
        if ns_per_load.is_empty() || ns_per_load.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut sorted = ns_per_load.to_vec();
        sorted.sort_by(f64::total_cmp);
        let set_aside = (sorted.len() as f64 * DISTURBED_SHARE) as usize;
        let slowest_kept = sorted[sorted.len() - 1 - set_aside.min(sorted.len() - 1)];
        // Ties with the slowest kept stay in: only as many are set aside as
        // lie beyond it.
        let kept = |x: f64| x <= slowest_kept;
        let groups: Vec<f64> = ns_per_load.iter().copied().filter(|&x| kept(x)).collect();
        let n = groups.len() as f64;
        let mean = groups.iter().sum::<f64>() / n;
        let variance = groups.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        let steps: Vec<f64> = ns_per_load
            .windows(2)
            .filter(|w| kept(w[0]) && kept(w[1]))
            .map(|w| (w[1] - w[0]).powi(2))
            .collect();
        let k = f64::from(loads_per_group);
        let steady =
            (!steps.is_empty()).then(|| steps.iter().sum::<f64>() / steps.len() as f64 / 2.0 * k);
        Some(LoadSpread {
            size_bytes,
            loads_per_group,
            groups: groups.len() as u64,
            mean_ns: mean,
            load_variance: variance * k,
            steady_variance: steady,
        })
    }

    /// One load's variance as the verdict reads it: the lesser of the two
    /// readings. Each holds the loads' own variance; slow changes add to the
    /// groups' variance, a burst's edges and a timer read shared by two
    /// groups to the steady one, and each reading has its sampling noise.
    pub fn variance(&self) -> f64 {
        self.steady_variance
            .map_or(self.load_variance, |s| s.min(self.load_variance))
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
    /// The stretch's loads when timed one by one, ns: their mean.
    pub timed_ns: f64,
    /// The level below's latency on the curve, ns.
    pub below_ns: f64,
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

    /// Whether the stretch's loads, timed again at its plateau's middle,
    /// took the level below's latency (within a level's step of it): the
    /// level below, slowed at times while the curve was read, not a level
    /// of its own. A level's loads at its plateau's middle are its own: the
    /// level below serves few of them there, and another tenant only slows
    /// a load. (The Zen 4 guest with a compiler on the other CPU: its 1 MiB
    /// L2 read 5.9 ns over 418-706 KiB, 1.51x its 3.9 ns, a level by the
    /// curve; timed one by one at 543 KiB its loads took 4.9 ns.)
    pub fn served_as_below(&self) -> bool {
        super::same_level(self.timed_ns, self.below_ns)
    }
}

/// The verdict on a stretch at `ns` (its plateau's latency) between levels
/// at `below_ns` and `above_ns`, from its loads' spread, the level below's
/// (`reference`: the timer's and the level's own spread, taken off) and,
/// where the level above is memory, memory's (`above`: DRAM serves its
/// loads spread, row hits and misses, a walk where the TLB does not reach),
/// all timed in groups of the same size; `None` where they were not, where
/// `ns` does not lie between its neighbours, or where the loads timed were
/// not faster than the level above.
///
/// A share `f` of the loads at the level above's `c`, spread by `w`, the
/// rest at one latency `x`: their mean is `m = x + f (c - x)` and their
/// variance `v = f w + f (1 - f) (c - x)^2`, so `u = m - x` solves
/// `d u^2 + (d^2 - v + w) u - v d = 0` with `d = c - m` (with `w = 0`,
/// `u = v / d`).
pub fn judge(
    stretch: &LoadSpread,
    reference: &LoadSpread,
    above: Option<&LoadSpread>,
    below_ns: f64,
    ns: f64,
    above_ns: f64,
) -> Option<SpreadVerdict> {
    let m = stretch.mean_ns;
    let k = stretch.loads_per_group;
    let usable = below_ns < ns
        && ns < above_ns
        && m < above_ns
        && reference.loads_per_group == k
        && above.is_none_or(|a| a.loads_per_group == k);
    usable.then(|| {
        let own = |s: &LoadSpread| (s.variance() - reference.variance()).max(0.0);
        let (v, w) = (own(stretch), above.map_or(0.0, own));
        let d = above_ns - m;
        let b = d * d - v + w;
        // The positive root, in the form that keeps its digits when v is
        // small against d^2.
        let u = 2.0 * v * d / (b + (b * b + 4.0 * d * d * v).sqrt()).max(f64::MIN_POSITIVE);
        let middle = (below_ns * ns).sqrt();
        SpreadVerdict {
            rest_ns: m - u,
            middle_ns: middle,
            floor_ns: below_ns * below_ns / middle,
            timed_ns: m,
            below_ns,
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
/// others whose loads, timed one by one, are not a level's, the clearest
/// first (taking one out changes its neighbours' test), noting each:
/// - one whose loads took the level below's latency
///   ([`SpreadVerdict::served_as_below`]), always: another tenant only
///   slows a load, so nothing fakes it;
/// - one whose loads spread as its neighbours' mixture does, while the
///   curve shows more caches than the `sysfs_count` data caches sysfs
///   lists (any number where it lists none). Within sysfs's count that test
///   is not read: another tenant's bursts slow a level's loads a group at a
///   time and can pass for a mixture (the catalogue's model, a tenth of the
///   groups bursting, each on its own, sets aside a true L3 on five rows of
///   sixteen), and a level sysfs lists is not set aside on that.
pub(super) fn drop_load_mixtures(
    points: &[CurvePoint],
    levels: &mut Vec<Level>,
    spreads: &[LoadSpread],
    sysfs_count: usize,
    notes: &mut Vec<String>,
    unresolved: &mut Vec<Unresolved>,
) {
    // The level below's latency before a mixture, each the clearest first.
    let rank = |v: &SpreadVerdict| {
        if v.served_as_below() {
            (0, v.timed_ns / v.below_ns)
        } else {
            (1, v.rest_ns / v.middle_ns)
        }
    };
    loop {
        let beyond_sysfs = sysfs_count == 0 || levels.len().saturating_sub(1) > sysfs_count;
        let clearest = (1..levels.len().saturating_sub(1))
            .filter_map(|k| {
                let stretch = spread_in(points, &levels[k], spreads)?;
                let reference = spread_in(points, &levels[k - 1], spreads)?;
                let (below, above) = (levels[k - 1].ns, levels[k + 1].ns);
                // Memory's loads spread on their own; a cache's spread at its
                // plateau's middle is mostly its own misses to the level above
                // it, which loads it serves at a smaller size do not make: its
                // hits count as one latency.
                let memory = k + 2 == levels.len();
                let next = spread_in(points, &levels[k + 1], spreads).filter(|_| memory);
                let verdict = judge(stretch, reference, next, below, levels[k].ns, above)?;
                let not_a_level =
                    verdict.served_as_below() || (beyond_sysfs && verdict.is_mixture());
                not_a_level.then_some((k, verdict, stretch.size_bytes))
            })
            .min_by(|x, y| {
                let (rx, ry) = (rank(&x.1), rank(&y.1));
                rx.0.cmp(&ry.0).then(rx.1.total_cmp(&ry.1))
            });
        let Some((k, verdict, size)) = clearest else {
            return;
        };
        let (below, above) = (levels[k - 1].ns, levels[k + 1].ns);
        let why = if verdict.served_as_below() {
            format!(
                "is the level below ({below:.1} ns), slowed at times while the curve was read, not a level: timed one by one at {}, its loads took {:.1} ns, within a level's step of it",
                HumanBytes(size),
                verdict.timed_ns
            )
        } else {
            format!(
                "is the mixture of its neighbours, not a level: timed one by one, the loads the level above ({above:.1} ns) does not serve there take {:.1} ns, the level below's ({below:.1} ns), not a latency of their own",
                verdict.rest_ns.max(0.0)
            )
        };
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
            steady_variance: None,
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
        let v = judge(&tail, &l2, None, 4.2, 9.3, 16.1).unwrap();
        assert!(v.is_mixture(), "{v:?}");
        // The L3 between the L2 and memory: a level.
        let v = judge(&l3, &l2, None, 4.2, 15.0, 166.0).unwrap();
        assert!(!v.is_mixture(), "{v:?}");
        // The L3 a neighbour eroded while its spread was timed (a sweep on
        // the Zen 4 guest, 3.8 MiB into a 5.6 MiB plateau at 15.9 ns:
        // groups of 32 at 17.9, 21.9, 26.4 ns): loads went to memory, and
        // the rest are still the L3's, a level.
        let eroded = spread(3977152, 32, 22.0, 1266.0);
        let l2 = spread(131456, 32, 3.85, 1.5);
        let v = judge(&eroded, &l2, None, 3.9, 15.9, 153.8).unwrap();
        assert!(
            !v.is_mixture() && (10.0..15.9).contains(&v.rest_ns),
            "{v:?}"
        );
        // The L3 beside a compiler on the other CPU (1.7 MiB into a plateau
        // at 13.6 ns): groups slowed together, more spread than memory and
        // the L3 could make at that mean. No verdict: it stays a level.
        let burst = spread(1781184, 32, 27.75, 4503.2 + 0.6);
        let l2_then = spread(123264, 32, 3.97, 0.6);
        let v = judge(&burst, &l2_then, None, 3.96, 13.6, 160.8).unwrap();
        assert!(!v.is_mixture() && v.overspread(), "{v:?}");
        // Groups of another size, or a stretch outside its neighbours: no verdict.
        assert!(judge(&spread(1 << 20, 8, 9.0, 31.0), &l2, None, 4.2, 9.3, 16.1).is_none());
        assert!(judge(&tail, &spread(1, 16, 4.38, 0.1), None, 4.2, 17.0, 16.1).is_none());
    }

    #[test]
    fn the_spread_of_the_groups_without_the_slowest() {
        // 100 groups of 4 loads: 98 at 10 or 12 ns a load, two interrupted.
        let mut ns: Vec<f64> = (0..98)
            .map(|i| if i % 2 == 0 { 10.0 } else { 12.0 })
            .collect();
        ns.extend([500.0, 900.0]);
        let s = LoadSpread::of(1 << 20, 4, &ns).unwrap();
        assert_eq!(s.groups, 98);
        assert!((s.mean_ns - 11.0).abs() < 1e-9, "{s:?}");
        // The groups' variance (1 ns^2) times 4 loads a group.
        assert!((s.load_variance - 4.0).abs() < 1e-9, "{s:?}");
        // Consecutive groups differ by 2 ns (97 pairs kept): half of 4 ns^2,
        // times 4.
        assert_eq!(s.steady_variance, Some(8.0));
        assert!(LoadSpread::of(1, 4, &[]).is_none());
        assert!(LoadSpread::of(1, 4, &[1.0, f64::NAN]).is_none());
        assert_eq!(LoadSpread::of(1, 4, &[3.0]).unwrap().steady_variance, None);
    }

    #[test]
    fn a_burst_over_many_groups_widens_the_groups_not_their_steps() {
        // 4096 groups of 32 loads at 13-17 ns a load (independent, from an
        // LCG); a neighbour slows a thousand in a row by 20 ns.
        let mut state = 12345u64;
        let ns: Vec<f64> = (0..4096)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let own = 13.0 + 4.0 * (state >> 11) as f64 / (1u64 << 53) as f64;
                own + if (1000..2000).contains(&i) { 20.0 } else { 0.0 }
            })
            .collect();
        let s = LoadSpread::of(3 << 20, 32, &ns).unwrap();
        let quiet = LoadSpread::of(3 << 20, 32, &ns[2000..]).unwrap();
        assert!(s.load_variance > 50.0 * quiet.load_variance, "{s:?}");
        // Only the burst's two edges reach the steps: 5% here.
        let (steady, quiet_steady) = (s.variance(), quiet.variance());
        assert!(
            (steady - quiet_steady).abs() < 0.1 * quiet_steady,
            "{s:?} {quiet:?}"
        );
    }

    #[test]
    fn the_loads_say_which_cache_beyond_sysfs_is_none_before_its_count_does() {
        // L1, L2, a pause at the L2's edge (four points), the real L3 (three
        // points, noisier), memory; sysfs lists three caches.
        let sizes_ns: [(u64, f64); 19] = [
            (8, 1.1),
            (12, 1.1),
            (16, 1.1),
            (24, 1.1),
            (64, 4.0),
            (96, 4.0),
            (128, 4.0),
            (192, 4.0),
            (700, 7.5),
            (760, 7.6),
            (820, 7.7),
            (880, 7.6),
            (1200, 13.0),
            (1500, 13.6),
            (2000, 14.1),
            (8000, 150.0),
            (10000, 151.0),
            (12000, 150.0),
            (16000, 152.0),
        ];
        let points: Vec<CurvePoint> = sizes_ns
            .iter()
            .map(|&(kib, ns)| CurvePoint {
                size_bytes: kib << 10,
                ns,
                ns_min: ns * 0.97,
                ns_max: ns * 1.03,
                cycles: 0.0,
            })
            .collect();
        let logs: Vec<f64> = points.iter().map(|p| p.ns.ln()).collect();
        let levels = [(0, 4), (4, 8), (8, 12), (12, 15), (15, 19)]
            .map(|(a, b)| Level::of(&points, a, b, true))
            .to_vec();
        // The pause's loads as the busy Zen 4 guest's were, at 792 KiB.
        let mut pause = spread(792 << 10, 32, 6.8, 43.7);
        pause.steady_variance = Some(15.8);
        let spreads = [spread(96 << 10, 32, 4.0, 1.0), pause];
        let s = super::super::evidence::select(&points, &logs, levels, 0.03, 3, &spreads);
        let ns: Vec<f64> = s.levels.iter().map(|l| l.ns).collect();
        assert_eq!(ns.len(), 4, "{:?}", s.notes);
        assert!((13.0..14.2).contains(&ns[2]), "{ns:?} {:?}", s.notes);
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("mixture of its neighbours")),
            "{:?}",
            s.notes
        );
    }
}
