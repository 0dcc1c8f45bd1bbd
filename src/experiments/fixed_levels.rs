//! Seed 002's per-level procedure as pure planning and reporting;
//! `commands::levels` measures.
//!
//! For each cache level a random walk over `CACHE_SIZE / 2` (it fits with
//! room to spare), for memory `LLC_SIZE * 8` (it cannot fit), capped by the
//! memory available, as seed 002 (with `--machine`; otherwise
//! [`place_in_plateaus`] moves the caches into their measured plateaus and
//! memory to [`crate::experiments::memory`]'s size); each iteration is a
//! fresh random walk. Results go to
//! `results_{name}.csv`, one row per level and iteration.

use serde::Serialize;

use crate::analysis::stats::Summary;
use crate::engine::Measurement;
use crate::experiments::plateaus::MeasuredLevels;
use crate::platform::caches::Machine;
use crate::units::HumanBytes;

/// Memory is measured at this multiple of the last-level cache: at most
/// C of the S bytes are resident, so any replacement policy serves at most
/// 1/8 of the loads from that cache there (LRU none).
pub const MEMORY_FACTOR: u64 = 8;

/// At most this fraction of available memory goes to the memory level's buffer.
pub const MEMORY_SHARE: f64 = 0.5;

/// Adjacent levels closer than this factor in latency are not told apart.
pub const SAME_RATIO: f64 = 1.3;

/// One level to measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LevelSize {
    /// `L1`, `L2`, ... or `memory`.
    pub level: String,
    /// Buffer size, bytes (a multiple of the line).
    pub size: u64,
}

/// Sizes per level, and notices (the memory cap).
pub fn plan(machine: &Machine, available: Option<u64>) -> (Vec<LevelSize>, Vec<String>) {
    let line = machine.line_bytes.max(8);
    let down = |x: u64| (x / line).max(1) * line;
    let mut sizes: Vec<LevelSize> = machine
        .caches
        .iter()
        .map(|c| LevelSize {
            level: format!("L{}", c.level),
            size: down(c.size_bytes / 2),
        })
        .collect();
    let mut notices = Vec::new();
    if let Some(llc) = machine.llc() {
        let wanted = llc.size_bytes.saturating_mul(MEMORY_FACTOR);
        let mut size = wanted;
        if let Some(avail) = available {
            let cap = down((avail as f64 * MEMORY_SHARE) as u64);
            if wanted > cap {
                size = cap;
                notices.push(format!(
                    "memory: {} (8x the {} LLC) is more than half the available memory ({}); measuring {} instead",
                    HumanBytes(wanted),
                    HumanBytes(llc.size_bytes),
                    HumanBytes(avail),
                    HumanBytes(size)
                ));
            }
        }
        sizes.push(LevelSize {
            level: "memory".into(),
            size: down(size),
        });
    }
    (sizes, notices)
}

/// Moves each cache level of `sizes` to the middle of its measured plateau
/// (seed 002's half of the cache sits on the ramp of a shared level), and
/// memory to the one rule's size ([`crate::experiments::memory`]: seed
/// 002's 8x the claimed LLC, 2 GiB for a 260 MiB L3, outgrows the TLBs and
/// differs from every other command's memory); a level with no measured
/// plateau keeps its size, with a notice.
pub fn place_in_plateaus(
    sizes: &mut [LevelSize],
    measured: &MeasuredLevels,
    line: u64,
    available: Option<u64>,
    notices: &mut Vec<String>,
) {
    for level in sizes.iter_mut() {
        if level.level == "memory" {
            let memory = measured.memory(available, line);
            level.size = memory.size;
            notices.retain(|n| !n.starts_with("memory:"));
            notices.push(format!(
                "memory: {} ({}), as every command's",
                HumanBytes(memory.size),
                memory.basis
            ));
            notices.extend(memory.notes);
            continue;
        }
        match measured.levels.iter().find(|p| p.name == level.level) {
            Some(p) => level.size = p.middle(line.max(8)),
            None => notices.push(format!(
                "no {} plateau was measured: {} keeps half of the cache sysfs lists ({})",
                level.level,
                level.level,
                HumanBytes(level.size)
            )),
        }
    }
}

/// One level's summary over its iterations.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct LevelSummary {
    /// `L1`, ... or `memory`.
    pub level: String,
    /// Buffer size, bytes.
    pub size: u64,
    /// Iterations measured.
    pub iterations: usize,
    /// Nanoseconds per load over the iterations.
    pub ns: Summary,
    /// Cycles per load over the iterations.
    pub cycles: Summary,
    /// Where cycles come from (`perf`, `estimated`, `given`).
    pub cycle_source: String,
    /// Page backing obtained.
    pub pages: String,
}

/// Summarises a level's measurement (each sample is one iteration).
pub fn summarise(level: &str, m: &Measurement) -> LevelSummary {
    LevelSummary {
        level: level.to_string(),
        size: m.size,
        iterations: m.samples.len(),
        ns: m.ns_per_load,
        cycles: m.cycles_per_load,
        cycle_source: m.cycle_source.to_string(),
        pages: m.page_backing.obtained.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_each_cache_and_caps_memory() {
        let m =
            crate::platform::caches::profile::parse("name: t\nL1: 32K\nL2: 1M\nL3: 32M\n").unwrap();
        let (sizes, notices) = plan(&m, Some(64 << 30));
        let got: Vec<(&str, u64)> = sizes.iter().map(|s| (s.level.as_str(), s.size)).collect();
        assert_eq!(
            got,
            [
                ("L1", 16 << 10),
                ("L2", 512 << 10),
                ("L3", 16 << 20),
                ("memory", 256 << 20)
            ]
        );
        assert!(notices.is_empty());
        let (sizes, notices) = plan(&m, Some(100 << 20));
        assert_eq!(sizes[3].size, 50 << 20);
        assert!(notices[0].contains("more than half the available memory"));
    }

    #[test]
    fn no_caches_no_levels() {
        let m = Machine {
            name: "x".into(),
            line_bytes: 64,
            caches: Vec::new(),
            source: crate::platform::caches::Source::Sysfs,
        };
        assert!(plan(&m, None).0.is_empty());
    }
}
