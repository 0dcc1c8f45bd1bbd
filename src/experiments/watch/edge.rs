//! The shared level's edge, by the definition the sweep's capacity uses:
//! the size at which half the loads stop being served by the level. From
//! one interval's own readings. Pure: tested on made-up readings of each
//! replacement policy.
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
//! edge = where h falls through 1/2, between the last probe served at least
//!        half and the first served less (linear in log size between them)
//! ```
//!
//! with its bracket, those two probes; at least the largest probe when
//! every probe was served half or more, below the smallest when none was.
//! The sweep's capacity (`detect`) and its pooled bounds are the same
//! crossing, read from full cycles, so the settle pass can hold one against
//! the other. What the facts make of it, for a walk whose every line was
//! last used one cycle (`S` bytes of the chain) before:
//! - **LRU** (any stack policy): `h` is 1 up to the cliff at the capacity
//!   `C` and 0 past it: the edge lies between the probes either side of `C`.
//! - **Adaptive insertion** (thrash-resistant, as Intel's last levels): a
//!   cycle larger than the cache keeps a fixed part of about `C` resident:
//!   `h = C / S`, a half at `2 C`, where the sweep's capacity lies too.
//! - **Random replacement**: a line survives the `(1 - h) S / line` misses
//!   between its uses with probability `exp(-(1 - h) S / C)`, so `h` solves
//!   `h = exp(-(1 - h) S / C)`, a half at `2 ln 2 C` (1.39 C).
//!
//! `h S`, the bytes of a probe the level held, is kept beside it
//! (`served_bytes`): about `C` under adaptive or random replacement, even
//! below the smallest probe. Until 2026-11-27 the edge was the largest
//! `h S`: another quantity than the sweep's capacity (half of it under
//! adaptive insertion), so on the 16-vCPU Emerald Rapids guest a settle
//! pass that served 53% of a 7.3 MiB probe read "<7.3 MiB (3.9 MiB served)"
//! against the sweeps' 7.3..7.6 MiB.
//!
//! Before issue 36 the edge compared the probes with the sweep's plateau and
//! a threshold half-way to memory; a probe that read 44-66 ns against a 130
//! ns memory after being streamed in counted as served whole (`>=35.3 MiB`
//! on a guest whose full cycles read memory from 15 MiB).

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
    /// Where `h` falls through 1/2, bytes, to 64: interpolated between the
    /// probes of `bracket`; the largest probe when every probe was served
    /// half or more, the smallest when none was.
    pub half_bytes: u64,
    /// The largest `h S`, bytes, to 64: what the level held of a probe.
    pub served_bytes: u64,
    /// The probes around `half_bytes`: the last served at least half
    /// (`None`: none was, the edge lies below the smallest probe) and the
    /// first served less (`None`: every probe was, the edge may lie beyond).
    pub bracket: [Option<u64>; 2],
}

impl EdgeReading {
    /// The edge as `edge_bytes` records it: `half_bytes`, `None` below the
    /// smallest probe (`<` in the text: no probe was served half its loads).
    pub fn edge_bytes(&self) -> Option<u64> {
        self.bracket[0].map(|_| self.half_bytes)
    }
}

/// Where the hit fraction falls through 1/2 between a probe of `from`
/// bytes served `h_from` (at least half) and one of `to` bytes served
/// `h_to` (less), linear in log size.
fn half_between(from: u64, h_from: f64, to: u64, h_to: f64) -> f64 {
    let t = ((h_from - 0.5) / (h_from - h_to)).clamp(0.0, 1.0);
    let (a, b) = ((from as f64).ln(), (to as f64).ln());
    (a + t * (b - a)).exp()
}

/// Bytes to whole 64-byte lines.
fn to_lines(bytes: f64) -> u64 {
    ((bytes / 64.0).round() as u64) * 64
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

/// What a miss costs the edge probes, ns: the slowest probe walked short
/// of its cycles (`whole` false), where it reads at least
/// [`REFERENCE_GAP`] times the level and less than the memory probe;
/// else the memory probe's `memory_ns`. A short walk leaves the lines its
/// timed window meets as the last interval left them, after every other
/// probe went through the level since: they miss unless the level kept
/// them all that while, so the reading is a miss at the probes' own
/// footprint. The memory probe walks 256 MiB, and a miss there costs what
/// its footprint adds (page walks, DRAM rows): on the Zen 4 guest it read
/// 170-200 ns where a 16 MiB probe walked a tenth of a cycle read 130-155,
/// and 300-550 ns for ten seconds while that probe stayed at 130-155;
/// against it every missing probe looked a quarter served, and in those
/// seconds more than half ("L3 edge >=16.1 MiB", where full-cycle chases
/// read memory from 8 MiB).
pub fn miss_reference(ns: &[f64], whole: &[bool], level_ns: f64, memory_ns: f64) -> f64 {
    let cold = ns
        .iter()
        .zip(whole)
        .filter(|&(n, &whole)| !whole && n.is_finite())
        .map(|(&n, _)| n)
        .reduce(f64::max);
    match cold {
        Some(c) if c >= REFERENCE_GAP * level_ns && c < memory_ns => c,
        _ => memory_ns,
    }
}

/// The readings an interval's edge may use: each probe's `ns`, where
/// `whole` says its warm walk covered whole cycles of its chain, or where
/// the level served at least half its loads anyway; NaN (not read) where
/// a short warm walk missed: lines it never brought in miss whatever the
/// level could hold, so the miss says nothing about the level.
pub fn judged(ns: &[f64], whole: &[bool], level_ns: f64, memory_ns: f64) -> Vec<f64> {
    ns.iter()
        .zip(whole)
        .map(|(&n, &whole)| {
            let served = hit_fraction(n, level_ns, memory_ns).is_some_and(|h| h >= 0.5);
            if whole || served { n } else { f64::NAN }
        })
        .collect()
}

/// The edge from one interval's probes, each read after a warm walk that
/// was whole cycles or not (`whole`): the miss they cost
/// ([`miss_reference`]), the readings that may count ([`judged`]), and
/// where half the loads stop being served ([`edge_reading`]).
pub fn interval_edge(
    sizes: &[u64],
    ns: &[f64],
    whole: &[bool],
    level_ns: f64,
    memory_ns: f64,
) -> Option<EdgeReading> {
    let miss_ns = miss_reference(ns, whole, level_ns, memory_ns);
    edge_reading(
        sizes,
        &judged(ns, whole, level_ns, miss_ns),
        level_ns,
        miss_ns,
    )
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
    // so it cannot tell such a probe from one with no miss at all.
    let whole = |k: usize| {
        ns.get(k)
            .is_some_and(|&n| n <= level_ns * (1.0 + MIN_SHIFT))
    };
    // Each probe's h, a probe within MIN_SHIFT of the level served whole.
    let read: Vec<(u64, f64)> = sizes
        .iter()
        .zip(&hit)
        .enumerate()
        .filter_map(|(k, (&s, h))| Some((s, if whole(k) { 1.0 } else { (*h)? })))
        .collect();
    let served = read
        .iter()
        .map(|&(s, h)| (h * s as f64).min(s as f64))
        .reduce(f64::max)?;
    // The first probe served less than half, and the one before it.
    let first_under = read.iter().position(|&(_, h)| h < 0.5);
    let (half, bracket) = match first_under {
        None => {
            let (largest, _) = *read.last()?;
            (largest as f64, [Some(largest), None])
        }
        Some(0) => (read[0].0 as f64, [None, Some(read[0].0)]),
        Some(k) => {
            let ((from, h_from), (to, h_to)) = (read[k - 1], read[k]);
            (half_between(from, h_from, to, h_to), [Some(from), Some(to)])
        }
    };
    Some(EdgeReading {
        hit,
        half_bytes: to_lines(half),
        served_bytes: to_lines(served),
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
/// pooled bounds: it disagrees when the edge (where half the loads stop
/// being served) lies under `at_least / 1.1` or over `at_most x 1.1` (10%
/// either side: the probes' own noise). The probes span those bounds, so an
/// edge below the smallest probe is under `at_least`, and every probe
/// served half or more is over `at_most` (the sweep said none is from
/// there on).
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
    let half = r.half_bytes as f64;
    let below_probes = r.bracket[0].is_none();
    let under = at_least.is_some_and(|a| below_probes || half < a as f64 / tolerance);
    let beyond_probes = r.bracket[1].is_none();
    let over = at_most.is_some_and(|b| beyond_probes || half > b as f64 * tolerance);
    let agrees = (at_least.is_some() || at_most.is_some()).then_some(!(under || over));
    let edge = match (r.edge_bytes(), smallest) {
        (Some(_), _) if r.bracket[1].is_none() => format!(">={}", HumanBytes(r.half_bytes)),
        (Some(e), _) => HumanBytes(e).to_string(),
        (None, Some(s)) => format!(
            "<{} (no probe served half its loads; the level held {} of one)",
            HumanBytes(s),
            HumanBytes(r.served_bytes)
        ),
        (None, None) => HumanBytes(r.half_bytes).to_string(),
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

    /// Whether `got` bytes lie within `share` of `want` MiB.
    fn near(got: u64, want: f64, share: f64) -> bool {
        (mib(got) - want).abs() <= share * want
    }

    #[test]
    fn under_lru_the_edge_lies_between_the_probes_either_side_of_the_cliff() {
        let sizes = [4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB];
        // A 12 MiB cliff: 4 and 8 MiB hit, 16 and 32 miss (a few ns of noise).
        let r = edge_reading(&sizes, &[ns(1.0), 19.5, 128.0, ns(0.0)], L, M).unwrap();
        assert_eq!(r.bracket, [Some(8 * MIB), Some(16 * MIB)]);
        let edge = r.edge_bytes().unwrap();
        assert!((8 * MIB..16 * MIB).contains(&edge), "{edge}");
        assert_eq!(r.served_bytes, 8 * MIB);
        assert_eq!(r.hit[0], Some(1.0));
        assert!(r.hit[2].unwrap() < 0.05);
        // A ns above the level's reference is within the drift watch
        // cannot tell from none (MIN_SHIFT): the probe is served whole.
        let r = edge_reading(&sizes, &[ns(1.0), 21.0, 128.0, ns(0.0)], L, M).unwrap();
        assert_eq!(r.served_bytes, 8 * MIB);
        // Three ns above it (15%) are misses, 3 in 110: still served more
        // than half, so the edge stays past 8 MiB.
        let r = edge_reading(&sizes, &[ns(1.0), 23.0, 128.0, ns(0.0)], L, M).unwrap();
        assert_eq!(r.bracket, [Some(8 * MIB), Some(16 * MIB)]);
        // Every probe served: at least the largest.
        let all = edge_reading(&sizes, &[L; 4], L, M).unwrap();
        assert_eq!(
            (all.edge_bytes(), all.bracket),
            (Some(32 * MIB), [Some(32 * MIB), None])
        );
        // None served: below the smallest, whatever noise h S gives.
        let none = edge_reading(&sizes, &[125.0, M, M, M], L, M).unwrap();
        assert_eq!(none.bracket, [None, Some(4 * MIB)]);
        assert_eq!(none.edge_bytes(), None);
        assert!(none.served_bytes < 4 * MIB);
    }

    #[test]
    fn under_random_replacement_the_edge_is_where_half_the_loads_are_served() {
        let c = 12.5;
        let sizes = [8 * MIB, 14 * MIB, 20 * MIB, 35 * MIB];
        let readings: Vec<f64> = sizes.iter().map(|&s| ns(random_h(mib(s), c))).collect();
        let r = edge_reading(&sizes, &readings, L, M).unwrap();
        // h = 1/2 at 2 ln 2 C = 1.39 C = 17.3 MiB, between 14 and 20.
        assert_eq!(r.bracket, [Some(14 * MIB), Some(20 * MIB)]);
        let edge = r.edge_bytes().unwrap();
        assert!(near(edge, 2.0 * 2f64.ln() * c, 0.05), "{}", mib(edge));
        // What the level held: about C (14 MiB = 1.12 C holds 0.91 C).
        assert!((0.88 * c..=c).contains(&mib(r.served_bytes)));
        // The facts the doc states.
        assert!((random_h(1.5 * c, c) * 1.5 - 0.63).abs() < 0.01);
        assert!((random_h(2.0 * c, c) * 2.0 - 0.41).abs() < 0.01);
        assert!((random_h(2.0 * 2f64.ln() * c, c) - 0.5).abs() < 0.01);
    }

    #[test]
    fn under_adaptive_insertion_the_edge_is_twice_what_the_level_keeps() {
        // h = C / S for S > C, a half at 2 C: over the Intel guest's probes
        // (14.7-35.3 MiB) 25 MiB, between 20 and 26 MiB; the level held C.
        let c = 12.5;
        let sizes = [15413248, 20971520, 27262976, 37014016];
        let readings: Vec<f64> = sizes.iter().map(|&s| ns(c / mib(s))).collect();
        let r = edge_reading(&sizes, &readings, L, M).unwrap();
        assert_eq!(r.bracket, [Some(20971520), Some(27262976)]);
        let edge = r.edge_bytes().unwrap();
        assert!(near(edge, 2.0 * c, 0.05), "{}", mib(edge));
        assert!((mib(r.served_bytes) - c).abs() < 0.01, "{}", r.served_bytes);
    }

    #[test]
    fn a_neighbour_shrinking_the_share_shrinks_the_edge() {
        let sizes = [4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB];
        // Adaptive, 12 MiB alone (a half at 24), 6 MiB while a neighbour
        // streams (a half at 12; memory slower too: the references move
        // with it).
        let alone: Vec<f64> = sizes
            .iter()
            .map(|&s| ns((12.0 / mib(s)).min(1.0)))
            .collect();
        let r = edge_reading(&sizes, &alone, L, M).unwrap();
        assert!(near(r.edge_bytes().unwrap(), 24.0, 0.1));
        assert_eq!(r.bracket, [Some(16 * MIB), Some(32 * MIB)]);
        let m = 160.0;
        let shared: Vec<f64> = sizes
            .iter()
            .map(|&s| {
                let h = (6.0 / mib(s)).min(1.0);
                h * L + (1.0 - h) * m
            })
            .collect();
        let r = edge_reading(&sizes, &shared, L, m).unwrap();
        assert!(near(r.edge_bytes().unwrap(), 12.0, 0.1));
        assert_eq!(r.bracket, [Some(8 * MIB), Some(16 * MIB)]);
        // The level's own middle no longer served: no edge this interval.
        assert_eq!(edge_reading(&sizes, &shared, 120.0, m), None);
        // A probe with no reading is left out.
        let r = edge_reading(&sizes, &[L, f64::NAN, M, M], L, M).unwrap();
        assert_eq!(r.hit[1], None);
        assert_eq!(r.bracket, [Some(4 * MIB), Some(16 * MIB)]);
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
        // The 16-vCPU Emerald Rapids guest's settle pass: 53% of the
        // smallest probe (the sweeps' at-least, 7.3 MiB) served and little
        // of the next: the edge lies between them, within the bounds, where
        // the largest h S (3.9 MiB) read under them.
        let erp = [7_654_400, 7_733_248, 7_812_096, 7_969_177];
        let r = edge_reading(&erp, &[ns(0.53), ns(0.1), ns(0.05), ns(0.02)], L, M).unwrap();
        assert!(mib(r.served_bytes) < 4.0);
        let check = settle_check("L3", Some(&r), Some(erp[0]), Some(erp[0]), Some(erp[3]));
        assert_eq!(check.agrees, Some(true), "{}", check.note);
        // No bounds: nothing to check; no reading: said so.
        assert_eq!(
            settle_check("L3", Some(&all), None, None, None).agrees,
            None
        );
        assert_eq!(settle_check("L3", None, None, Some(1), None).agrees, None);
    }

    #[test]
    fn a_miss_costs_what_a_probe_walked_short_reads_where_it_misses() {
        let (level, memory) = (15.0, 180.0);
        // The slowest short probe (140) is the miss; the whole one is not.
        let ns = [16.0, 60.0, 120.0, 140.0];
        assert_eq!(
            miss_reference(&ns, &[true, true, false, false], level, memory),
            140.0
        );
        // A short probe the level still serves says nothing of a miss.
        assert_eq!(miss_reference(&ns[..1], &[false], level, memory), memory);
        // Whole walks only (the settle pass): the memory probe.
        assert_eq!(miss_reference(&ns, &[true; 4], level, memory), memory);
        // A short probe slower than memory: the memory probe.
        assert_eq!(miss_reference(&[200.0], &[false], level, memory), memory);
        // Against the footprint's own miss the 60 ns probe is served 2/3,
        // against the memory probe's 3/4: nearer a miss than it looked.
        let m = miss_reference(&ns, &[true, true, false, false], level, memory);
        let h = hit_fraction(60.0, level, m).unwrap();
        assert!((h - 80.0 / 125.0).abs() < 1e-9, "{h}");
    }

    #[test]
    fn a_probe_walked_short_of_its_cycles_counts_only_when_served() {
        let (level, memory) = (15.0, 150.0);
        // 2.6 MiB walked whole and served; 4.9 MiB walked whole and
        // missing; 9.1 MiB walked short and missing; 16.8 MiB walked short
        // and served more than half.
        let ns = [16.0, 120.0, 140.0, 60.0];
        let read = judged(&ns, &[true, true, false, false], level, memory);
        assert_eq!(read[..2], ns[..2]);
        assert!(read[2].is_nan());
        assert_eq!(read[3], 60.0);
        // The edge then lies between the two whole probes, not below the
        // short one's miss.
        let sizes = [2_683_328, 4_948_992, 9_127_808, 16_834_944];
        let r = edge_reading(&sizes, &read, level, memory).unwrap();
        assert_eq!(r.bracket, [Some(2_683_328), Some(4_948_992)]);
        assert!(r.hit[2].is_none());
        // Walked short and missing everywhere: no probe says where the
        // level stops, and no edge is read.
        let short = judged(&[140.0; 4], &[false; 4], level, memory);
        assert!(edge_reading(&sizes, &short, level, memory).is_none());
    }
}
