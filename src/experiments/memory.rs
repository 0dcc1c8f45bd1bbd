//! One definition of "memory": the size of the random chain every command
//! measures memory's latency at by default (`memlat`, `levels`, `loaded`,
//! `loaduse`, `mlp`, `watch`, `characterize`, `assoc`'s last reference).
//!
//! The rule: [`FACTOR`] times the last cache level's capacity as measured
//! (the sweep's or probe's plateau; the claimed size only where nothing was
//! measured, and then said), at least [`FLOOR`] and at most [`CEILING`], at
//! most a quarter of the memory available, and within the reach of the data
//! TLBs for the page size used: a chain past that reach measures page walks
//! beside memory (a 2 GiB chain on 2 MiB pages read 215 ns where a 256 MiB
//! one read 136 ns on one guest), so a size past it is said.

use crate::units::HumanBytes;

/// Memory is measured at this multiple of the last level's capacity.
pub const FACTOR: u64 = 4;

/// The smallest memory chain, however small the last level.
pub const FLOOR: u64 = 256 << 20;

/// The largest memory chain, however large the last level claims to be:
/// past 1 GiB the latency grows with page walks, not with memory.
pub const CEILING: u64 = 1 << 30;

/// Second-level data TLB entries assumed where CPUID does not list them
/// (Skylake's 1536; Zen 3 and Golden Cove have 2048).
pub const ASSUMED_TLB_ENTRIES: u64 = 1536;

/// The last cache level the size rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last<'a> {
    /// Measured (a sweep's or the probe's plateau): name and capacity.
    Measured(&'a str, u64),
    /// Claimed by sysfs or a profile, nothing measured: name and size.
    Claimed(&'a str, u64),
    /// Nothing known.
    Unknown,
}

/// Memory's size and the rule's reasoning, for a reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemorySize {
    /// Buffer size, bytes.
    pub size: u64,
    /// How the size was reached, one line (`4x the measured L3 ...`).
    pub basis: String,
    /// What to keep in mind: capped by memory, or past the TLBs' reach.
    pub notes: Vec<String>,
}

/// The data TLBs' reach for `page` bytes: their largest entry count for
/// that page size (CPUID's; [`ASSUMED_TLB_ENTRIES`] where it lists none)
/// times the page.
pub fn tlb_reach(page: u64) -> u64 {
    let listed = crate::platform::cpuid::tlbs()
        .iter()
        .filter(|t| t.page_bytes.contains(&page))
        .map(|t| t.entries)
        .max();
    listed.unwrap_or(ASSUMED_TLB_ENTRIES).saturating_mul(page)
}

/// The rule for `last`, with pages of `page` bytes whose TLB reach is
/// `reach` bytes, and `available` bytes of memory; `line` rounds the size.
pub fn size_with(
    last: Last,
    page: u64,
    reach: u64,
    available: Option<u64>,
    line: u64,
) -> MemorySize {
    let line = line.max(8);
    let (capacity, mut basis) = match last {
        Last::Measured(name, bytes) => (
            bytes,
            format!(
                "{FACTOR}x the measured {name} capacity {}",
                HumanBytes(bytes)
            ),
        ),
        Last::Claimed(name, bytes) => (
            bytes,
            format!(
                "{FACTOR}x the {name} {} the system claims (nothing measured)",
                HumanBytes(bytes)
            ),
        ),
        Last::Unknown => (
            64 << 20,
            "no cache level known: 4x an assumed 64 MiB".to_string(),
        ),
    };
    basis += &format!(", {} to {}", HumanBytes(FLOOR), HumanBytes(CEILING));
    let mut size = capacity.saturating_mul(FACTOR).clamp(FLOOR, CEILING);
    let mut notes = Vec::new();
    if let Some(available) = available
        && size > available / 4
    {
        size = available / 4;
        basis += &format!(
            ", capped at a quarter of the memory available ({})",
            HumanBytes(available)
        );
        if size < 2 * capacity {
            notes.push(format!(
                "memory is measured at {}, not much beyond the last level ({}): some loads may still hit it",
                HumanBytes(size),
                HumanBytes(capacity)
            ));
        }
    }
    if size > reach {
        notes.push(format!(
            "memory's {} is past the data TLBs' reach with {} pages (about {}): its latency includes page walks (--pages thp or 2m reach further)",
            HumanBytes(size),
            HumanBytes(page),
            HumanBytes(reach)
        ));
    } else {
        basis += &format!(
            ", within the TLBs' reach with {} pages ({})",
            HumanBytes(page),
            HumanBytes(reach)
        );
    }
    MemorySize {
        size: (size / line).max(2) * line,
        basis,
        notes,
    }
}

/// [`size_with`] for this machine's TLBs, with `page`-byte pages.
pub fn size(last: Last, page: u64, available: Option<u64>, line: u64) -> MemorySize {
    size_with(last, page, tlb_reach(page), available, line)
}

/// The page size a buffer asking for `pages` gets, bytes: the base page
/// for `4k`, the THP size for `thp` (the base page without THP), 2 MiB and
/// 1 GiB for the hugetlb requests.
pub fn page_bytes(pages: crate::platform::buffer::PageRequest) -> u64 {
    use crate::platform::buffer::PageRequest;
    let base = crate::platform::system::base_page_bytes();
    match pages {
        PageRequest::Base => base,
        PageRequest::Thp => crate::platform::system::thp_page_bytes().unwrap_or(base),
        PageRequest::Huge2M => 2 << 20,
        PageRequest::Huge1G => 1 << 30,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;

    #[test]
    fn four_times_the_measured_last_level_within_floor_and_ceiling() {
        // A guest's 3.5 MiB share of a 32 MiB L3: the floor.
        let m = size_with(
            Last::Measured("L3", 7 * MIB / 2),
            2 * MIB,
            4 * GIB,
            None,
            64,
        );
        assert_eq!(m.size, FLOOR);
        assert!(m.basis.contains("measured L3"), "{}", m.basis);
        assert!(m.notes.is_empty(), "{:?}", m.notes);
        // 96 MiB measured: 384 MiB.
        let m = size_with(Last::Measured("L3", 96 * MIB), 2 * MIB, 4 * GIB, None, 64);
        assert_eq!(m.size, 384 * MIB);
        // A claimed 260 MiB: the ceiling, and the claim is said.
        let m = size_with(Last::Claimed("L3", 260 * MIB), 2 * MIB, 4 * GIB, None, 64);
        assert_eq!(m.size, CEILING);
        assert!(m.basis.contains("claims"), "{}", m.basis);
    }

    #[test]
    fn capped_by_memory_and_past_the_tlb_reach_are_said() {
        let m = size_with(
            Last::Measured("L3", 32 * MIB),
            2 * MIB,
            4 * GIB,
            Some(200 * MIB),
            64,
        );
        assert_eq!(m.size, 50 * MIB);
        assert!(m.basis.contains("quarter"), "{}", m.basis);
        assert!(m.notes[0].contains("may still hit"), "{:?}", m.notes);
        // 4 KiB pages, 1536 entries: 6 MiB of reach.
        let m = size_with(Last::Measured("L3", 32 * MIB), 4096, 6 * MIB, None, 64);
        assert_eq!(m.size, 128 * MIB * 2);
        assert!(
            m.notes.iter().any(|n| n.contains("page walks")),
            "{:?}",
            m.notes
        );
        assert!(!m.basis.contains("within the TLBs"), "{}", m.basis);
    }
}
