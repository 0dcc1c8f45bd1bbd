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
//! of the level and the miss probe, [`miss_reference`]); a timed window at `ns` per load has
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
/// a last level's hit, so the gap fails when the level's middle was not
/// served, unless a neighbour's traffic slowed the memory probe's walk more
/// than the middle's (a stream beside the Zen 4 guest: 1.5-2.4x): that case
/// is [`references`]'s. A gap from the interval's own spread of repeats
/// would be the measured rule, but no recorded watch tests one.
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
pub fn references_hold(level_ns: f64, memory_ns: f64) -> bool {
    level_ns.is_finite() && level_ns > 0.0 && memory_ns.is_finite() && {
        memory_ns >= level_ns * REFERENCE_GAP
    }
}

/// The level and memory latencies an interval's probes are read against,
/// from the interval's own (`now`) and the trusted pair (`trusted`, what a
/// hit of the level and a miss cost when its middle was served,
/// [`trusted_references`]):
/// - where the interval's middle was served less than half its loads by
///   the trusted pair, that pair. A level that does not serve its own
///   middle holds none of the probes, which are no smaller, and its reading
///   is a miss at a small footprint: against it and a memory probe that a
///   neighbour's traffic slowed more (256 MiB walked beside a core
///   streaming 64 MiB on the Zen 4 guest: middle 142-211 ns, memory 254-414)
///   every probe read as served, "L3 edge >=20.9 MiB", where full-cycle
///   chases read memory from 8 MiB;
/// - else the interval's memory, and for the level the lesser of the two
///   readings of a hit: a middle partly missed reads slower than a hit, and
///   against a middle at 108-131 ns (a build beside the watch) probes at
///   110-200 looked served as well as it was, ">=20.9 MiB" again. The lesser
///   follows a core whose clock sped up; one that slowed moves a served
///   probe's share by its slowing over memory's gap (3% at most there).
pub fn references(now: (f64, f64), trusted: Option<(f64, f64)>) -> (f64, f64) {
    let Some((level, memory)) = trusted else {
        return now;
    };
    match hit_fraction(now.0, level, memory) {
        Some(h) if h < 0.5 => (level, memory),
        Some(_) => (now.0.min(level), now.1),
        None => now,
    }
}

/// The pair [`references`] falls back on: the settle pass's readings of
/// the level's middle and of memory (`settle`), where they hold and the
/// sweep's plateaus (`swept`: the level's latency and memory's, when the
/// watch was planned) say that middle was served at least half its loads;
/// else the sweep's. A settle pass on a busy host can read the middle as a
/// miss too: beside a build on both CPUs of the Zen 4 guest it read 120 ns
/// and memory 216, a pair that holds by [`REFERENCE_GAP`], and against it
/// every interval's middle at 113-133 ns looked served ("L3 edge >=20.9
/// MiB" in 8 of 16 intervals), where the sweep had the L3 at 14 ns.
pub fn trusted_references(
    settle: Option<(f64, f64)>,
    swept: Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    let holds = |p: &(f64, f64)| references_hold(p.0, p.1);
    let (settle, swept) = (settle.filter(holds), swept.filter(holds));
    match (settle, swept) {
        (Some(s), Some((level, memory))) => {
            let served = hit_fraction(s.0, level, memory).is_some_and(|h| h >= 0.5);
            Some(if served { s } else { (level, memory) })
        }
        (settle, swept) => settle.or(swept),
    }
}

/// How far an edge probe's warm walk went before its timed runs, which
/// says what its reading can show ([`judged`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// Its whole cycles ([`super::WARM_CYCLES`] in an interval, one in the
    /// settle pass): a hit or a miss, the reading says what the level holds.
    Whole,
    /// At least one cycle, short of whole: every line its timed window
    /// meets was brought in by this walk one cycle before, but a level that
    /// inserts new lines at low priority may not have kept them yet (see
    /// [`super::WARM_CYCLES`]), so a miss says nothing of the level, and
    /// the reading is no miss either: the level may serve part of it.
    Partial,
    /// Less than one cycle: the lines its timed window meets were last
    /// used in an earlier interval, and every other probe has been through
    /// the level since; a level may still hold part of them, so its
    /// reading is no miss either (the miss is the miss probe's,
    /// [`miss_reference`]).
    Cold,
}

impl Walk {
    /// The walk of `loads` over a chain of `cycle` loads, where `whole`
    /// cycles make it whole.
    pub fn of(loads: u64, cycle: u64, whole: u64) -> Walk {
        if loads >= cycle.saturating_mul(whole) {
            Walk::Whole
        } else if loads >= cycle {
            Walk::Partial
        } else {
            Walk::Cold
        }
    }
}

/// What a miss costs the edge probes, ns: `miss_ns`, the miss probe's
/// reading (`WatchPlan::miss_probe`: lines last walked a whole cycle of
/// memory's size before, under a window that spans the probes'
/// footprint), where it reads at least [`REFERENCE_GAP`] times the level
/// and less than the memory probe; else the memory probe's `memory_ns`.
/// The memory probe walks 256 MiB, and a miss there costs what its
/// footprint adds (page walks, DRAM rows): on the Zen 4 guest it read
/// 170-200 ns where a 16 MiB probe walked a tenth of a cycle read 130-155,
/// and 300-550 ns for ten seconds while that probe stayed at 130-155;
/// against it every missing probe looked a quarter served, and in those
/// seconds more than half ("L3 edge >=16.1 MiB", where full-cycle chases
/// read memory from 8 MiB).
///
/// Until 2026-11-29 the miss was the slowest edge probe walked less than a
/// cycle this interval ([`Walk::Cold`]). Its lines were last walked an
/// interval or two before, and a level that kept part of them (random or
/// adaptive replacement: under random replacement a 96 MiB L3 can keep a
/// third of a 100 MiB probe's lines through the smaller probes' walks)
/// served part of its
/// window: in the catalogue's quiet watches (tests/machines) two such
/// intervals in a row read the edge 10-18% low, an event, on rows 6, 9 and
/// 12 (4 of 16,000 watches). The slowest of the recent cold readings did
/// not mend it (cold walks come a few intervals apart); only lines certain
/// to miss do.
pub fn miss_reference(miss_ns: f64, level_ns: f64, memory_ns: f64) -> f64 {
    if miss_ns >= REFERENCE_GAP * level_ns && miss_ns < memory_ns {
        miss_ns
    } else {
        memory_ns
    }
}

/// The readings an interval's edge may use: each probe's `ns`, where its
/// walk was [`Walk::Whole`], or where the level served at least half its
/// loads anyway; NaN (not read) where a shorter walk missed: lines it
/// never brought in, or brought in once at low priority, miss whatever
/// the level could hold, so the miss says nothing about the level.
pub fn judged(ns: &[f64], walks: &[Walk], level_ns: f64, memory_ns: f64) -> Vec<f64> {
    ns.iter()
        .zip(walks)
        .map(|(&n, &walk)| {
            let served = hit_fraction(n, level_ns, memory_ns).is_some_and(|h| h >= 0.5);
            if walk == Walk::Whole || served {
                n
            } else {
                f64::NAN
            }
        })
        .collect()
}

/// The edge from one interval's probes, each read after its warm walk
/// (`walks`), against the level's and memory's latencies (`references`)
/// and the miss probe's reading (`miss_ns`, NaN where there is none): the
/// miss they cost ([`miss_reference`]), the readings that may count
/// ([`judged`]), and where half the loads stop being served
/// ([`edge_reading`]).
pub fn interval_edge(
    sizes: &[u64],
    ns: &[f64],
    walks: &[Walk],
    (level_ns, memory_ns): (f64, f64),
    miss_ns: f64,
) -> Option<EdgeReading> {
    let miss_ns = miss_reference(miss_ns, level_ns, memory_ns);
    edge_reading(
        sizes,
        &judged(ns, walks, level_ns, miss_ns),
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
    /// What the settle pass read of each edge probe, ns, in the probes'
    /// order (empty in files from before 2026-11-29).
    #[serde(default)]
    pub probe_ns: Vec<f64>,
    /// The level's and memory's latencies, ns, the probes were read
    /// against; null when none held (or in older files).
    #[serde(default)]
    pub references_ns: Option<[f64; 2]>,
    /// What the miss probe read, ns (`WatchPlan::miss_probe`): the miss
    /// the probes were read against where it lay under memory's reading;
    /// null in files from before 2026-11-29.
    #[serde(default)]
    pub miss_ns: Option<f64>,
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
            probe_ns: Vec::new(),
            references_ns: None,
            miss_ns: None,
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
        probe_ns: Vec::new(),
        references_ns: None,
        miss_ns: None,
    }
}

#[cfg(test)]
#[path = "edge_tests.rs"]
mod tests;
