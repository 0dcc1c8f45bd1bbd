//! The quick table (`memlat` with no command): a random chain at one size
//! inside each data cache the system claims, past the level before it, and
//! one beyond every cache for DRAM.

use crate::platform::caches::CacheInfo;

/// Sizes when sysfs says nothing about the caches.
pub const FALLBACK_SIZES: [u64; 4] = [16 << 10, 256 << 10, 8 << 20, 256 << 20];

/// The smallest DRAM-sized buffer, however small the last-level cache.
pub const MIN_DRAM_SIZE: u64 = super::memory::FLOOR;

/// The largest DRAM-sized buffer, however large the last-level cache claims
/// to be: past 1 GiB the latency grows with page walks, not with memory.
pub const MAX_DRAM_SIZE: u64 = super::memory::CEILING;

/// A working set surely beyond every cache a core can use: 4x the last level
/// claimed, at least `floor`, at most [`MAX_DRAM_SIZE`] (seed 002's 8x LLC,
/// kept in `memlat levels`, is 3.8 GiB for a 480 MiB L3 and measures page
/// walks as much as memory).
pub fn dram_size(last_level: u64, floor: u64) -> u64 {
    last_level
        .saturating_mul(4)
        .clamp(floor, MAX_DRAM_SIZE.max(floor))
}

/// Memory's size by [`super::memory`]'s rule for `caches` when nothing was
/// measured (the last one claimed, or 64 MiB when none is): what
/// `memlat numa` chases, and `characterize` before its sweep.
pub fn memory_size(caches: &[CacheInfo]) -> u64 {
    claimed_memory(caches, None).size
}

/// [`memory_size`] with its reasoning, capped at a quarter of `available`.
pub fn claimed_memory(caches: &[CacheInfo], available: Option<u64>) -> super::memory::MemorySize {
    let name = caches.last().map(|c| c.name());
    let last = match (&name, caches.last()) {
        (Some(n), Some(c)) => super::memory::Last::Claimed(n, c.size_bytes),
        _ => super::memory::Last::Unknown,
    };
    let page = super::memory::page_bytes(crate::platform::buffer::PageRequest::Thp);
    super::memory::size(last, page, available, 64)
}

/// One size well inside each data cache and beyond the one before it: half
/// of L1, then the geometric middle between the previous level's capacity and
/// this one's (seed 002's CACHE_SIZE/2 lets other tenants' use of a shared
/// level push it out); then [`dram_size`] for DRAM, at most a quarter of
/// available memory.
pub fn default_sizes(caches: &[CacheInfo], mem_available: Option<u64>) -> Vec<u64> {
    if caches.is_empty() {
        return FALLBACK_SIZES.to_vec();
    }
    let mut sizes = Vec::new();
    let mut previous = 0u64;
    for cache in caches {
        let size = if previous == 0 {
            cache.size_bytes / 2
        } else {
            ((previous as f64 * cache.size_bytes as f64).sqrt() as u64).div_ceil(64) * 64
        };
        sizes.push(size);
        previous = cache.size_bytes;
    }
    let mut dram = dram_size(previous, MIN_DRAM_SIZE);
    if let Some(available) = mem_available {
        dram = dram.min(available / 4);
    }
    sizes.push(dram);
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(level: u32, size: u64) -> CacheInfo {
        CacheInfo::example(level, size)
    }

    #[test]
    fn default_sizes_sit_inside_each_level_then_beyond_the_last() {
        let caches = [cache(1, 32 << 10), cache(2, 1 << 20), cache(3, 32 << 20)];
        let sizes = default_sizes(&caches, Some(16 << 30));
        assert_eq!(&sizes[..3], &[16 << 10, 185_408, 5_931_648]);
        assert_eq!(sizes[3], MIN_DRAM_SIZE);
        // Never more than a quarter of what is available.
        assert_eq!(default_sizes(&caches, Some(512 << 20))[3], 128 << 20);
        let large = [cache(1, 48 << 10), cache(2, 2 << 20), cache(3, 480 << 20)];
        assert_eq!(default_sizes(&large, Some(16 << 30))[3], MAX_DRAM_SIZE);
        let small = [cache(1, 32 << 10), cache(2, 1 << 20), cache(3, 96 << 20)];
        assert_eq!(default_sizes(&small, Some(16 << 30))[3], 384 << 20);
        assert_eq!(default_sizes(&[], None), FALLBACK_SIZES.to_vec());
    }
}
