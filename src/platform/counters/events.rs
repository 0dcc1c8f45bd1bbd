//! perf's event names and what they mean to the kernel (type, config).

use serde::{Deserialize, Serialize};

/// perf_event_attr.type values.
pub(crate) const TYPE_HARDWARE: u32 = 0;
pub(crate) const TYPE_SOFTWARE: u32 = 1;
pub(crate) const TYPE_HW_CACHE: u32 = 3;
pub(crate) const TYPE_RAW: u32 = 4;

/// One event to count: the name the user wrote and the kernel's encoding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSpec {
    /// The name as perf spells it (`cycles`, `L1-dcache-load-misses`, `r01c4`).
    pub name: String,
    /// perf_event_attr.type.
    pub kind: u32,
    /// perf_event_attr.config.
    pub config: u64,
}

impl EventSpec {
    /// Whether the kernel counts it in software (works without a PMU).
    pub fn is_software(&self) -> bool {
        self.kind == TYPE_SOFTWARE
    }

    /// Whether it counts time (cpu-clock, task-clock): over a run of
    /// milliseconds it cannot count zero.
    pub fn counts_time(&self) -> bool {
        self.kind == TYPE_SOFTWARE && self.config <= 1
    }
}

/// An event name memlat does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown event '{0}' in -e/--events: run `memlat events` for the names this machine can count, or give a raw event as rXXXX (hex)"
)]
pub struct UnknownEvent(pub String);

const HARDWARE: &[(&str, u64)] = &[
    ("cycles", 0),
    ("cpu-cycles", 0),
    ("instructions", 1),
    ("cache-references", 2),
    ("cache-misses", 3),
    ("branches", 4),
    ("branch-instructions", 4),
    ("branch-misses", 5),
    ("bus-cycles", 6),
    ("stalled-cycles-frontend", 7),
    ("stalled-cycles-backend", 8),
    ("ref-cycles", 9),
];

const SOFTWARE: &[(&str, u64)] = &[
    ("cpu-clock", 0),
    ("task-clock", 1),
    ("page-faults", 2),
    ("faults", 2),
    ("context-switches", 3),
    ("cs", 3),
    ("cpu-migrations", 4),
    ("migrations", 4),
    ("minor-faults", 5),
    ("major-faults", 6),
    ("alignment-faults", 7),
    ("emulation-faults", 8),
];

/// Cache names as perf prints them, with PERF_COUNT_HW_CACHE_* ids.
const CACHES: &[(&str, u64)] = &[
    ("L1-dcache", 0),
    ("L1-icache", 1),
    ("LLC", 2),
    ("dTLB", 3),
    ("iTLB", 4),
    ("branch", 5),
    ("node", 6),
];

/// Operation and result suffixes: (suffix, op, result).
const CACHE_OPS: &[(&str, u64, u64)] = &[
    ("loads", 0, 0),
    ("load-misses", 0, 1),
    ("stores", 1, 0),
    ("store-misses", 1, 1),
    ("prefetches", 2, 0),
    ("prefetch-misses", 2, 1),
];

/// The events `memlat events` tries, in the order it lists them.
pub const LISTED: &[&str] = &[
    "cycles",
    "instructions",
    "branches",
    "branch-misses",
    "cache-references",
    "cache-misses",
    "L1-dcache-loads",
    "L1-dcache-load-misses",
    "LLC-loads",
    "LLC-load-misses",
    "dTLB-loads",
    "dTLB-load-misses",
    "task-clock",
    "page-faults",
    "context-switches",
    "cpu-migrations",
];

/// Looks up one event by perf's name, or `rXXXX` for a raw PMU event.
pub fn parse_event(name: &str) -> Result<EventSpec, UnknownEvent> {
    let unknown = || UnknownEvent(name.to_string());
    let spec = |kind, config| EventSpec {
        name: name.to_string(),
        kind,
        config,
    };
    if let Some(&(_, config)) = HARDWARE.iter().find(|(n, _)| *n == name) {
        return Ok(spec(TYPE_HARDWARE, config));
    }
    if let Some(&(_, config)) = SOFTWARE.iter().find(|(n, _)| *n == name) {
        return Ok(spec(TYPE_SOFTWARE, config));
    }
    if let Some(hex) = name.strip_prefix('r') {
        if !hex.is_empty()
            && hex.len() <= 16
            && let Ok(config) = u64::from_str_radix(hex, 16)
        {
            return Ok(spec(TYPE_RAW, config));
        }
        return Err(unknown());
    }
    for &(cache, id) in CACHES {
        let Some(rest) = name.strip_prefix(cache).and_then(|r| r.strip_prefix('-')) else {
            continue;
        };
        if let Some(&(_, op, result)) = CACHE_OPS.iter().find(|(s, _, _)| *s == rest) {
            return Ok(spec(TYPE_HW_CACHE, id | (op << 8) | (result << 16)));
        }
    }
    Err(unknown())
}

/// Parses a comma-separated list (`-e cycles,L1-dcache-load-misses`), dropping duplicates.
pub fn parse_event_list(list: &str) -> Result<Vec<EventSpec>, UnknownEvent> {
    let mut specs: Vec<EventSpec> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let spec = parse_event(name)?;
        // Seed 001 added an event twice; a duplicate here is silently merged.
        if !specs.iter().any(|s| s.name == spec.name) {
            specs.push(spec);
        }
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_perf_encodings() {
        let e = parse_event("cycles").unwrap();
        assert_eq!((e.kind, e.config), (TYPE_HARDWARE, 0));
        let e = parse_event("task-clock").unwrap();
        assert_eq!((e.kind, e.config), (TYPE_SOFTWARE, 1));
        let e = parse_event("L1-dcache-load-misses").unwrap();
        assert_eq!((e.kind, e.config), (TYPE_HW_CACHE, 1 << 16));
        let e = parse_event("LLC-loads").unwrap();
        assert_eq!((e.kind, e.config), (TYPE_HW_CACHE, 2));
        let e = parse_event("dTLB-load-misses").unwrap();
        assert_eq!((e.kind, e.config), (TYPE_HW_CACHE, 3 | (1 << 16)));
        let e = parse_event("r01c4").unwrap();
        assert_eq!((e.kind, e.config), (TYPE_RAW, 0x01c4));
    }

    #[test]
    fn every_listed_event_parses() {
        for name in LISTED {
            assert!(parse_event(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn unknown_names_are_errors_that_name_the_flag() {
        for bad in ["cycels", "r", "rxyz", "L1-dcache", "L1-dcache-bogus", ""] {
            let err = parse_event(bad).unwrap_err();
            assert!(err.to_string().contains("--events"), "{err}");
        }
    }

    #[test]
    fn lists_split_on_commas_and_merge_duplicates() {
        let specs = parse_event_list("cycles, task-clock,cycles").unwrap();
        let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["cycles", "task-clock"]);
        assert!(parse_event_list("cycles,nope").is_err());
    }
}
