//! A machine's cache hierarchy as claimed by sysfs, by CPUID, or by a profile
//! file (`--machine FILE`, in the spirit of seed 002's `stats_{name}.txt`).
//!
//! These claims choose sizes and strides and are shown beside measurements;
//! they are never reported as measured.
//!
//! The profile format, one `key: value` a line, `#` starts a comment:
//!
//! ```text
//! # memlat machine profile
//! name: zen4-vm          # used in results_{name}.csv
//! line_size: 64          # bytes (optional, default 64)
//! L1: 32K                # data cache of each level, K/M/G are powers of 1024
//! L1_ways: 8             # optional: ways of associativity
//! L2: 1M
//! L2_ways: 8
//! L3: 32M
//! L3_ways: 16
//! ```
//!
//! Levels must run from L1 without gaps; the last one listed is the LLC.

use std::path::Path;

use serde::Serialize;

use crate::error::UsageError;
use crate::platform::caches::{self, CacheInfo};
use crate::units::parse_size;

/// Where a hierarchy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// /sys/devices/system/cpu/cpuN/cache.
    Sysfs,
    /// A `--machine` profile file.
    Profile,
}

/// The caches of one machine, smallest level first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Machine {
    /// The machine's name (profile `name:`, else the host name).
    pub name: String,
    /// Line size in bytes.
    pub line_bytes: u64,
    /// Data (or unified) caches, one per level, L1 first.
    pub caches: Vec<CacheInfo>,
    /// Where these claims come from.
    pub source: Source,
}

impl Machine {
    /// The last-level cache, if any level is known.
    pub fn llc(&self) -> Option<&CacheInfo> {
        self.caches.last()
    }

    /// The hierarchy sysfs claims for `cpu`.
    pub fn from_sysfs(cpu: usize) -> Machine {
        Machine {
            name: host_name(),
            line_bytes: caches::l1_line_bytes(cpu),
            caches: caches::data_caches(cpu),
            source: Source::Sysfs,
        }
    }

    /// Reads a profile file; errors name the `--machine` flag and the line.
    pub fn load(path: &Path) -> Result<Machine, UsageError> {
        let text =
            crate::input::read_text(path).map_err(|e| UsageError(format!("--machine {e}")))?;
        parse(&text).map_err(|e| UsageError(format!("--machine {}: {e}", path.display())))
    }
}

/// The host name from /proc, else `localhost`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Parses a profile (see the module documentation).
pub fn parse(text: &str) -> Result<Machine, String> {
    let mut fields = Fields::default();
    // An editor's UTF-8 byte-order mark is not part of the first key.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (number, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if !line.is_empty() {
            fields
                .read(line)
                .map_err(|msg| format!("line {}: {msg}", number + 1))?;
        }
    }
    fields.sizes.sort();
    check_levels(&fields.sizes, &fields.ways)?;
    let line = fields.line_bytes.unwrap_or(64);
    let caches = fields
        .sizes
        .iter()
        .map(|&(level, size_bytes)| {
            let ways = fields
                .ways
                .iter()
                .find(|(l, _)| *l == level)
                .map(|&(_, w)| w);
            CacheInfo::holding_data(level, size_bytes, Some(line), ways)
        })
        .collect();
    Ok(Machine {
        name: fields.name.unwrap_or_else(host_name),
        line_bytes: line,
        caches,
        source: Source::Profile,
    })
}

/// What a profile's lines say, as read so far.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    line_bytes: Option<u64>,
    /// (level, capacity bytes).
    sizes: Vec<(u32, u64)>,
    /// (level, ways).
    ways: Vec<(u32, u64)>,
}

impl Fields {
    /// Reads one `key: value` line (comments and blanks already removed).
    fn read(&mut self, line: &str) -> Result<(), String> {
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("'{line}' is not 'key: value'"))?;
        let (key, value) = (key.trim(), value.trim());
        let lower = key.to_ascii_lowercase();
        match lower.as_str() {
            "name" => {
                let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
                if value.is_empty() || !value.chars().all(allowed) {
                    return Err(format!(
                        "name: '{value}' must be letters, digits, '-', '_' or '.' (it names the results file)"
                    ));
                }
                self.name = Some(value.to_string());
            }
            "line_size" | "line" => {
                let v = parse_size(value).map_err(|e| e.to_string())?;
                if v < 8 || !v.is_power_of_two() {
                    return Err(format!(
                        "line_size: {v} is not a power of two of at least 8"
                    ));
                }
                self.line_bytes = Some(v);
            }
            _ => self.read_level(key, &lower, value)?,
        }
        Ok(())
    }

    /// Reads `L<n>` / `L<n>_size` (a capacity) or `L<n>_ways`.
    fn read_level(&mut self, key: &str, lower: &str, value: &str) -> Result<(), String> {
        let Some(rest) = lower.strip_prefix('l') else {
            return Err(format!(
                "unknown key '{key}' (expected name, line_size, L<n> or L<n>_ways)"
            ));
        };
        let (digits, field) = rest.split_once('_').unwrap_or((rest, ""));
        let level: u32 = digits
            .parse()
            .ok()
            .filter(|&l| (1..=8).contains(&l))
            .ok_or_else(|| format!("unknown key '{key}'"))?;
        let (target, v, bound) = match field {
            "" | "size" => {
                let v = parse_size(value).map_err(|e| e.to_string())?;
                let bound = crate::limits::size(v, crate::limits::Origin::Setting("size"));
                (&mut self.sizes, v, bound)
            }
            "ways" => {
                let v = value
                    .parse::<u64>()
                    .ok()
                    .filter(|&v| v > 0)
                    .ok_or_else(|| format!("{key}: '{value}' is not a positive whole number"))?;
                let bound = crate::limits::ways(v, crate::limits::Origin::Setting("ways"));
                (&mut self.ways, v, bound)
            }
            _ => return Err(format!("unknown key '{key}'")),
        };
        bound.map_err(|e| format!("{key}: {}", e.why))?;
        if target.iter().any(|&(l, _)| l == level) {
            return Err(format!("{key} given twice"));
        }
        target.push((level, v));
        Ok(())
    }
}

/// Levels must run L1, L2, ... without gaps, each larger than the one before,
/// and ways only for levels given.
fn check_levels(sizes: &[(u32, u64)], ways: &[(u32, u64)]) -> Result<(), String> {
    if sizes.is_empty() {
        return Err("no cache levels (add lines such as 'L1: 32K')".into());
    }
    for (i, &(level, _)) in sizes.iter().enumerate() {
        if level != i as u32 + 1 {
            return Err(format!(
                "levels must run L1, L2, ... without gaps; L{} is missing",
                i + 1
            ));
        }
    }
    for pair in sizes.windows(2) {
        let ((a, sa), (b, sb)) = (pair[0], pair[1]);
        if sb <= sa {
            return Err(format!(
                "L{b} ({}) is not larger than L{a} ({}): each level must hold more than the one before",
                crate::units::HumanBytes(sb),
                crate::units::HumanBytes(sa)
            ));
        }
    }
    if let Some(&(level, _)) = ways
        .iter()
        .find(|(l, _)| !sizes.iter().any(|(s, _)| s == l))
    {
        return Err(format!("L{level}_ways given without L{level}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_that_cannot_describe_a_machine_are_refused() {
        assert!(
            parse("L1: 32K\nL2: 16K\n")
                .unwrap_err()
                .contains("not larger than L1")
        );
        assert!(
            parse("L1: 32K\nL1_ways: 18446744073709551615\n")
                .unwrap_err()
                .contains("ways")
        );
        assert!(parse("L1: 0\n").is_err());
        let bom = parse("\u{feff}name: t\nL1: 32K\n").unwrap();
        assert_eq!(bom.name, "t");
    }

    #[test]
    fn parses_the_documented_example() {
        let text = "# a profile\nname: zen4-vm\nline_size: 64\nL1: 32K  # data\nL1_ways: 8\nL2: 1M\nl2_ways: 8\nL3_size: 32M\n";
        let m = parse(text).unwrap();
        assert_eq!(m.name, "zen4-vm");
        assert_eq!(m.line_bytes, 64);
        assert_eq!(m.source, Source::Profile);
        let sizes: Vec<u64> = m.caches.iter().map(|c| c.size_bytes).collect();
        assert_eq!(sizes, [32 << 10, 1 << 20, 32 << 20]);
        assert_eq!(m.caches[0].name(), "L1d");
        assert_eq!(m.caches[1].ways, Some(8));
        assert_eq!(m.caches[2].ways, None);
        assert_eq!(m.llc().unwrap().level, 3);
    }

    #[test]
    fn the_shipped_example_parses() {
        let text = include_str!("../../../examples/machine-zen4-vm.txt");
        let m = parse(text).unwrap();
        assert_eq!(m.caches.len(), 3);
    }

    #[test]
    fn bad_profiles_say_which_line_and_why() {
        for (text, wanted) in [
            ("L1 32K", "line 1: 'L1 32K' is not 'key: value'"),
            ("L1: 32K\ncolour: blue", "line 2: unknown key 'colour'"),
            ("L1: lots", "line 1: 'lots' is not a size"),
            ("L1: 32K\nL3: 8M", "L2 is missing"),
            ("name: a b\nL1: 1K", "line 1: name"),
            ("L1: 32K\nL1: 48K", "line 2: L1 given twice"),
            ("L1: 32K\nL1_ways: 0", "line 2: L1_ways: '0'"),
            ("L1: 32K\nL2_ways: 4", "L2_ways given without L2"),
            ("line_size: 48\nL1: 32K", "not a power of two"),
            ("name: x", "no cache levels"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(wanted), "{text:?}: {err}");
        }
    }

    #[test]
    fn missing_file_names_the_flag() {
        let err = Machine::load(Path::new("/nonexistent/profile.txt")).unwrap_err();
        assert!(err.0.starts_with("--machine /nonexistent/profile.txt"));
    }
}
