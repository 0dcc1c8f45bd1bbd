//! The shared level's edge as the bytes it serves, from one interval's own
//! readings. Pure: tested on made-up readings of each replacement policy.
//!
//! An edge probe of `S` bytes is a random cyclic chain, walked on from
//! where the last interval left it, after a warm walk of its own chain
//! (two whole cycles where the duty budget allows: see `Watch`). Each load either
//! finds its line in the level, at the level's latency `L`, or goes on to
//! memory at `M` (both read in the same interval, by the probe in the middle
//! of the level and the memory probe); a timed window at `ns` per load has
//! a share `h` of hits with `ns = h L + (1 - h) M`, so
//!
//! ```text
//! h = (M - ns) / (M - L), clamped to [0, 1]
//! served = min(S, h S)          (bytes of the probe the level holds, as the walk finds them)
//! edge = max over the probes of served
//! ```
//!
//! with its bracket: the largest probe at or below the edge and the
//! smallest above it. What the facts say `served` is, for a walk whose
//! every line was last used one cycle (`S` bytes of the chain) before:
//! - **LRU** (any stack policy): a line is evicted before its reuse when
//!   `S > C` and never when `S <= C`: `h` is 1 up to the cliff and 0 past
//!   it, so the edge is the largest probe at or below the cliff.
//! - **Adaptive insertion** (thrash-resistant, as Intel's last levels): a
//!   cycle larger than the cache keeps a fixed part of about `C` resident
//!   and misses the rest: `h = C / S`, `h S = C` for every `S > C`.
//! - **Random replacement**: a line survives the `(1 - h) S / line` misses
//!   between its uses with probability `exp(-(1 - h) S / C)`, so `h` solves
//!   `h = exp(-(1 - h) S / C)`: `h S` is `C` at `S = C` and falls past it
//!   (0.91 C at 1.1 C, 0.63 C at 1.5 C, 0.41 C at 2 C), and the largest is
//!   the capacity to within the probes' spacing.
//!
//! The old edge compared the probes with the sweep's plateau and a
//! threshold half-way to memory; a probe that read 44-66 ns against a 130 ns
//! memory after being streamed in counted as served whole (`>=35.3 MiB` on a
//! guest whose full cycles read memory from 15 MiB). Read as a share of
//! hits, the same probe says how much of it the level holds.

use serde::{Deserialize, Serialize};

use crate::analysis::changepoint::MIN_SHIFT;
use crate::units::HumanBytes;

/// Memory must read at least this many times the level's reference for
/// an interval's hit fractions to mean anything: nearer, the level did not
/// serve even its own middle (a neighbour took the share), and `M - L`
/// divides noise. A choice, a rule to rethink: a reading off by a share
/// `e` of the level's latency moves `h` by `e / (gap - 1)`, so at 1.5 a
/// drift of [`MIN_SHIFT`] (10%) moves `h` by 0.2, the most an edge read
/// to a probe's spacing can bear. On every machine seen memory reads 3-10x
/// a last level's hit, so the gap only fails when the level's middle was
/// not served; a gap from the interval's own spread of repeats would be
/// the measured rule, but no recorded watch tests one.
pub const REFERENCE_GAP: f64 = 1.5;

/// One interval's edge (see the module).
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeReading {
    /// Each probe's hit fraction `h`, in the probes' order; `None` for a
    /// probe with no reading.
    pub hit: Vec<Option<f64>>,
    /// The largest `h S`, bytes, to 64.
    pub served_bytes: u64,
    /// The probes' sizes around it: the largest at or below it (`None`:
    /// below the smallest probe) and the smallest above it (`None`: the
    /// largest probe was served whole, the edge may lie beyond).
    pub bracket: [Option<u64>; 2],
}

impl EdgeReading {
    /// The edge as `edge_bytes` has always recorded it: the served bytes,
    /// `None` below the smallest probe (`<` in the text: under LRU a probe
    /// past the cliff reads `h` = 0 give or take noise, and `h S` of it
    /// says nothing).
    pub fn edge_bytes(&self) -> Option<u64> {
        self.bracket[0].map(|_| self.served_bytes)
    }
}

/// The hit fraction of a window at `ns` between the level's `level_ns`
/// and memory's `memory_ns`, clamped to [0, 1] (see the module).
pub fn hit_fraction(ns: f64, level_ns: f64, memory_ns: f64) -> Option<f64> {
    (ns.is_finite() && ns > 0.0 && references_hold(level_ns, memory_ns))
        .then(|| ((memory_ns - ns) / (memory_ns - level_ns)).clamp(0.0, 1.0))
}

/// Whether an interval's references can place a reading between them.
fn references_hold(level_ns: f64, memory_ns: f64) -> bool {
    level_ns.is_finite() && level_ns > 0.0 && memory_ns.is_finite() && {
        memory_ns >= level_ns * REFERENCE_GAP
    }
}

/// The edge from one interval's readings: `sizes` ascending, `ns` each
/// one's latency, `level_ns` and `memory_ns` the same interval's readings
/// of the level's middle and of memory. `None` when the references do not
/// hold (memory within [`REFERENCE_GAP`] of the level) or no probe read.
pub fn edge_reading(
    sizes: &[u64],
    ns: &[f64],
    level_ns: f64,
    memory_ns: f64,
) -> Option<EdgeReading> {
    if !references_hold(level_ns, memory_ns) {
        return None;
    }
    let hit: Vec<Option<f64>> = sizes
        .iter()
        .enumerate()
        .map(|(k, _)| hit_fraction(ns.get(k).copied()?, level_ns, memory_ns))
        .collect();
    // A probe that reads within MIN_SHIFT of the level's own reading is
    // served whole: that drift is the least change watch calls an event,
    // so it cannot tell such a probe from one with no miss at all (without
    // this the largest probe, served whole, read as an edge just below it).
    let whole = |k: usize| {
        ns.get(k)
            .is_some_and(|&n| n <= level_ns * (1.0 + MIN_SHIFT))
    };
    let served = sizes
        .iter()
        .zip(&hit)
        .enumerate()
        .filter_map(|(k, (&s, h))| {
            let h = if whole(k) { Some(1.0) } else { *h };
            h.map(|h| (h * s as f64).min(s as f64))
        })
        .fold(None, |best: Option<f64>, v| {
            Some(best.map_or(v, |b| b.max(v)))
        })?;
    let served_bytes = ((served / 64.0).round() as u64) * 64;
    // A probe served whole gives its own size exactly: the rounding above
    // keeps it (sizes are whole lines).
    let bracket = [
        sizes.iter().rev().find(|&&s| s <= served_bytes).copied(),
        sizes.iter().find(|&&s| s > served_bytes).copied(),
    ];
    Some(EdgeReading {
        hit,
        served_bytes,
        bracket,
    })
}

/// What the settle pass found the edge to be, against the bounds of the
/// sweep the watch was planned from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettleEdge {
    /// The edge the settle pass read (every probe walked a whole cycle
    /// before its timed runs), as `edge_bytes`: null below the smallest probe.
    pub edge_bytes: Option<u64>,
    /// Its largest `h S`, even below the smallest probe; null when the
    /// references did not hold.
    pub served_bytes: Option<u64>,
    /// The probes' sizes around it.
    pub bracket_bytes: [Option<u64>; 2],
    /// The level's pooled `capacity_bounds` from the sweep(s): what every
    /// repeat read it serves, and from where on none did.
    pub at_least_bytes: Option<u64>,
    /// See `at_least_bytes`.
    pub at_most_bytes: Option<u64>,
    /// Whether the edge lies within them (10% either side allowed); null
    /// when there was no reading or no bound to check.
    pub agrees: Option<bool>,
    /// One line saying so.
    pub note: String,
}

/// The settle pass's `reading` of `level`'s edge against the sweep's
/// pooled bounds: it disagrees when the level served less than
/// `at_least / 1.1`, or at least `at_most / 1.1` (the sweep said nothing
/// is served from `at_most` on). The probes span those bounds, so a
/// reading below the smallest probe is under `at_least`, and the largest
/// probe served whole is over `at_most`.
pub fn settle_check(
    level: &str,
    reading: Option<&EdgeReading>,
    smallest: Option<u64>,
    at_least: Option<u64>,
    at_most: Option<u64>,
) -> SettleEdge {
    let tolerance = 1.0 + MIN_SHIFT;
    let bounds = match (at_least, at_most) {
        (Some(a), Some(b)) => format!("at least {}, at most {}", HumanBytes(a), HumanBytes(b)),
        (Some(a), None) => format!("at least {}", HumanBytes(a)),
        (None, Some(b)) => format!("at most {}", HumanBytes(b)),
        (None, None) => "none recorded".into(),
    };
    let Some(r) = reading else {
        return SettleEdge {
            edge_bytes: None,
            served_bytes: None,
            bracket_bytes: [None, None],
            at_least_bytes: at_least,
            at_most_bytes: at_most,
            agrees: None,
            note: format!(
                "settle pass: no {level} edge (memory read within {REFERENCE_GAP}x of the level's middle); the sweep's pooled bounds: {bounds}"
            ),
        };
    };
    let served = r.served_bytes as f64;
    let under = at_least.is_some_and(|a| served < a as f64 / tolerance);
    let over = at_most.is_some_and(|b| served >= b as f64 / tolerance);
    let agrees = (at_least.is_some() || at_most.is_some()).then_some(!(under || over));
    let edge = match (r.edge_bytes(), smallest) {
        (Some(_), _) if r.bracket[1].is_none() => format!(">={}", HumanBytes(r.served_bytes)),
        (Some(e), _) => HumanBytes(e).to_string(),
        (None, Some(s)) => format!(
            "<{} ({} served by the probes)",
            HumanBytes(s),
            HumanBytes(r.served_bytes)
        ),
        (None, None) => HumanBytes(r.served_bytes).to_string(),
    };
    let verdict = match (agrees, under) {
        (None, _) => "no pooled bounds to check it against".to_string(),
        (Some(true), _) => format!("within the sweep's pooled bounds ({bounds})"),
        (Some(false), true) => format!(
            "under the sweep's pooled bounds ({bounds}): the level serves less than the sweep planned for"
        ),
        (Some(false), false) => format!(
            "over the sweep's pooled bounds ({bounds}): the level serves more than the sweep planned for"
        ),
    };
    SettleEdge {
        edge_bytes: r.edge_bytes(),
        served_bytes: Some(r.served_bytes),
        bracket_bytes: r.bracket,
        at_least_bytes: at_least,
        at_most_bytes: at_most,
        agrees,
        note: format!("settle pass: {level} edge {edge}, {verdict}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;
    /// L3 and memory, as a guest's watch reads them.
    const L: f64 = 20.0;
    const M: f64 = 130.0;

    /// The latency a window reads with a share `h` of hits.
    fn ns(h: f64) -> f64 {
        h * L + (1.0 - h) * M
    }

    /// `h` of a full-cycle walk of `s` under random replacement of `c`.
    fn random_h(s: f64, c: f64) -> f64 {
        if s <= c {
            return 1.0;
        }
        // h = exp(-(1 - h) s / c): the root below 1, by fixed-point
        // iteration from 0 (it converges there, not to h = 1).
        (0..2000).fold(0.0, |h, _| (-(1.0 - h) * s / c).exp())
    }

    fn mib(b: u64) -> f64 {
        b as f64 / MIB as f64
    }

    #[test]
    fn under_lru_the_edge_is_the_largest_probe_below_the_cliff() {
        let sizes = [4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB];
        // A 12 MiB cliff: 4 and 8 MiB hit, 16 and 32 miss (a few ns of noise).
        let r = edge_reading(&sizes, &[ns(1.0), 19.5, 128.0, ns(0.0)], L, M).unwrap();
        assert_eq!(r.served_bytes, 8 * MIB);
        assert_eq!(r.bracket, [Some(8 * MIB), Some(16 * MIB)]);
        assert_eq!(r.edge_bytes(), Some(8 * MIB));
        assert_eq!(r.hit[0], Some(1.0));
        assert!(r.hit[2].unwrap() < 0.05);
        // A ns above the level's reference is within the drift watch
        // cannot tell from none (MIN_SHIFT): the probe is served whole.
        let r = edge_reading(&sizes, &[ns(1.0), 21.0, 128.0, ns(0.0)], L, M).unwrap();
        assert_eq!(r.served_bytes, 8 * MIB);
        // Three ns above it (15%) are read as misses, 3 in 110: the edge
        // just under 8 MiB, between the probes either side.
        let r = edge_reading(&sizes, &[ns(1.0), 23.0, 128.0, ns(0.0)], L, M).unwrap();
        assert_eq!(r.served_bytes, 8 * MIB * 107 / 110 / 64 * 64);
        assert_eq!(r.bracket, [Some(4 * MIB), Some(8 * MIB)]);
        // Every probe served: at least the largest.
        let all = edge_reading(&sizes, &[L; 4], L, M).unwrap();
        assert_eq!(
            (all.served_bytes, all.bracket),
            (32 * MIB, [Some(32 * MIB), None])
        );
        // None served: below the smallest, whatever noise h S gives.
        let none = edge_reading(&sizes, &[125.0, M, M, M], L, M).unwrap();
        assert_eq!(none.bracket[0], None);
        assert_eq!(none.edge_bytes(), None);
        assert!(none.served_bytes < 4 * MIB);
    }

    #[test]
    fn under_random_replacement_the_edge_is_the_capacity_within_the_probes_spacing() {
        let c = 12.5;
        let sizes = [8 * MIB, 14 * MIB, 20 * MIB, 35 * MIB];
        let readings: Vec<f64> = sizes.iter().map(|&s| ns(random_h(mib(s), c))).collect();
        let r = edge_reading(&sizes, &readings, L, M).unwrap();
        // 14 MiB = 1.12 C serves about 0.91 C, more than 8 MiB whole.
        let edge = mib(r.served_bytes);
        assert!((0.88 * c..=c).contains(&edge), "{edge}");
        assert_eq!(r.bracket, [Some(8 * MIB), Some(14 * MIB)]);
        // The facts the doc states.
        assert!((random_h(1.5 * c, c) * 1.5 - 0.63).abs() < 0.01);
        assert!((random_h(2.0 * c, c) * 2.0 - 0.41).abs() < 0.01);
    }

    #[test]
    fn under_adaptive_insertion_every_probe_past_the_capacity_gives_it() {
        // h = C / S for S > C: every probe of the Intel guest's range
        // (14.7-35.3 MiB) says 12.5 MiB, below the smallest.
        let c = 12.5;
        let sizes = [15413248, 20971520, 27262976, 37014016];
        let readings: Vec<f64> = sizes.iter().map(|&s| ns(c / mib(s))).collect();
        let r = edge_reading(&sizes, &readings, L, M).unwrap();
        assert!((mib(r.served_bytes) - c).abs() < 0.01, "{}", r.served_bytes);
        assert_eq!(r.edge_bytes(), None, "below the smallest probe");
        assert_eq!(r.bracket, [None, Some(15413248)]);
    }

    #[test]
    fn a_neighbour_shrinking_the_share_shrinks_the_edge() {
        let sizes = [4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB];
        // Adaptive, 12 MiB alone, 6 MiB while a neighbour streams (memory
        // slower too: the references move with it).
        let alone: Vec<f64> = sizes
            .iter()
            .map(|&s| ns((12.0 / mib(s)).min(1.0)))
            .collect();
        let r = edge_reading(&sizes, &alone, L, M).unwrap();
        assert!((mib(r.served_bytes) - 12.0).abs() < 0.01);
        assert_eq!(r.bracket, [Some(8 * MIB), Some(16 * MIB)]);
        let m = 160.0;
        let shared: Vec<f64> = sizes
            .iter()
            .map(|&s| {
                let h = (6.0 / mib(s)).min(1.0);
                h * L + (1.0 - h) * m
            })
            .collect();
        let r = edge_reading(&sizes, &shared, L, m).unwrap();
        assert!((mib(r.served_bytes) - 6.0).abs() < 0.01);
        assert_eq!(r.bracket, [Some(4 * MIB), Some(8 * MIB)]);
        // The level's own middle no longer served: no edge this interval.
        assert_eq!(edge_reading(&sizes, &shared, 120.0, m), None);
        // A probe with no reading is left out.
        let r = edge_reading(&sizes, &[L, f64::NAN, M, M], L, M).unwrap();
        assert_eq!(r.hit[1], None);
        assert_eq!(r.served_bytes, 4 * MIB);
        assert_eq!(edge_reading(&sizes, &[f64::NAN; 4], L, M), None);
    }

    #[test]
    fn the_settle_pass_says_when_the_edge_is_outside_the_sweeps_bounds() {
        let sizes = [15413248, 20971520, 27262976, 37014016];
        let lru = edge_reading(&sizes, &[128.0, M, M, 131.0], L, M).unwrap();
        let check = settle_check(
            "L3",
            Some(&lru),
            Some(sizes[0]),
            Some(sizes[0]),
            Some(sizes[3]),
        );
        assert_eq!(check.agrees, Some(false));
        assert!(check.note.contains("<14.7 MiB"), "{}", check.note);
        assert!(
            check.note.contains("under the sweep's pooled bounds"),
            "{}",
            check.note
        );
        let inside = edge_reading(&sizes, &[L, ns(0.9), M, M], L, M).unwrap();
        let check = settle_check(
            "L3",
            Some(&inside),
            Some(sizes[0]),
            Some(sizes[0]),
            Some(sizes[3]),
        );
        assert_eq!(check.agrees, Some(true), "{}", check.note);
        // The largest probe served whole: the sweep said none is from there on.
        let all = edge_reading(&sizes, &[L; 4], L, M).unwrap();
        let check = settle_check(
            "L3",
            Some(&all),
            Some(sizes[0]),
            Some(sizes[0]),
            Some(sizes[3]),
        );
        assert_eq!(check.agrees, Some(false));
        assert!(check.note.contains(">=35.3 MiB"), "{}", check.note);
        assert!(check.note.contains("over the sweep's"), "{}", check.note);
        // No bounds: nothing to check; no reading: said so.
        assert_eq!(
            settle_check("L3", Some(&all), None, None, None).agrees,
            None
        );
        assert_eq!(settle_check("L3", None, None, Some(1), None).agrees, None);
    }
}
