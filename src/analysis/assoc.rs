//! Conflict misses and associativity (seed 004 section 5), as pure planning
//! and estimation; `commands::assoc` measures.
//!
//! N lines a power-of-two multiple of a level's way size apart (a stride chain
//! of N·D bytes with stride D) all fall in one set of that level. While N is at
//! most the level's ways they stay cached; one more and, with LRU-like
//! replacement, a cyclic walk misses on every load, although only N·64 bytes
//! are used: seed 004's 4096 x 11 (hits) against 4096 x 13 (misses) on a
//! 12-way 48 KiB L1.
//!
//! The stride D is the claimed way size (capacity / ways) when that is a power
//! of two, else the largest power of two not above the capacity: either is a
//! multiple of the way size whenever the set count is a power of two. The
//! lines then also share a set in every smaller level, so for N above those
//! levels' ways the loads are served by this level or beyond; the reading
//! therefore compares each N's latency with this level's and the next one's,
//! both measured separately with random chains, and takes the first rise
//! past a quarter of the way between them that lasts ([`estimate_ways`]).
//! Each N is measured by [`CHAINS`] chains, each in its own set away from
//! the page-aligned start of the stride, and their median read.

use serde::{Deserialize, Serialize};

use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;

/// Lines tried at most per level when its ways are not claimed.
pub const DEFAULT_MAX_LINES: u64 = 40;

/// A level can be tested only if the next level is at least this much slower.
pub const MIN_CONTRAST: f64 = 1.5;

/// What to measure for one level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelPlan {
    /// `L1`, `L2`...
    pub name: String,
    /// Claimed capacity, bytes.
    pub size_bytes: u64,
    /// Claimed ways, if any.
    pub claimed_ways: Option<u64>,
    /// Distance between the lines, bytes (a power of two).
    pub stride: u64,
    /// Numbers of lines to try, ascending.
    pub lines: Vec<u64>,
    /// Random-chain size whose latency is this level's.
    pub hit_size: u64,
    /// Random-chain size whose latency is the next level's (or memory's).
    pub miss_size: u64,
    /// Why this level cannot be measured here ([`why_untestable`]); it is
    /// then reported, not measured.
    pub skip: Option<String>,
}

/// Largest power of two not above `x` (x > 0).
pub fn pow2_floor(x: u64) -> u64 {
    1u64 << (63 - x.leading_zeros())
}

/// The stride for a level: its way size when that is a power of two of at
/// least a line, else the largest power of two within its capacity.
pub fn stride_for(cache: &CacheInfo, line: u64) -> u64 {
    match cache.ways {
        Some(w) if w > 0 && cache.size_bytes.is_multiple_of(w) => {
            let way = cache.size_bytes / w;
            if way.is_power_of_two() && way >= line {
                way
            } else {
                pow2_floor(cache.size_bytes)
            }
        }
        _ => pow2_floor(cache.size_bytes),
    }
}

/// Why a level's ways cannot be measured by conflict misses with pages of
/// `page` bytes: a claimed way size that is not a power of two (its sets
/// are then no power of two either: a sliced cache whose slice and set a
/// hash of the address picks, as Intel's L3s, where no stride shares a
/// set), or a stride beyond the page (lines one stride apart lie in pages
/// the system places anywhere in physical memory, so they share a set only
/// by chance). `None`: it can be tried.
pub fn why_untestable(cache: &CacheInfo, line: u64, page: u64) -> Option<String> {
    if let Some(w) = cache.ways.filter(|&w| w > 0) {
        let way = cache.size_bytes / w;
        if !cache.size_bytes.is_multiple_of(w) || !way.is_power_of_two() {
            return Some(format!(
                "its {} in {w} ways make {} a way, not a power of two: its sets are chosen by a hash of the address (a sliced cache), so no stride puts lines in one set and its ways cannot be measured by conflict misses",
                HumanBytes(cache.size_bytes),
                HumanBytes(way)
            ));
        }
    }
    let stride = stride_for(cache, line);
    (stride > page).then(|| {
        format!(
            "lines one way ({}) apart lie in different {} pages, which the system places anywhere in physical memory, so they share a set only by chance; its ways cannot be measured with these pages (--pages 2m or 1g, where the pool has them, may reach)",
            HumanBytes(stride),
            HumanBytes(page)
        )
    })
}

/// Plans every level of `caches` for a buffer of `page`-byte pages.
/// `middles` holds, per cache, the middle of its measured plateau (where
/// its latency is its own on this machine; `None` when not measured, and
/// then a size from the claimed capacities stands in): the reference
/// sizes come from them, memory's (`memory_size`) beyond the last level;
/// `max_lines` overrides the line count. A level that cannot be tested
/// ([`why_untestable`]) says why in `skip` and is not measured.
pub fn plan(
    caches: &[CacheInfo],
    line: u64,
    page: u64,
    middles: &[Option<u64>],
    memory_size: u64,
    max_lines: Option<u64>,
) -> Vec<LevelPlan> {
    let middle = |k: usize| middles.get(k).copied().flatten();
    caches
        .iter()
        .enumerate()
        .map(|(k, cache)| {
            let top = max_lines
                .or(cache.ways.map(|w| 2 * w + 2))
                .unwrap_or(DEFAULT_MAX_LINES)
                .clamp(2, 128);
            // Just beyond the level below (at most half this level): mostly
            // this level's hits, with the least help from the levels below.
            let hit_size = middle(k).unwrap_or(match k {
                0 => cache.size_bytes / 2,
                _ => (2 * caches[k - 1].size_bytes).min(cache.size_bytes / 2),
            });
            // Just beyond this level, within the next one when it allows.
            let miss_size = match caches.get(k + 1) {
                None => memory_size,
                Some(next) => middle(k + 1).unwrap_or_else(|| {
                    let twice = 2 * cache.size_bytes;
                    if next.size_bytes / 2 > cache.size_bytes {
                        twice.min(next.size_bytes / 2)
                    } else {
                        twice
                    }
                }),
            };
            LevelPlan {
                name: format!("L{}", cache.level),
                size_bytes: cache.size_bytes,
                claimed_ways: cache.ways,
                stride: stride_for(cache, line),
                lines: (1..=top).collect(),
                hit_size: hit_size.max(line) / line * line,
                miss_size: miss_size.max(line) / line * line,
                skip: why_untestable(cache, line, page),
            }
        })
        .collect()
}

impl LevelPlan {
    /// The largest buffer this level maps (its fullest set, or its miss
    /// reference), bytes; nothing when skipped.
    pub fn largest_buffer(&self) -> u64 {
        if self.skip.is_some() {
            return 0;
        }
        let top = self.lines.last().copied().unwrap_or(0);
        (top * self.stride).max(self.miss_size).max(self.hit_size)
    }

    /// Points this level measures: each line count in each chain, and its
    /// two references.
    pub fn points(&self) -> u64 {
        if self.skip.is_some() {
            return 0;
        }
        self.lines.len() as u64 * u64::from(CHAINS) + 2
    }
}

/// One measured line count: N lines, the latency of each independent chain
/// (each in its own set) and their median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssocPoint {
    /// Lines in the set.
    pub lines: u64,
    /// Median over the chains, ns per load.
    pub ns: f64,
    /// Each chain's median latency, ns per load.
    #[serde(default)]
    pub ns_by_chain: Vec<f64>,
}

impl AssocPoint {
    /// A count measured by `chains` (each chain's ns per load).
    pub fn of(lines: u64, chains: Vec<f64>) -> AssocPoint {
        AssocPoint {
            lines,
            ns: crate::analysis::stats::median(&chains),
            ns_by_chain: chains,
        }
    }
}

/// Independent chains per line count, each in its own set: the median
/// outvotes a set that something else also uses.
pub const CHAINS: u32 = 3;

/// The byte offset within the stride of chain `index`'s set: away from the
/// start of the stride (where page-aligned data of every kind sits) and
/// different for every chain.
pub fn set_offset(stride: u64, line: u64, index: u32) -> u64 {
    let slots = stride / line.max(1);
    if slots < 2 {
        return 0;
    }
    let slot = (slots * (3 + 2 * u64::from(index)) / 8 + u64::from(index)) % slots;
    slot.max(1) * line
}

/// The ways estimated from one level's points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaysEstimate {
    /// Estimated ways; `None` when the data do not show a step.
    pub ways: Option<u64>,
    /// The rise threshold at one line more than the ways read (at the
    /// largest count when none), ns; every count has its own
    /// ([`rise_threshold`]).
    pub threshold_ns: f64,
    /// Why no estimate, or what to keep in mind.
    pub notes: Vec<String>,
}

/// The latency at which `lines` lines in one set count as risen: half way
/// from a hit to the least any replacement policy must miss there. N lines
/// cycling through a set of W < N ways leave at least N - W of them absent
/// each pass, so at least 1/N of the loads miss whatever the policy (LRU
/// misses them all; random replacement about 2/(W + 1) at W + 1 lines;
/// scan-resistant policies keep W - 1 lines and miss just over 1/N). A count
/// is risen when its latency stands nearer that least-missing latency,
/// hit + (miss - hit) / N, than a hit: no fraction fitted to a policy.
pub fn rise_threshold(lines: u64, hit_ns: f64, miss_ns: f64) -> f64 {
    hit_ns + (miss_ns - hit_ns) / (2.0 * lines.max(1) as f64)
}

/// A count whose latency has gone this fraction of the way is already
/// touched by misses.
pub const TOUCHED_FRACTION: f64 = 0.1;

/// Ways = the largest N before the latency rises and stays risen: the first
/// count from which every later one is risen, but for lone dips (one count
/// between risen ones, noise: reported), and the next one risen too.
pub fn estimate_ways(points: &[AssocPoint], hit_ns: f64, miss_ns: f64) -> WaysEstimate {
    let mut notes = Vec::new();
    let largest = points.iter().map(|p| p.lines).max().unwrap_or(1);
    let threshold = rise_threshold(largest, hit_ns, miss_ns);
    if !(hit_ns > 0.0 && miss_ns / hit_ns >= MIN_CONTRAST) {
        notes.push(format!(
            "this level ({hit_ns:.1} ns) and the next ({miss_ns:.1} ns) cannot be told apart here, so its ways cannot be measured"
        ));
        return WaysEstimate {
            ways: None,
            threshold_ns: threshold,
            notes,
        };
    }
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.lines);
    let risen: Vec<bool> = sorted
        .iter()
        .map(|p| p.ns >= rise_threshold(p.lines, hit_ns, miss_ns))
        .collect();
    let step = first_sustained_rise(&risen);
    let ways = match step {
        Some(0) => {
            notes.push(format!(
                "even {} line(s) missed: the stride may not map to one set, or the level is not there",
                sorted[0].lines
            ));
            None
        }
        Some(i) => Some(sorted[i - 1].lines),
        None => {
            notes.push(format!(
                "no sustained rise up to {} lines: the level has more ways than tried (raise --max-lines) or does not map these lines to one set (hashed or sliced)",
                sorted.last().map_or(0, |p| p.lines)
            ));
            None
        }
    };
    // Past W ways, N lines miss at least (N - W) / N of their loads under
    // any policy: a step that stays below half of that further out is a
    // smaller level's ways filling (lines served by this level, not missing
    // it). One lone count below is noise.
    let ways = ways.filter(|&w| {
        let short: Vec<u64> = sorted
            .iter()
            .filter(|p| p.lines > w)
            .filter(|p| {
                let least = (p.lines - w) as f64 / p.lines as f64;
                p.ns < hit_ns + (miss_ns - hit_ns) * least / 2.0
            })
            .map(|p| p.lines)
            .collect();
        let last = sorted.last().map_or(0, |p| p.lines);
        let keeps = short.len() <= 1 && !short.contains(&last);
        if !keeps {
            notes.push(format!(
                "the rise after {w} lines stays below what any replacement must miss with more lines in the set (at {} of them): not this level's ways",
                short.len()
            ));
        }
        keeps
    });
    if ways.is_none()
        && let Some((n, lo, hi)) = largest_step(&sorted)
        && hi < (hit_ns + miss_ns) / 2.0
    {
        notes.push(format!(
            "the only step is from {n} to {} lines ({lo:.2} -> {hi:.2} ns), up to this level's latency: that is a smaller level's ways filling, not this level's",
            n + 1
        ));
    }
    let threshold = ways.map_or(threshold, |w| rise_threshold(w + 1, hit_ns, miss_ns));
    if let (Some(w), Some(i)) = (ways, step) {
        notes.extend(reading_notes(&sorted, i, w, hit_ns, miss_ns));
    }
    WaysEstimate {
        ways,
        threshold_ns: threshold,
        notes,
    }
}

/// The index from which the counts are risen for good: it and the next one
/// (if any) risen, and after it no two counts in a row below.
fn first_sustained_rise(risen: &[bool]) -> Option<usize> {
    (0..risen.len()).find(|&i| {
        risen[i]
            && risen.get(i + 1).is_none_or(|&r| r)
            && !risen[i..].windows(2).any(|w| !w[0] && !w[1])
    })
}

/// What the points around the step say about the answer: dips after the
/// rise, and a count at the answer already touched by misses.
fn reading_notes(
    sorted: &[AssocPoint],
    step: usize,
    ways: u64,
    hit_ns: f64,
    miss_ns: f64,
) -> Vec<String> {
    let risen = |p: &AssocPoint| p.ns >= rise_threshold(p.lines, hit_ns, miss_ns);
    let mut notes = Vec::new();
    let dips: Vec<String> = sorted[step..]
        .iter()
        .filter(|p| !risen(p))
        .map(|p| format!("{} ({:.2} ns)", p.lines, p.ns))
        .collect();
    if !dips.is_empty() {
        notes.push(format!(
            "after the rise at {} lines, {} fell back below the least any replacement misses there, alone: noise, not a hit level",
            ways + 1,
            dips.join(", ")
        ));
    }
    let early: Vec<String> = sorted[..step]
        .iter()
        .filter(|p| risen(p))
        .map(|p| format!("{} ({:.2} ns)", p.lines, p.ns))
        .collect();
    if !early.is_empty() {
        notes.push(format!(
            "before the sustained rise, {} rose alone: noise, left out",
            early.join(", ")
        ));
    }
    if let [first, next, ..] = &sorted[step..]
        && next.ns < first.ns
    {
        // No way count here: only what the passes agree on is one.
        notes.push(format!(
            "{} lines rose to {:.2} ns but {} fell back to {:.2}: pseudo-LRU misses grow with the lines, or something else shared the set for a while",
            first.lines, first.ns, next.lines, next.ns
        ));
    }
    let at_ways = &sorted[step - 1];
    let touched = hit_ns + TOUCHED_FRACTION * (miss_ns - hit_ns);
    if at_ways.ns >= touched {
        notes.push(format!(
            "at {ways} lines the latency already rose to {:.2} ns (hits take {hit_ns:.2}): something else shares the set (the stack, memlat's own data) or replacement is not plain LRU",
            at_ways.ns
        ));
    }
    notes
}

/// The largest rise (at least 1.5x) between consecutive line counts: (N, ns at N, ns at N+1).
fn largest_step(sorted: &[AssocPoint]) -> Option<(u64, f64, f64)> {
    sorted
        .windows(2)
        .filter(|w| w[1].ns >= 1.5 * w[0].ns)
        .max_by(|a, b| (a[1].ns / a[0].ns).total_cmp(&(b[1].ns / b[0].ns)))
        .map(|w| (w[0].lines, w[0].ns, w[1].ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(level: u32, size: u64, ways: Option<u64>) -> CacheInfo {
        CacheInfo {
            level,
            kind: crate::platform::caches::CacheKind::Unified,
            size_bytes: size,
            line_bytes: Some(64),
            ways,
        }
    }

    fn points(ways: u64, hit: f64, miss: f64, upto: u64) -> Vec<AssocPoint> {
        (1..=upto)
            .map(|n| {
                let ns = if n <= ways { hit } else { miss }
                    * (1.0 + 0.02 * ((n * 7 % 5) as f64 - 2.0) / 2.0);
                AssocPoint::of(n, vec![ns])
            })
            .collect()
    }

    fn measured(ns: &[f64]) -> Vec<AssocPoint> {
        ns.iter()
            .enumerate()
            .map(|(i, &v)| AssocPoint::of(i as u64 + 1, vec![v]))
            .collect()
    }

    #[test]
    fn a_dip_after_the_rise_is_noise_not_the_answer() {
        // `memlat assoc --levels 1` on the Golden Cove guest (memlat 0.1.0,
        // one chain per count): 12 ways, but 16 under the old reading.
        let mut ns = vec![1.43; 11];
        ns.extend([2.48, 2.24, 2.99, 3.62, 2.40]);
        ns.extend([4.5; 10]);
        let e = estimate_ways(&measured(&ns), 1.43, 4.6);
        // 12 lines already rose past a quarter of the way (2.22 ns): the
        // reading says 11, and says why the step may be noise, naming no
        // other way count (only the passes' agreement is one).
        assert_eq!(e.ways, Some(11), "{e:?}");
        assert!(e.notes.iter().any(|n| n.contains("fell back")), "{e:?}");
        assert!(!e.notes.iter().any(|n| n.contains("ways")), "{e:?}");
        // With the set to itself (as three chains' median gives), 12.
        ns[11] = 1.45;
        let e = estimate_ways(&measured(&ns), 1.43, 4.6);
        assert_eq!(e.ways, Some(12), "{e:?}");
        assert!(!e.notes.iter().any(|n| n.contains("fell back")), "{e:?}");
        // A lone dip after the rise is reported, not taken for hits.
        ns[15] = 1.5;
        let e = estimate_ways(&measured(&ns), 1.43, 4.6);
        assert_eq!(e.ways, Some(12), "{e:?}");
        assert!(e.notes.iter().any(|n| n.contains("16 (1.50 ns)")), "{e:?}");
    }

    #[test]
    fn the_median_of_chains_outvotes_one_shared_set() {
        let p = AssocPoint::of(12, vec![1.44, 2.6, 1.45]);
        assert_eq!(p.ns, 1.45);
        let offsets: Vec<u64> = (0..CHAINS).map(|i| set_offset(4096, 64, i)).collect();
        assert!(offsets.iter().all(|&o| o > 0 && o < 4096 && o % 64 == 0));
        assert!(offsets[0] != offsets[1] && offsets[1] != offsets[2]);
        assert_eq!(set_offset(64, 64, 0), 0);
    }

    #[test]
    fn finds_the_ways_of_seed_004s_l1_and_of_this_machines() {
        assert_eq!(
            estimate_ways(&points(12, 1.2, 4.5, 26), 1.2, 4.5).ways,
            Some(12)
        );
        assert_eq!(
            estimate_ways(&points(8, 1.1, 3.9, 18), 1.1, 3.9).ways,
            Some(8)
        );
        // An L2 whose lines miss straight to L3 once L1's 8 ways are full.
        assert_eq!(
            estimate_ways(&points(8, 1.1, 12.0, 18), 3.9, 12.0).ways,
            Some(8)
        );
    }

    #[test]
    fn a_lone_spike_is_not_the_step() {
        let mut p = points(16, 10.0, 100.0, 34);
        p[4].ns = 90.0;
        assert_eq!(estimate_ways(&p, 10.0, 100.0).ways, Some(16));
    }

    #[test]
    fn no_step_or_no_contrast_gives_none_with_a_reason() {
        let e = estimate_ways(&points(64, 10.0, 100.0, 20), 10.0, 100.0);
        assert_eq!(e.ways, None);
        assert!(e.notes[0].contains("more ways than tried"));
        // This VM's L2: only L1's 8 ways show (1.1 -> 5 ns), never an L2 miss.
        let e = estimate_ways(&points(8, 1.1, 5.0, 18), 4.1, 14.8);
        assert_eq!(e.ways, None);
        assert!(e.notes[1].contains("from 8 to 9 lines"), "{:?}", e.notes);
        let e = estimate_ways(&points(8, 140.0, 150.0, 20), 140.0, 150.0);
        assert_eq!(e.ways, None);
        assert!(e.notes[0].contains("cannot be told apart"));
        let e = estimate_ways(&points(0, 10.0, 100.0, 20), 10.0, 100.0);
        assert_eq!(e.ways, None);
        assert!(e.notes[0].contains("even 1 line"));
    }

    #[test]
    fn strides_are_way_sizes_or_powers_of_two() {
        let line = 64;
        assert_eq!(stride_for(&cache(1, 48 << 10, Some(12)), line), 4096);
        assert_eq!(stride_for(&cache(1, 32 << 10, Some(8)), line), 4096);
        assert_eq!(stride_for(&cache(2, 1 << 20, None), line), 1 << 20);
        assert_eq!(stride_for(&cache(3, 30 << 20, Some(11)), line), 16 << 20);
        assert_eq!(pow2_floor(48 << 10), 32 << 10);
    }

    #[test]
    fn plans_reference_sizes_between_levels() {
        let caches = [
            cache(1, 32 << 10, Some(8)),
            cache(2, 1 << 20, Some(8)),
            cache(3, 32 << 20, Some(16)),
        ];
        let p = plan(&caches, 64, 2 << 20, &[], 256 << 20, None);
        assert_eq!(p.len(), 3);
        assert_eq!((p[0].hit_size, p[0].miss_size), (16 << 10, 64 << 10));
        assert_eq!((p[1].hit_size, p[1].miss_size), (64 << 10, 2 << 20));
        assert_eq!((p[2].hit_size, p[2].miss_size), (2 << 20, 256 << 20));
        assert_eq!(p[0].lines, (1..=18).collect::<Vec<_>>());
        assert_eq!(p[2].stride, 2 << 20);
        assert!(p.iter().all(|l| l.skip.is_none()));
        assert_eq!(
            plan(&caches, 64, 2 << 20, &[], 1 << 30, Some(5))[2]
                .lines
                .len(),
            5
        );
        // Measured plateaus place the references: a guest's L2 serving to
        // 256 KiB and a 3.5 MiB share of the L3.
        let middles = [Some(16 << 10), Some(128 << 10), Some(1536 << 10)];
        let p = plan(&caches, 64, 2 << 20, &middles, 256 << 20, None);
        assert_eq!((p[1].hit_size, p[1].miss_size), (128 << 10, 1536 << 10));
        assert_eq!((p[2].hit_size, p[2].miss_size), (1536 << 10, 256 << 20));
        assert_eq!(p[2].largest_buffer(), 256 << 20);
    }

    #[test]
    fn a_sliced_l3_or_a_way_beyond_the_page_is_said_not_measured() {
        // Emerald Rapids' guest: 260 MiB, 20 ways (13 MiB a way): no 256
        // MiB stride, no 10 GiB of sets.
        let caches = [
            cache(1, 48 << 10, Some(12)),
            cache(2, 2 << 20, Some(16)),
            cache(3, 260 << 20, Some(20)),
        ];
        let p = plan(&caches, 64, 2 << 20, &[], 256 << 20, None);
        assert!(p[0].skip.is_none() && p[1].skip.is_none());
        let why = p[2].skip.as_deref().unwrap();
        assert!(why.contains("13 MiB") && why.contains("hash"), "{why}");
        assert_eq!(p[2].largest_buffer(), 0);
        assert_eq!(p[2].points(), 0);
        assert!(p[1].largest_buffer() <= 256 << 20);
        // 4 KiB pages: the L2's 128 KiB way lies across pages.
        let p = plan(&caches, 64, 4096, &[], 256 << 20, None);
        assert!(p[0].skip.is_none());
        let why = p[1].skip.as_deref().unwrap();
        assert!(
            why.contains("4 KiB pages") && why.contains("--pages"),
            "{why}"
        );
        // Unclaimed ways: the capacity's power of two, tried within a page.
        assert!(why_untestable(&cache(2, 1 << 20, None), 64, 2 << 20).is_none());
        assert!(why_untestable(&cache(3, 32 << 20, None), 64, 2 << 20).is_some());
    }
}
