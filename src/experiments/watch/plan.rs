//! What `memlat watch` measures each interval: one size in the middle of
//! each measured plateau, memory, and a few probe sizes across the last
//! cache level's edge. Pure: tested with made-up plateaus and bounds.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::experiments::plateaus::{LevelSize, MeasuredLevels, Plateau};

/// Probe sizes across the shared level's edge: enough to bracket it to a
/// ratio of about (hi/lo)^(1/3) between the bounds, few enough that their
/// warm walks (two whole cycles of each chain where the budget allows) fit
/// the duty cycle.
pub const EDGE_PROBES: usize = 4;

/// The default share of each interval spent measuring.
pub const DEFAULT_DUTY: f64 = 0.1;

/// Where the edge of the last cache level is tracked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EdgePlan {
    /// The level (`L3`, or the last one measured).
    pub level: String,
    /// Probe sizes, ascending, bytes.
    pub sizes: Vec<u64>,
    /// What the sizes span: `capacity_bounds`, or `plateau to 2x capacity`
    /// when the sweep recorded no bounds.
    pub between: String,
}

/// The whole plan of a watch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchPlan {
    /// One size per level: cache plateaus' middles, then memory.
    pub levels: Vec<LevelSize>,
    /// The edge probes, when a cache level was measured.
    pub edge: Option<EdgePlan>,
    /// Seconds between the starts of two intervals.
    pub interval_s: f64,
    /// How long to watch, seconds; `None`: until stopped.
    pub duration_s: Option<f64>,
    /// The share of each interval spent measuring, at most.
    pub duty: f64,
}

impl WatchPlan {
    /// The plan for `levels` (sizes rounded to `line`), memory at most a
    /// quarter of `available`.
    pub fn new(
        levels: &MeasuredLevels,
        line: u64,
        available: Option<u64>,
        interval: Duration,
        duration: Option<Duration>,
        duty: f64,
    ) -> WatchPlan {
        WatchPlan {
            levels: levels.sizes(line, available),
            edge: levels.levels.last().map(|p| edge_plan(p, line)),
            interval_s: interval.as_secs_f64(),
            duration_s: duration.map(|d| d.as_secs_f64()),
            duty,
        }
    }

    /// Every size measured each interval, labelled, in the order measured:
    /// the levels from L1, the edge probes ascending, the edge's miss probe
    /// ([`miss_probe`]), memory last (its walk evicts everything, and the
    /// next interval starts small).
    pub fn probes(&self) -> Vec<LevelSize> {
        let (memory, caches): (Vec<&LevelSize>, Vec<&LevelSize>) =
            self.levels.iter().partition(|l| l.name == "memory");
        let edge = self.edge.iter().flat_map(|e| {
            e.sizes.iter().map(move |&size| LevelSize {
                name: format!("{} edge", e.level),
                size,
            })
        });
        let miss = self.miss_probe().map(|(level, _)| level);
        caches
            .into_iter()
            .cloned()
            .chain(edge)
            .chain(miss)
            .chain(memory.into_iter().cloned())
            .collect()
    }

    /// The probe that reads what a miss costs the edge probes, and the
    /// region its walk stays in: a chain as large as memory's, its lines
    /// visited a region of the largest edge probe's size at a time (random
    /// within it, `Chain::page_random` with that region for a page). Each
    /// interval's short walk goes on where the last left it, so its timed
    /// lines were last walked a whole cycle of memory's size before, as the
    /// memory probe's were (certain misses, whatever the level holds and
    /// however it replaces), while the pages and DRAM rows under its window
    /// span the edge probes' footprint, not memory's. That footprint costs
    /// less: on the Zen 5 guest a C chase read a 16 MiB region whose lines
    /// were flushed at 143-146 ns, 64 MiB at 157-158 and 256 MiB at 176-181
    /// (first quartile and median of 40 interleaved rounds each), and on
    /// the Zen 4 guest edge probes walked a tenth of a cycle read 130-155
    /// where memory's read 170-200: against memory's reading every missing
    /// probe looked a tenth to a quarter served. None without an edge or a
    /// memory level.
    pub fn miss_probe(&self) -> Option<(LevelSize, u64)> {
        let edge = self.edge.as_ref()?;
        let region = *edge.sizes.last()?;
        let memory = self.levels.iter().find(|l| l.name == "memory")?;
        let level = LevelSize {
            name: format!("{} miss", edge.level),
            size: memory.size,
        };
        Some((level, region))
    }
}

/// [`EDGE_PROBES`] sizes, log-spaced, from what the level surely serves to
/// what it surely does not: its `capacity_bounds` when the sweep recorded
/// them, else from the plateau's end to twice its capacity (the detector's
/// capacity is where the latency has left the plateau, so the edge lies
/// below it, and twice it is past any repeat's edge).
pub fn edge_plan(plateau: &Plateau, line: u64) -> EdgePlan {
    let bounds = plateau.capacity_bounds.unwrap_or_default();
    let capacity = plateau.capacity_bytes.unwrap_or(plateau.to_bytes * 2);
    let (lo, hi, between) = match (bounds.at_least_bytes, bounds.at_most_bytes) {
        (Some(lo), Some(hi)) if hi > lo => (lo, hi, "capacity_bounds".to_string()),
        (Some(lo), None) => (
            lo,
            (capacity * 2).max(lo * 2),
            "capacity_bounds' at_least to 2x capacity".to_string(),
        ),
        (None, Some(hi)) => (
            plateau.to_bytes.min(hi / 2),
            hi,
            "the plateau's end to capacity_bounds' at_most".to_string(),
        ),
        _ => (
            plateau.to_bytes,
            (capacity * 2).max(plateau.to_bytes * 2),
            "the plateau's end to 2x capacity (no capacity_bounds recorded)".to_string(),
        ),
    };
    let unit = line.max(8);
    let ratio = (hi as f64 / lo as f64).powf(1.0 / (EDGE_PROBES - 1) as f64);
    let mut sizes: Vec<u64> = (0..EDGE_PROBES)
        .map(|k| {
            let size = lo as f64 * ratio.powi(k as i32);
            ((size as u64) / unit).max(2) * unit
        })
        .collect();
    sizes.dedup();
    EdgePlan {
        level: plateau.name.clone(),
        sizes,
        between,
    }
}

/// The edge from one interval's readings, as `edge_bytes` records it:
/// where the probes' hit fraction `h = (M - ns) / (M - L)` falls through
/// 1/2, with `L` and `M` the same interval's level (`level_ns`, its
/// middle's probe) and memory (`memory_ns`); `None` below the smallest
/// probe or when the references do not hold. See [`super::edge`].
pub fn edge_bytes(sizes: &[u64], ns: &[f64], level_ns: f64, memory_ns: f64) -> Option<u64> {
    super::edge::edge_reading(sizes, ns, level_ns, memory_ns)?.edge_bytes()
}

/// The shortest interval: each one samples every level once, a few
/// milliseconds each, and prints a line.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// The duty cycle's range: below 1% a 1 s interval leaves under 10 ms for
/// six or more samples, each with its warm walk.
pub const DUTY_RANGE: std::ops::RangeInclusive<f64> = 0.01..=1.0;

/// Refuses an interval or duty cycle outside what a watch can keep to.
pub fn check(interval: Duration, duty: f64) -> Result<(), String> {
    if interval < MIN_INTERVAL {
        return Err(format!(
            "interval {interval:?}: at least 100ms (each interval samples every level once)"
        ));
    }
    if !DUTY_RANGE.contains(&duty) {
        return Err(format!(
            "duty {duty}: give a fraction of each interval from 0.01 to 1 (0.1 measures 10% of the time)"
        ));
    }
    Ok(())
}

/// Parses a duration: a number with `ms`, `s`, `m` or `h` (a bare number
/// is seconds), greater than zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?}: give a number with ms, s, m or h (e.g. 1s, 10m)"))?;
    let seconds = match unit.trim() {
        "ms" => value / 1e3,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?}; use ms, s, m or h"
            ));
        }
    };
    if !(seconds > 0.0 && seconds < 1e9) {
        return Err(format!("{text:?}: give a duration above zero"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::CapacityBounds;

    fn l3(bounds: Option<CapacityBounds>) -> Plateau {
        Plateau {
            name: "L3".into(),
            from_bytes: 2 << 20,
            to_bytes: 4 << 20,
            ns: 16.0,
            capacity_bytes: Some(6 << 20),
            capacity_bounds: bounds,
        }
    }

    #[test]
    fn probes_lie_between_the_bounds_when_there_are_some() {
        let plan = edge_plan(
            &l3(Some(CapacityBounds {
                at_least_bytes: Some(5 << 20),
                at_most_bytes: Some(40 << 20),
            })),
            64,
        );
        assert_eq!(plan.level, "L3");
        assert_eq!(plan.between, "capacity_bounds");
        assert_eq!(plan.sizes.len(), EDGE_PROBES);
        assert_eq!(plan.sizes[0], 5 << 20);
        assert_eq!(plan.sizes[3], 40 << 20);
        // Log-spaced: 5, 10, 20, 40 MiB.
        assert_eq!(plan.sizes[1], 10 << 20);
        assert!(plan.sizes.iter().all(|s| s % 64 == 0));
    }

    #[test]
    fn without_bounds_probes_go_from_the_plateau_to_twice_its_capacity() {
        let plan = edge_plan(&l3(None), 64);
        assert_eq!(plan.sizes[0], 4 << 20);
        assert_eq!(*plan.sizes.last().unwrap(), 12 << 20);
        assert!(plan.between.contains("no capacity_bounds"));
        // One bound only: the other side falls back.
        let lower = edge_plan(
            &l3(Some(CapacityBounds {
                at_least_bytes: Some(5 << 20),
                at_most_bytes: None,
            })),
            64,
        );
        assert_eq!(
            (lower.sizes[0], *lower.sizes.last().unwrap()),
            (5 << 20, 12 << 20)
        );
        let upper = edge_plan(
            &l3(Some(CapacityBounds {
                at_least_bytes: None,
                at_most_bytes: Some(6 << 20),
            })),
            64,
        );
        assert_eq!(
            (upper.sizes[0], *upper.sizes.last().unwrap()),
            (3 << 20, 6 << 20)
        );
    }

    #[test]
    fn the_edge_is_where_half_the_loads_stop_being_served() {
        let sizes = [4 << 20, 6 << 20, 9 << 20, 12 << 20];
        // L3 16 ns, memory 146 ns: 9 MiB at 31 ns is 88% hits, 12 MiB at
        // 112 ns 26%: the half lies between them, at 9 x (12/9)^(0.38/0.62).
        let edge = edge_bytes(&sizes, &[16.0, 20.0, 31.0, 112.0], 16.0, 146.0).unwrap();
        let (h9, h12) = ((146.0 - 31.0) / 130.0, (146.0 - 112.0) / 130.0);
        let expected = 9.0 * (12.0f64 / 9.0).powf((h9 - 0.5) / (h9 - h12));
        assert!((edge as f64 / 1048576.0 - expected).abs() < 1e-3, "{edge}");
        // Every probe served: the largest, at least.
        assert_eq!(
            edge_bytes(&sizes, &[16.0, 20.0, 16.0, 15.0], 16.0, 146.0),
            Some(12 << 20)
        );
        // The smallest served less than half: below it.
        assert_eq!(
            edge_bytes(&sizes, &[90.0, 146.0, 146.0, 146.0], 16.0, 146.0),
            None
        );
        assert_eq!(edge_bytes(&sizes, &[16.0; 4], f64::NAN, 146.0), None);
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("40"), Ok(Duration::from_secs(40)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("1d").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn probes_are_measured_small_to_large_memory_last() {
        let levels = MeasuredLevels {
            source: "probe".into(),
            file: None,
            measured: "now".into(),
            levels: vec![l3(None)],
            memory_ns: Some(146.0),
        };
        let plan = WatchPlan::new(
            &levels,
            64,
            Some(64 << 30),
            Duration::from_secs(1),
            None,
            DEFAULT_DUTY,
        );
        let names: Vec<String> = plan.probes().into_iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "L3", "L3 edge", "L3 edge", "L3 edge", "L3 edge", "L3 miss", "memory"
            ]
        );
    }
}
