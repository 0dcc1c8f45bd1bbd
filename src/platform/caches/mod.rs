//! What the system claims about its caches (sysfs). memlat uses these claims to
//! choose default sizes and to show beside what it measured, never as a result.

pub mod profile;

pub use profile::{Machine, Source};

use serde::{Deserialize, Serialize};

/// What a cache holds; serialised as `data`, `instruction` or `unified`
/// (sysfs's and memlat 0.1.0's `Data`, `Instruction`, `Unified` read too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheKind {
    /// Data only (an L1d).
    #[serde(alias = "Data")]
    Data,
    /// Instructions only (an L1i): loads never go through it.
    #[serde(alias = "Instruction")]
    Instruction,
    /// Data and instructions.
    #[serde(alias = "Unified")]
    Unified,
}

impl CacheKind {
    /// Parses sysfs's `type` file (`Data`, `Instruction`, `Unified`); anything else is unified.
    pub fn from_sysfs(text: &str) -> CacheKind {
        match text.trim() {
            "Data" => CacheKind::Data,
            "Instruction" => CacheKind::Instruction,
            _ => CacheKind::Unified,
        }
    }
}

/// One cache as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheInfo {
    /// 1, 2, 3...
    pub level: u32,
    /// Data, instruction or unified.
    pub kind: CacheKind,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Line size in bytes (`coherency_line_size`).
    pub line_bytes: Option<u64>,
    /// Ways of associativity, when reported.
    pub ways: Option<u64>,
}

impl CacheInfo {
    /// `L1d`, `L2`... as lscpu names them.
    pub fn name(&self) -> String {
        match self.kind {
            CacheKind::Data => format!("L{}d", self.level),
            CacheKind::Instruction => format!("L{}i", self.level),
            CacheKind::Unified => format!("L{}", self.level),
        }
    }

    /// A cache that holds data at `level`: a data cache for L1, unified
    /// deeper, as a profile or a fallback describes one.
    pub fn holding_data(
        level: u32,
        size_bytes: u64,
        line_bytes: Option<u64>,
        ways: Option<u64>,
    ) -> CacheInfo {
        CacheInfo {
            level,
            kind: if level == 1 {
                CacheKind::Data
            } else {
                CacheKind::Unified
            },
            size_bytes,
            line_bytes,
            ways,
        }
    }

    /// A test cache: L1 is `Data`, deeper levels `Unified`, 64-byte lines.
    #[cfg(test)]
    pub(crate) fn example(level: u32, size_bytes: u64) -> CacheInfo {
        CacheInfo::holding_data(level, size_bytes, Some(64), None)
    }

    /// Whether loads go through it (data or unified).
    pub fn holds_data(&self) -> bool {
        self.kind != CacheKind::Instruction
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Parses sysfs sizes such as `32K`, `1024K`, `32768K`, `2M`.
fn parse_sysfs_size(text: &str) -> Option<u64> {
    crate::units::parse_size(text).ok()
}

/// The caches of `cpu` from /sys/devices/system/cpu/cpuN/cache, data caches first by level.
pub fn caches(cpu: usize) -> Vec<CacheInfo> {
    let mut found = Vec::new();
    for index in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache/index{index}");
        if !std::path::Path::new(&dir).exists() {
            break;
        }
        // An index that cannot be read is skipped, not the end of the list.
        let Some(level) = read_trimmed(&format!("{dir}/level")).and_then(|l| l.parse().ok()) else {
            continue;
        };
        let Some(size_bytes) =
            read_trimmed(&format!("{dir}/size")).and_then(|s| parse_sysfs_size(&s))
        else {
            continue;
        };
        found.push(CacheInfo {
            level,
            kind: read_trimmed(&format!("{dir}/type"))
                .map_or(CacheKind::Unified, |t| CacheKind::from_sysfs(&t)),
            size_bytes,
            line_bytes: read_trimmed(&format!("{dir}/coherency_line_size"))
                .and_then(|s| s.parse().ok()),
            ways: read_trimmed(&format!("{dir}/ways_of_associativity"))
                .and_then(|s| s.parse().ok()),
        });
    }
    found.sort_by_key(|c| (c.level, c.kind != CacheKind::Data));
    found
}

/// The data (or unified) caches only, one per level, smallest level first.
pub fn data_caches(cpu: usize) -> Vec<CacheInfo> {
    caches(cpu)
        .into_iter()
        .filter(CacheInfo::holds_data)
        .collect()
}

/// The L1 data cache line size from sysfs, else 64.
pub fn l1_line_bytes(cpu: usize) -> u64 {
    data_caches(cpu)
        .first()
        .and_then(|c| c.line_bytes)
        .filter(|&l| l.is_power_of_two() && l >= 8)
        .unwrap_or(64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes_parse() {
        assert_eq!(parse_sysfs_size("32K"), Some(32 * 1024));
        assert_eq!(parse_sysfs_size("32768K"), Some(32 << 20));
        assert_eq!(parse_sysfs_size("2M"), Some(2 << 20));
    }

    #[test]
    fn cache_kinds_read_old_and_new_spellings() {
        for (text, kind) in [
            ("\"Data\"", CacheKind::Data),
            ("\"data\"", CacheKind::Data),
            ("\"Instruction\"", CacheKind::Instruction),
            ("\"unified\"", CacheKind::Unified),
        ] {
            assert_eq!(serde_json::from_str::<CacheKind>(text).unwrap(), kind);
        }
        assert_eq!(serde_json::to_string(&CacheKind::Data).unwrap(), "\"data\"");
        assert_eq!(CacheKind::from_sysfs("Data\n"), CacheKind::Data);
    }

    #[test]
    fn data_caches_are_ordered_and_named() {
        let caches = data_caches(0);
        for pair in caches.windows(2) {
            assert!(pair[0].level <= pair[1].level);
        }
        if let Some(first) = caches.first() {
            assert!(first.name().starts_with("L1"));
        }
        let line = l1_line_bytes(0);
        assert!(line.is_power_of_two() && line >= 8);
    }
}
