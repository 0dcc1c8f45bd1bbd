//! Where a sweep without `--to` stops: where the curve has levelled beyond
//! every cache sysfs lists, or has reached memory's size, for the largest
//! cache sysfs lists or, once as many levels have ended as it lists, for
//! the last one measured. Memory is the last level, known by where it
//! lies, not by a latency.

use super::SweepResult;
use crate::analysis::detect::CurvePoint;
use crate::engine::Engine;
use crate::experiments::memory::{self, Last, MemorySize};
use crate::platform::caches::CacheInfo;

/// Points of the curve that must be level, beyond every cache sysfs
/// lists, to end a sweep: at the default ratio of 1.3 they span 2.2x in
/// size, over which a cache still serving part of the buffer would move
/// the latency by far more than [`FLAT_BAND`] (at most C of S bytes are
/// resident, so its share falls from C/S to under half of that).
pub const FLAT_POINTS: usize = 4;

/// How level: the largest of those points' latencies over the smallest.
/// Repeats of one size at memory differ by 2-3% on a quiet machine; twice
/// or three times that is noise, a cache's share giving way is more.
pub const FLAT_BAND: f64 = 1.08;

/// Whether the curve (size, ns by size) has levelled beyond the caches:
/// its last [`FLAT_POINTS`] latencies within [`FLAT_BAND`] of each other,
/// the first of them at a size larger than `largest_cache` (the largest
/// data cache sysfs lists), which then cannot hold the buffer: the level
/// there is the last one, memory, unless a larger buffer exceeds it (a
/// farther tier, told by the detector). No latency says "memory": a flat
/// L3 at 36 ns and tuned DRAM at 55 ns differ only in where they lie.
/// Without a listed cache nothing tells the last cache's plateau from
/// memory's, and the sweep goes on to its cap.
pub fn levelled_beyond_caches(curve: &[(u64, f64)], largest_cache: Option<u64>) -> bool {
    let (Some(last), Some(largest)) = (curve.len().checked_sub(FLAT_POINTS), largest_cache) else {
        return false;
    };
    let tail = &curve[last..];
    let lo = tail.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = tail.iter().map(|p| p.1).fold(0.0, f64::max);
    tail[0].0 > largest && hi <= lo * FLAT_BAND
}

/// Whether the curve has reached `memory_size`, the size every command
/// measures memory at (`experiments::memory`: four times the last level at
/// least), with [`FLAT_POINTS`] points or more beyond `largest_cache` (all
/// of them without a listed cache). There at most a quarter of the buffer
/// can still be cached, so memory has been measured by the one definition
/// memlat has; a latency still rising past it is page walks (the page test
/// tells) or a farther tier, which `--to` reaches. Without this a host whose
/// memory never reads level within [`FLAT_BAND`] (another tenant's noise,
/// nested page walks growing with the buffer) swept to its cap: 4 GiB and
/// 44 s on a Zen 3 guest whose memory crept from 200 to 395 ns.
pub fn reached_memory_size(
    curve: &[(u64, f64)],
    largest_cache: Option<u64>,
    memory_size: u64,
) -> bool {
    let beyond = curve
        .iter()
        .filter(|p| largest_cache.is_none_or(|c| p.0 > c))
        .count();
    curve.last().is_some_and(|p| p.0 >= memory_size) && beyond >= FLAT_POINTS
}

/// Whether the curve has passed every cache level sysfs lists, each seen
/// to end, and reached memory's size for the last of them as measured.
/// sysfs says how many levels a core has; only the curve says where the
/// last one ends for this process: a guest given 13 MiB of a 300 MiB L3
/// has left it by 40 MiB, and sweeping on past the claimed 300 MiB (to
/// 1 GiB, a fifth of an Emerald Rapids guest's sweep) measures nothing
/// new. `measured_caches` counts the detector's levels below memory on the
/// curve so far, `listed_levels` the distinct data-cache levels sysfs
/// lists; `last_high` is the last measured level's upper capacity bound
/// and `memory_size` memory's size for its measured capacity
/// ([`crate::experiments::memory`]). Fewer levels measured than listed (a
/// whole L3 still serving, its end not yet reached) leaves the claim's
/// rules to end the sweep, as do pages whose TLB reach falls inside the
/// largest listed cache (the count may include the walks' step). A step
/// inside a whole cache that is neither (a mixture the detector keeps as a
/// level) would end the sweep early: no stored curve or catalogue row
/// shows one, and the JSON's `range_end_reason` says which rule ended it.
pub fn passed_measured_levels(
    curve: &[(u64, f64)],
    measured_caches: usize,
    listed_levels: usize,
    last_high: u64,
    memory_size: u64,
) -> bool {
    listed_levels > 0
        && measured_caches >= listed_levels
        && reached_memory_size(curve, Some(last_high), memory_size)
}

/// Why a sweep without `--to` ends at its last point, if it does:
/// `flat-dram` ([`levelled_beyond_caches`]), `memory-size`
/// ([`reached_memory_size`] for the largest cache `sysfs` lists) or
/// `measured-memory-size` ([`passed_measured_levels`]). `curve` is the
/// grid's detection series so far; `pages` its page size and the data
/// TLBs' reach with it, `unit` its line (bytes); `available` bytes of
/// memory bound memory's size.
pub fn end_of(
    curve: &[CurvePoint],
    sysfs: &[CacheInfo],
    pages: Pages,
    unit: u64,
    available: Option<u64>,
) -> Option<&'static str> {
    let points: Vec<(u64, f64)> = curve.iter().map(|p| (p.size_bytes, p.ns)).collect();
    let largest = largest_listed(sysfs);
    let claimed = claimed_memory_size(sysfs, pages.bytes, unit, available).size;
    if levelled_beyond_caches(&points, largest.map(|c| c.size_bytes)) {
        Some("flat-dram")
    } else if reached_memory_size(&points, largest.map(|c| c.size_bytes), claimed) {
        Some("memory-size")
    } else if reached_measured_memory(curve, &points, sysfs, pages, unit, available) {
        Some("measured-memory-size")
    } else {
        None
    }
}

/// After each whole size of the grid (every series measured at `size`):
/// past every level measured, a chain's repeats ask memory's precision
/// ([`past_levels`]); and when the range is adaptive, the sweep ends where
/// [`end_of`] says, its sizes cut there and the reason kept. Whether it
/// ends.
pub(super) fn after_grid_size(
    engine: &mut Engine,
    result: &mut SweepResult,
    pages: Pages,
    size: u64,
) -> bool {
    let curve = result.curve();
    if !engine.knows_past_levels()
        && let Some(bytes) = past_levels(&curve, &result.sysfs_caches, pages)
    {
        engine.set_past_levels(Some(bytes));
    }
    if !result.config.adaptive() {
        return false;
    }
    let available = crate::platform::mem_available_bytes();
    let unit = result.config.unit;
    let Some(reason) = end_of(&curve, &result.sysfs_caches, pages, unit, available) else {
        return false;
    };
    result.config.sizes.retain(|&s| s <= size);
    result.config.range_end_reason = reason.into();
    true
}

/// A sweep's page size and the data TLBs' reach with it, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pages {
    /// The page size.
    pub bytes: u64,
    /// The TLBs' entries times the page size: past it every load may walk
    /// the page tables, a step in the curve that is no cache's end.
    pub reach: u64,
}

impl Pages {
    /// The pages `result` asked for, with this machine's TLB reach.
    pub fn of(result: &SweepResult) -> Pages {
        let bytes = memory::page_bytes(result.config.pages);
        Pages {
            bytes,
            reach: memory::tlb_reach(bytes),
        }
    }
}

/// Whether a step the detector counts as a cache's end may instead be the
/// TLBs' reach: where the pages reach less than the largest cache sysfs
/// lists, the first walks fall inside it (4 KiB pages: 6-8 MiB of a
/// 300 MiB L3), and a level count proves nothing about where it ends.
fn counts_can_mislead(sysfs: &[CacheInfo], pages: Pages) -> bool {
    largest_listed(sysfs).is_some_and(|c| pages.reach < c.size_bytes)
}

/// [`passed_measured_levels`] for the levels detected on `curve` so far.
fn reached_measured_memory(
    curve: &[CurvePoint],
    points: &[(u64, f64)],
    sysfs: &[CacheInfo],
    pages: Pages,
    unit: u64,
    available: Option<u64>,
) -> bool {
    // Memory's size is the floor at least (or a quarter of memory, where
    // that is less): detect nothing before it.
    let least = available.map_or(memory::FLOOR, |a| memory::FLOOR.min(a / 4));
    if points.last().is_none_or(|p| p.0 < least) || counts_can_mislead(sysfs, pages) {
        return false;
    }
    let (count, last) = measured_caches(curve, sysfs);
    let Some(last) = last else {
        return false;
    };
    passed_measured_levels(
        points,
        count,
        crate::analysis::detect::sysfs_cache_levels(sysfs),
        last.high,
        last.memory_size(pages, unit, available).size,
    )
}

/// The last cache level the detector finds on a curve.
struct LastCache {
    name: String,
    /// Its capacity, bytes.
    capacity: u64,
    /// The upper end of its capacity's bracket, bytes.
    high: u64,
}

impl LastCache {
    /// Memory's size for this level as measured.
    fn memory_size(&self, pages: Pages, unit: u64, available: Option<u64>) -> MemorySize {
        memory::size_with(
            Last::Measured(&self.name, self.capacity),
            pages.bytes,
            pages.reach,
            available,
            unit,
        )
    }
}

/// How many cache levels (memory aside) the detector finds on `curve`, and
/// the last of them.
fn measured_caches(curve: &[CurvePoint], sysfs: &[CacheInfo]) -> (usize, Option<LastCache>) {
    let detection = crate::analysis::detect::detect(curve, sysfs);
    let caches: Vec<LastCache> = detection
        .levels
        .into_iter()
        .filter_map(|l| {
            Some(LastCache {
                capacity: l.size_bytes?,
                high: l.size_bracket_bytes?[1],
                name: l.name,
            })
        })
        .collect();
    (caches.len(), caches.into_iter().last())
}

/// Where the curve so far shows every cache level sysfs lists to have
/// ended: the last one's upper capacity bound, past which a chain lies in
/// memory (a guest's 13 MiB share of a 300 MiB L3 ends by 17 MiB), with
/// [`FLAT_POINTS`] sizes beyond it. None while fewer levels have ended
/// than sysfs lists, before the curve reaches twice the second-largest
/// listed level (no last level can have ended before that: nothing to
/// detect), or where `pages` reach less than the largest listed cache
/// (a count may include the TLBs' step).
pub fn past_levels(curve: &[CurvePoint], sysfs: &[CacheInfo], pages: Pages) -> Option<u64> {
    if counts_can_mislead(sysfs, pages) {
        return None;
    }
    let listed = crate::analysis::detect::sysfs_cache_levels(sysfs);
    let mut sizes: Vec<u64> = sysfs
        .iter()
        .filter(|c| c.holds_data())
        .map(|c| c.size_bytes)
        .collect();
    sizes.sort_unstable();
    let second = sizes.iter().rev().nth(1).copied().unwrap_or(0);
    if listed == 0 || curve.last().is_none_or(|p| p.size_bytes < 2 * second) {
        return None;
    }
    let (count, last) = measured_caches(curve, sysfs);
    let high = last?.high;
    // The last level's end stands only with the curve gone on past it, as
    // the end rule asks: a level whose bracket ends at the last point has
    // not been seen to end.
    let beyond = curve.iter().filter(|p| p.size_bytes > high).count();
    (count >= listed && beyond >= FLAT_POINTS).then_some(high)
}

/// The size every command measures memory at, for this sweep's pages and
/// the largest cache sysfs lists (claimed: the sweep has not detected its
/// levels yet, and a claim is rarely smaller than what serves).
pub fn memory_size(result: &SweepResult, available: Option<u64>) -> MemorySize {
    claimed_memory_size(
        &result.sysfs_caches,
        memory::page_bytes(result.config.pages),
        result.config.unit,
        available,
    )
}

/// Memory's size where the sweep `result` ended: for the last level it
/// measured where that ended it (`measured-memory-size`), else for the
/// largest cache sysfs lists ([`memory_size`]).
pub fn ended_memory_size(result: &SweepResult, available: Option<u64>) -> MemorySize {
    if result.config.range_end_reason == "measured-memory-size"
        && let (_, Some(last)) = measured_caches(&result.curve(), &result.sysfs_caches)
    {
        return last.memory_size(Pages::of(result), result.config.unit, available);
    }
    memory_size(result, available)
}

/// Memory's size for the largest cache `sysfs` lists.
fn claimed_memory_size(
    sysfs: &[CacheInfo],
    page: u64,
    unit: u64,
    available: Option<u64>,
) -> MemorySize {
    let largest = largest_listed(sysfs).map(|c| (c.name(), c.size_bytes));
    let last = match &largest {
        Some((name, bytes)) => Last::Claimed(name, *bytes),
        None => Last::Unknown,
    };
    memory::size(last, page, available, unit)
}

/// The largest data cache sysfs lists.
fn largest_listed(sysfs: &[CacheInfo]) -> Option<&CacheInfo> {
    sysfs
        .iter()
        .filter(|c| c.holds_data())
        .max_by_key(|c| c.size_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_ends_when_level_beyond_the_caches_not_at_a_flat_cache() {
        let m = |k: u64| k << 20;
        let curve = |ns: &[f64], from: u64| -> Vec<(u64, f64)> {
            ns.iter()
                .enumerate()
                .map(|(i, &v)| (from * 13u64.pow(i as u32) / 10u64.pow(i as u32), v))
                .collect()
        };
        let l3 = Some(m(32));
        assert!(levelled_beyond_caches(
            &curve(&[40.0, 155.0, 160.0, 158.0, 163.0], m(40)),
            l3
        ));
        // Tuned DRAM at 55 ns is memory as much as 160 ns is.
        assert!(levelled_beyond_caches(
            &curve(&[40.0, 55.0, 56.0, 55.5, 57.0], m(40)),
            l3
        ));
        // A flat L3 plateau, within the L3 sysfs lists, is not memory.
        assert!(!levelled_beyond_caches(
            &curve(&[4.0, 36.0, 37.0, 36.5, 37.5], m(4)),
            l3
        ));
        // Still rising, too few points, or no cache listed: go on.
        assert!(!levelled_beyond_caches(
            &curve(&[90.0, 120.0, 140.0, 160.0], m(64)),
            l3
        ));
        assert!(!levelled_beyond_caches(&curve(&[160.0, 161.0], m(64)), l3));
        assert!(!levelled_beyond_caches(
            &curve(&[155.0, 160.0, 158.0, 163.0], m(64)),
            None
        ));
    }

    #[test]
    fn a_curve_still_rising_ends_at_memorys_size() {
        let m = |k: u64| k << 20;
        // The Zen 3 guest's creeping memory (MiB, ns): never level within
        // 8%, so only memory's 256 MiB ends it.
        let creep = [
            (m(35), 222.0),
            (m(46), 230.0),
            (m(60), 206.0),
            (m(78), 201.0),
            (m(101), 215.0),
            (m(131), 199.0),
            (m(170), 203.0),
            (m(221), 208.0),
            (m(288), 227.0),
        ];
        let l3 = Some(m(32));
        assert!(!levelled_beyond_caches(&creep, l3));
        assert!(!reached_memory_size(&creep[..8], l3, m(256)));
        assert!(reached_memory_size(&creep, l3, m(256)));
        // Past memory's size with too few points beyond the caches (a
        // claimed cache as large as memory's size): go on.
        assert!(!reached_memory_size(&creep, Some(m(250)), m(256)));
        // Nothing listed: every point counts.
        assert!(reached_memory_size(&creep, None, m(256)));
    }

    #[test]
    fn a_share_of_a_larger_cache_ends_at_memorys_size_once_every_level_has_ended() {
        let m = |k: u64| k << 20;
        // Memory past a 13 MiB share of a 300 MiB L3, to 287 MiB.
        let curve: Vec<(u64, f64)> = [40, 52, 68, 88, 115, 150, 195, 254, 287]
            .iter()
            .map(|&s| (m(s), 120.0))
            .collect();
        assert!(passed_measured_levels(&curve, 3, 3, m(17), m(256)));
        // Two levels ended where three are listed: the third may be
        // serving still, whatever the latency.
        assert!(!passed_measured_levels(&curve, 2, 3, m(17), m(256)));
        // Short of memory's size, or too few points past the level's end.
        assert!(!passed_measured_levels(&curve[..7], 3, 3, m(17), m(256)));
        assert!(!passed_measured_levels(&curve, 3, 3, m(200), m(256)));
        // Nothing listed: nothing to have passed.
        assert!(!passed_measured_levels(&curve, 3, 0, m(17), m(256)));
    }
}
