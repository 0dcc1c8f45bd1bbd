//! Where a sweep without `--to` stops: where the curve has levelled beyond
//! every cache sysfs lists, or has reached memory's size. Memory is the
//! last level, known by where it lies, not by a latency.

use super::SweepResult;
use crate::experiments::memory::{self, Last, MemorySize};

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

/// Whether the detection series' curve has levelled beyond the caches
/// sysfs lists ([`levelled_beyond_caches`]).
pub(super) fn reached_dram(result: &SweepResult) -> bool {
    let largest = largest_listed(result).map(|c| c.size_bytes);
    levelled_beyond_caches(&detection_curve(result), largest)
}

/// Whether the detection series' curve has reached memory's size
/// ([`reached_memory_size`]).
pub(super) fn reached_memory(result: &SweepResult) -> bool {
    let size = memory_size(result, crate::platform::mem_available_bytes()).size;
    let largest = largest_listed(result).map(|c| c.size_bytes);
    reached_memory_size(&detection_curve(result), largest, size)
}

/// The size every command measures memory at, for this sweep's pages and
/// the largest cache sysfs lists (claimed: the sweep has not detected its
/// levels yet, and a claim is rarely smaller than what serves).
pub fn memory_size(result: &SweepResult, available: Option<u64>) -> MemorySize {
    let largest = largest_listed(result).map(|c| (c.name(), c.size_bytes));
    let last = match &largest {
        Some((name, bytes)) => Last::Claimed(name, *bytes),
        None => Last::Unknown,
    };
    let page = memory::page_bytes(result.config.pages);
    memory::size(last, page, available, result.config.unit)
}

/// The detection series' curve as (size, ns).
fn detection_curve(result: &SweepResult) -> Vec<(u64, f64)> {
    result
        .curve()
        .iter()
        .map(|p| (p.size_bytes, p.ns))
        .collect()
}

/// The largest data cache sysfs lists.
fn largest_listed(result: &SweepResult) -> Option<&crate::platform::caches::CacheInfo> {
    result
        .sysfs_caches
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
}
