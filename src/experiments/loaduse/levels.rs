//! What `--level` and `--nops` name, and the working sets they resolve to.
//!
//! As in seed 003, a cache level's working set is 3/4 of the cache sysfs
//! lists (room for the kernel's own data, interrupt handlers and the stack),
//! and DRAM's is memory by the one rule of [`crate::experiments::memory`]
//! (4x the last level, 256 MiB to 1 GiB, as every command's), so almost
//! every load misses every cache.

use std::fmt;

use crate::error::UsageError;
use crate::experiments::plateaus::MeasuredLevels;
use crate::platform::caches::CacheInfo;
use crate::units::{HumanBytes, parse_size};

use crate::kernels::load_use::MAX_NOPS;

/// DRAM's working set is at least this large, however small the caches
/// (the one memory rule's floor).
pub const MIN_DRAM_SIZE: u64 = crate::experiments::memory::FLOOR;

/// A data source as `--level` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelChoice {
    /// 3/4 of the data (or unified) cache of this level.
    Cache(u32),
    /// Memory, at the one rule's size ([`crate::experiments::memory`]).
    Dram,
    /// A working set of this many bytes.
    Size(u64),
}

impl fmt::Display for LevelChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LevelChoice::Cache(level) => write!(f, "l{level}"),
            LevelChoice::Dram => write!(f, "dram"),
            LevelChoice::Size(bytes) => write!(f, "{}", HumanBytes(*bytes)),
        }
    }
}

/// Parses `l1`, `l2`, `l3`, `l4`, `dram` (or `ram`, `mem`) or a size such as `48K`.
pub fn parse_level(text: &str) -> Result<LevelChoice, String> {
    let lower = text.trim().to_ascii_lowercase();
    match lower.as_str() {
        "dram" | "ram" | "mem" | "memory" => return Ok(LevelChoice::Dram),
        "l1d" => return Ok(LevelChoice::Cache(1)),
        _ => {}
    }
    if let Some(level) = lower.strip_prefix('l')
        && let Ok(level) = level.parse::<u32>()
    {
        return if (1..=4).contains(&level) {
            Ok(LevelChoice::Cache(level))
        } else {
            Err(format!(
                "there is no cache level {level}: use l1, l2, l3, l4, dram or a size such as 48K"
            ))
        };
    }
    match parse_size(&lower) {
        Ok(bytes) if bytes > 0 => Ok(LevelChoice::Size(bytes)),
        _ => Err("use l1, l2, l3, l4, dram or a working-set size such as 48K or 64M".into()),
    }
}

/// An inclusive range of NOP counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NopRange {
    /// Fewest NOPs.
    pub from: u32,
    /// Most NOPs (included).
    pub to: u32,
}

impl NopRange {
    /// Every N of the range, in order.
    pub fn values(&self) -> Vec<u32> {
        (self.from..=self.to).collect()
    }
}

impl fmt::Display for NopRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.from, self.to)
    }
}

/// Parses `A..B` (both included; `A..=B` too) or a single `N`.
pub fn parse_nops(text: &str) -> Result<NopRange, String> {
    let number = |s: &str| {
        s.trim().parse::<u32>().map_err(|_| {
            format!(
                "'{}' is not a number of NOPs: write A..B, e.g. 0..32",
                s.trim()
            )
        })
    };
    let (from, to) = match text.split_once("..") {
        Some((a, b)) => (number(a)?, number(b.strip_prefix('=').unwrap_or(b))?),
        None => {
            let n = number(text)?;
            (n, n)
        }
    };
    if from > to {
        return Err(format!(
            "the range {from}..{to} is empty: write the smaller count first, e.g. {to}..{from}"
        ));
    }
    if to > MAX_NOPS {
        return Err(format!(
            "at most {MAX_NOPS} NOPs: memlat compiles one kernel per N from 0 to {MAX_NOPS}"
        ));
    }
    Ok(NopRange { from, to })
}

/// A working set to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelSpec {
    /// `L1d`, `L2`, `L3`, `DRAM`, or the size for `--level SIZE`.
    pub name: String,
    /// Buffer size in bytes.
    pub size: u64,
    /// Where the size comes from ("3/4 of L1d 32 KiB (sysfs)").
    pub basis: String,
}

/// The default data sources: seed 003's L1, L2 and main memory.
pub const DEFAULT_LEVELS: [LevelChoice; 3] = [
    LevelChoice::Cache(1),
    LevelChoice::Cache(2),
    LevelChoice::Dram,
];

/// Sizes when sysfs lists no caches (a 32 KiB L1 and a 1 MiB L2, 32 MiB last level).
const FALLBACK_CACHES: [(u32, u64); 3] = [(1, 32 << 10), (2, 1 << 20), (3, 32 << 20)];

/// Resolves `choices` (the defaults when empty): a cache level to the middle
/// of its `measured` plateau, or 3/4 of the data cache sysfs lists when that
/// level was not measured (said in a notice); DRAM to 4x the last level's
/// measured capacity (else sysfs's); `available` caps DRAM's size at a
/// quarter of it. Returns the working sets and notices for the reader.
pub fn resolve_measured(
    choices: &[LevelChoice],
    measured: Option<&MeasuredLevels>,
    caches: &[CacheInfo],
    line: u64,
    available: Option<u64>,
) -> Result<(Vec<LevelSpec>, Vec<String>), UsageError> {
    let (mut specs, mut notices) = resolve(choices, caches, line, available)?;
    let Some(measured) = measured else {
        return Ok((specs, notices));
    };
    let choices = if choices.is_empty() {
        &DEFAULT_LEVELS[..]
    } else {
        choices
    };
    for spec in &mut specs {
        let choice = choices.iter().find(|c| match c {
            LevelChoice::Cache(n) => spec.name.trim_end_matches('d') == format!("L{n}"),
            LevelChoice::Dram => spec.name == "DRAM",
            LevelChoice::Size(_) => false,
        });
        match choice {
            Some(LevelChoice::Cache(n)) => match measured.level(*n) {
                Some(p) => {
                    spec.size = p.middle(line);
                    spec.basis = format!(
                        "middle of the measured L{n} plateau {}..{}",
                        HumanBytes(p.from_bytes),
                        HumanBytes(p.to_bytes)
                    );
                }
                None => notices.push(format!(
                    "no L{n} plateau was measured: {} is {} instead",
                    spec.name, spec.basis
                )),
            },
            Some(LevelChoice::Dram) if measured.last_capacity().is_some() => {
                let memory = measured.memory(available, line);
                spec.size = memory.size;
                spec.basis = memory.basis;
                notices.extend(memory.notes);
            }
            _ => {}
        }
    }
    Ok((specs, notices))
}

/// Resolves `choices` (the defaults when empty) against the data caches sysfs
/// lists; `available` caps DRAM's size at a quarter of it. Returns the working
/// sets and notices for the reader.
pub fn resolve(
    choices: &[LevelChoice],
    caches: &[CacheInfo],
    line: u64,
    available: Option<u64>,
) -> Result<(Vec<LevelSpec>, Vec<String>), UsageError> {
    let mut notices = Vec::new();
    let defaults = choices.is_empty();
    let fallback: Vec<CacheInfo>;
    let caches = if caches.is_empty() {
        notices.push(
            "sysfs lists no caches for this CPU: assuming 32 KiB L1, 1 MiB L2, 32 MiB L3; give sizes with --level to be sure".into(),
        );
        fallback = FALLBACK_CACHES
            .iter()
            .map(|&(level, size_bytes)| CacheInfo::holding_data(level, size_bytes, Some(64), None))
            .collect();
        &fallback[..]
    } else {
        caches
    };
    let choices = if defaults {
        &DEFAULT_LEVELS[..]
    } else {
        choices
    };
    let mut levels = Vec::new();
    for choice in choices {
        let level = match *choice {
            LevelChoice::Cache(n) => match caches.iter().find(|c| c.level == n) {
                Some(cache) => LevelSpec {
                    name: cache.name(),
                    size: (cache.size_bytes * 3 / 4) / line * line,
                    basis: format!("3/4 of {} {}", cache.name(), HumanBytes(cache.size_bytes)),
                },
                None if defaults => {
                    notices.push(format!("sysfs lists no L{n} cache: skipping it"));
                    continue;
                }
                None => {
                    return Err(UsageError(format!(
                        "--level l{n}: sysfs lists no level-{n} data cache for this CPU; give a size instead, e.g. --level 192K"
                    )));
                }
            },
            LevelChoice::Dram => {
                let memory = crate::experiments::quick::claimed_memory(caches, available);
                let (size, basis) = (memory.size / line * line, memory.basis);
                notices.extend(
                    memory
                        .notes
                        .into_iter()
                        .map(|n| format!("--level dram: {n}")),
                );
                LevelSpec {
                    name: "DRAM".into(),
                    size,
                    basis,
                }
            }
            LevelChoice::Size(bytes) => {
                let size = bytes.div_ceil(8) * 8;
                if size < 2 * line {
                    return Err(UsageError(format!(
                        "--level {}: a chain needs at least two {line}-byte nodes, so at least {} (or a smaller --line)",
                        HumanBytes(bytes),
                        HumanBytes(2 * line)
                    )));
                }
                LevelSpec {
                    name: HumanBytes(size).to_string(),
                    size,
                    basis: "--level".into(),
                }
            }
        };
        levels.push(level);
    }
    if levels.is_empty() {
        return Err(UsageError("--level: nothing to measure".into()));
    }
    Ok((levels, notices))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(level: u32, size: u64) -> CacheInfo {
        CacheInfo::example(level, size)
    }

    #[test]
    fn levels_parse() {
        assert_eq!(parse_level("l1"), Ok(LevelChoice::Cache(1)));
        assert_eq!(parse_level("L2"), Ok(LevelChoice::Cache(2)));
        assert_eq!(parse_level("dram"), Ok(LevelChoice::Dram));
        assert_eq!(parse_level("48K"), Ok(LevelChoice::Size(48 << 10)));
        assert!(parse_level("l9").unwrap_err().contains("no cache level 9"));
        assert!(parse_level("fast").is_err());
        assert!(parse_level("0").is_err());
    }

    #[test]
    fn nop_ranges_parse() {
        assert_eq!(parse_nops("0..32"), Ok(NopRange { from: 0, to: 32 }));
        assert_eq!(parse_nops("3..=5"), Ok(NopRange { from: 3, to: 5 }));
        assert_eq!(parse_nops("7"), Ok(NopRange { from: 7, to: 7 }));
        assert_eq!(parse_nops("2..4").unwrap().values(), vec![2, 3, 4]);
        assert!(parse_nops("5..2").unwrap_err().contains("empty"));
        assert!(parse_nops("0..129").unwrap_err().contains("at most 128"));
        assert!(parse_nops("a..3").is_err());
    }

    #[test]
    fn defaults_are_three_quarters_of_l1_and_l2_and_4x_the_last_level() {
        let caches = [cache(1, 32 << 10), cache(2, 1 << 20), cache(3, 32 << 20)];
        let (levels, notices) = resolve(&[], &caches, 64, Some(64 << 30)).unwrap();
        let sizes: Vec<u64> = levels.iter().map(|l| l.size).collect();
        // DRAM by the one memory rule: 4x 32 MiB, at least 256 MiB.
        assert_eq!(sizes, vec![24 << 10, 768 << 10, 256 << 20]);
        assert_eq!(levels[0].name, "L1d");
        assert_eq!(levels[2].name, "DRAM");
        // Only a machine without huge pages hears of page walks.
        assert!(
            notices.iter().all(|n| n.contains("page walks")),
            "{notices:?}"
        );
        // Seed 003's machine: 16 KiB L1 (its 12288-byte working set), 256 KiB L2.
        let seed = [cache(1, 16 << 10), cache(2, 256 << 10)];
        let (levels, _) = resolve(&[], &seed, 32, None).unwrap();
        assert_eq!(levels[0].size, 12288);
        assert_eq!(levels[1].size, 196608);
        assert_eq!(levels[2].size, MIN_DRAM_SIZE);
    }

    #[test]
    fn named_levels_and_sizes_resolve_or_say_which_flag() {
        let caches = [cache(1, 48 << 10), cache(2, 2 << 20)];
        let (levels, _) = resolve(
            &[LevelChoice::Size(1001), LevelChoice::Cache(2)],
            &caches,
            64,
            None,
        )
        .unwrap();
        assert_eq!(levels[0].size, 1008);
        assert_eq!(levels[1].size, 1536 << 10);
        let err = resolve(&[LevelChoice::Cache(3)], &caches, 64, None).unwrap_err();
        assert!(err.0.starts_with("--level l3"));
        let err = resolve(&[LevelChoice::Size(64)], &caches, 64, None).unwrap_err();
        assert!(err.0.starts_with("--level 64 B"));
        // DRAM never asks for more than a quarter of available memory.
        let (levels, notices) = resolve(&[LevelChoice::Dram], &caches, 64, Some(8 << 20)).unwrap();
        assert_eq!(levels[0].size, 2 << 20);
        assert!(notices[0].contains("--level dram"));
    }

    #[test]
    fn measured_plateaus_place_cache_levels_and_dram() {
        use crate::experiments::plateaus::Plateau;
        let caches = [cache(1, 32 << 10), cache(2, 512 << 10), cache(3, 32 << 20)];
        let measured = MeasuredLevels {
            source: "probe".into(),
            file: None,
            measured: "now".into(),
            levels: vec![Plateau {
                name: "L2".into(),
                from_bytes: 64 << 10,
                to_bytes: 256 << 10,
                ns: 4.0,
                capacity_bytes: Some(4 << 20),
                capacity_bounds: None,
            }],
            memory_ns: None,
        };
        let (levels, notices) =
            resolve_measured(&[], Some(&measured), &caches, 64, Some(64 << 30)).unwrap();
        // L1 was not measured: sysfs's 3/4, said in a notice.
        assert_eq!(levels[0].size, 24 << 10);
        assert!(notices[0].contains("no L1 plateau"), "{notices:?}");
        // L2 in the middle of its plateau, not in the 384 KiB ramp.
        assert_eq!(levels[1].size, 128 << 10);
        assert!(levels[1].basis.contains("measured L2 plateau"));
        // DRAM: 4x the measured 4 MiB, at least 256 MiB (the one rule).
        assert_eq!(levels[2].size, 256 << 20);
        assert!(
            levels[2].basis.contains("measured L2"),
            "{}",
            levels[2].basis
        );
    }
}
