//! Results side by side (`memlat compare`): the points that several result
//! files share, each difference as a ratio of medians with a 95% bootstrap
//! interval from the repeats, and the conditions that differ between the
//! runs, which explain most differences.
//!
//! Works on the JSON itself, so every result kind that holds measurements
//! (run, quick, sweep, levels, and merged files of them) compares alike: a
//! measurement is any object with `size`, `ns_per_load` (a summary with a
//! `median`) and `samples` (each with its `ns_per_load`).

use std::borrow::Borrow;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::analysis::stats::{self, RatioEstimate};
use crate::units::HumanBytes;

/// A difference below this (relative) is not called significant, whatever
/// its interval: repeats within one run agree to 1-2%, but two runs minutes
/// apart on a shared machine differ by up to about 5% (two sweeps on the
/// Intel guest: L1 points 1.35 against 1.42 ns), which the repeats of
/// either cannot show.
pub const NOISE: f64 = 0.05;

/// One measurement found in a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// `random 16 KiB`, `stride 64 1.5 MiB`, with a level name where the result has one.
    pub key: String,
    /// The key without the size: the line a plot draws it on.
    pub series: String,
    /// Buffer size, bytes.
    pub size: u64,
    /// Each repeat's ns per load.
    pub samples: Vec<f64>,
    /// The result's own median, ns.
    pub median: f64,
}

/// The series name of a measurement object: `stride 64`, `random`, `page-random`.
fn series(m: &Value) -> String {
    match m["pattern"].as_str() {
        Some("stride") => format!("stride {}", m["stride"].as_u64().unwrap_or(0)),
        Some(p) => p.to_string(),
        None => "point".into(),
    }
}

/// Every measurement in `value`, in document order; for a sweep, each
/// detected level first, its points' repeats pooled ([`levels`]).
pub fn measurements(value: &Value) -> Vec<Found> {
    let mut out = levels(value);
    collect(value, None, &mut out);
    out
}

/// One measurement as [`collect`] finds it in a result's JSON: of the
/// series `line` (`random`, `stride 64`), its repeats' ns per load (the
/// median alone where there are none).
pub fn point(line: String, size: u64, samples: Vec<f64>, median: f64) -> Found {
    Found {
        key: format!("{line} {}", HumanBytes(size)),
        series: line,
        size,
        samples: if samples.is_empty() {
            vec![median]
        } else {
            samples
        },
        median,
    }
}

/// A sweep's detected levels as measurements: the repeats of the random
/// series' points on each level's plateau (from past the previous level's
/// capacity, with a 20% margin, to the largest size within 10% of the
/// plateau; memory from twice the last capacity), pooled. Comparing levels
/// weighs many repeats, not one point's two or three.
pub fn levels(value: &Value) -> Vec<Found> {
    let levels = &value["detection"]["levels"];
    if !levels.is_array() {
        return Vec::new();
    }
    let random: Vec<(u64, Vec<f64>)> = value["points"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["pattern"] == "random")
        .filter_map(|m| {
            let samples = m["samples"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x["ns_per_load"].as_f64());
            Some((m["size"].as_u64()?, samples.collect()))
        })
        .collect();
    pooled(levels, &random)
}

/// [`levels`] of the detected `levels` (a JSON array) and the random
/// series' points, each its size and its repeats' ns per load.
pub fn pooled(levels: &Value, random: &[(u64, Vec<f64>)]) -> Vec<Found> {
    let Some(levels) = levels.as_array() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut lower = 0u64;
    for (k, level) in levels.iter().enumerate() {
        let name = level["name"].as_str().unwrap_or("?");
        let capacity = level["size_bytes"].as_u64();
        let upper = level["size_within_10pct_bytes"]
            .as_u64()
            .or(capacity)
            .unwrap_or(u64::MAX);
        let samples: Vec<f64> = random
            .iter()
            .filter(|(s, _)| *s > lower && *s <= upper)
            .flat_map(|(_, samples)| samples.iter().copied())
            .collect();
        if !samples.is_empty() {
            out.push(Found {
                key: format!("level {name}"),
                series: "levels".into(),
                size: upper.min(lower.max(1)),
                median: stats::median(&samples),
                samples,
            });
        }
        // The next level starts clear of this one's transition: 20% past its
        // capacity, or twice it before memory (transitions to memory are long).
        let next_is_memory = levels.get(k + 1).is_some_and(|n| n["size_bytes"].is_null());
        lower = match capacity {
            Some(c) if next_is_memory => 2 * c,
            Some(c) => (c as f64 * 1.2) as u64,
            None => u64::MAX,
        };
    }
    out
}

/// The measurements in `value`, in document order, each labelled with
/// `label` (the name of the level it lies under) where there is one.
pub fn collect(value: &Value, label: Option<&str>, out: &mut Vec<Found>) {
    match value {
        Value::Object(map) => {
            if let (Some(size), Some(median)) = (
                map.get("size").and_then(Value::as_u64),
                value["ns_per_load"]["median"].as_f64(),
            ) {
                let samples: Vec<f64> = map
                    .get("samples")
                    .and_then(Value::as_array)
                    .map(|s| s.iter().filter_map(|x| x["ns_per_load"].as_f64()).collect())
                    .unwrap_or_default();
                let prefix = label.map_or(String::new(), |l| format!("{l} "));
                out.push(point(
                    format!("{prefix}{}", series(value)),
                    size,
                    samples,
                    median,
                ));
                return;
            }
            // A level's name labels the measurements under it (`memlat levels`).
            let name = map.get("name").and_then(Value::as_str).or(label);
            for (key, child) in map {
                if key != "detection" && key != "sysfs_caches" {
                    collect(child, name, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, label, out)),
        _ => {}
    }
}

/// One condition and its value in each result.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Condition {
    /// `cpu model`, `pages obtained`...
    pub what: String,
    /// One per result (`-` where the result does not say).
    pub values: Vec<String>,
    /// Whether the values differ.
    pub differs: bool,
}

/// The first measurement object in `value`, for conditions stated per point.
fn first_point(value: &Value) -> Option<&Value> {
    match value {
        Value::Object(map) if map.contains_key("ns_per_load") && map.contains_key("size") => {
            Some(value)
        }
        Value::Object(map) => map.values().find_map(first_point),
        Value::Array(items) => items.iter().find_map(first_point),
        _ => None,
    }
}

/// Reads one condition out of a result.
pub type Field = fn(&Value) -> Value;

/// The conditions of each result, differing ones first.
pub fn conditions<R: Borrow<Value>>(results: &[R]) -> Vec<Condition> {
    let fields: [(&str, Field); 10] = [
        ("cpu model", |r| r["host"]["cpu_model"].clone()),
        ("host", |r| r["host"]["hostname"].clone()),
        ("kernel", |r| r["host"]["kernel"].clone()),
        ("memlat version", |r| r["memlat_version"].clone()),
        ("kind", |r| r["kind"].clone()),
        ("pages obtained", |r| {
            first_point(r).map_or(Value::Null, |p| p["page_backing"]["obtained"].clone())
        }),
        ("prefetchers", |r| {
            first_point(r).map_or(Value::Null, |p| p["prefetchers"].clone())
        }),
        ("core clock GHz", |r| {
            first_point(r).map_or(Value::Null, |p| p["clock_ghz"].clone())
        }),
        ("cycles from", |r| {
            first_point(r).map_or(Value::Null, |p| p["cycle_source"].clone())
        }),
        ("CPU", |r| {
            first_point(r).map_or(Value::Null, |p| p["cpu"].clone())
        }),
    ];
    conditions_of(results, &fields)
}

/// `fields` read out of each result, differing ones first; a core clock
/// differs only beyond 2% (clocks differ a little between any two runs).
pub fn conditions_of<R: Borrow<Value>>(results: &[R], fields: &[(&str, Field)]) -> Vec<Condition> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .map_or_else(|| n.to_string(), |f| format!("{f:.3}")),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    };
    let mut out: Vec<Condition> = fields
        .iter()
        .map(|(what, get)| {
            let values: Vec<String> = results.iter().map(|r| text(&get(r.borrow()))).collect();
            let differs = match what {
                &"core clock GHz" => {
                    let v: Vec<f64> = values.iter().filter_map(|s| s.parse().ok()).collect();
                    v.iter().any(|x| (x / v[0] - 1.0).abs() > 0.02)
                }
                _ => values.iter().any(|v| v != &values[0]),
            };
            Condition {
                what: what.to_string(),
                values,
                differs,
            }
        })
        .collect();
    out.sort_by_key(|c| !c.differs);
    out
}

/// One point the results share.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Row {
    /// `random 16 KiB`...
    pub key: String,
    /// The median ns per load in each result.
    pub values: Vec<f64>,
    /// Last result over the first (medians).
    pub ratio: f64,
    /// 95% bootstrap interval of that ratio; null when a side has fewer
    /// than [`MIN_REPEATS`] repeats (no interval can be told from them).
    pub ci_low: Option<f64>,
    /// Upper end.
    pub ci_high: Option<f64>,
    /// Whether the interval leaves out 1 and the ratio is beyond [`NOISE`].
    pub significant: bool,
    /// Whether a side has fewer than [`MIN_REPEATS`] repeats.
    pub too_few_repeats: bool,
    /// Every result over the first, with its interval: `[ratio, low, high]`.
    pub ratios: Vec<[f64; 3]>,
}

/// The points of `found` (one list per result) that every result has, in
/// the first result's order, each compared with the first result's. Each
/// result's points are indexed by key once, so the matching is linear in
/// the points (a point's first occurrence is the one compared).
pub fn rows(found: &[Vec<Found>]) -> Vec<Row> {
    let Some(first) = found.first() else {
        return Vec::new();
    };
    let indexes: Vec<HashMap<&str, &Found>> = found
        .iter()
        .map(|f| {
            let mut index = HashMap::with_capacity(f.len());
            for p in f {
                index.entry(p.key.as_str()).or_insert(p);
            }
            index
        })
        .collect();
    first
        .iter()
        .filter_map(|point| {
            let matches: Vec<&Found> = indexes
                .iter()
                .map(|index| index.get(point.key.as_str()).copied())
                .collect::<Option<Vec<_>>>()?;
            let estimates: Vec<RatioEstimate> = matches
                .iter()
                .map(|m| stats::ratio_of_medians(&point.samples, &m.samples))
                .collect::<Option<Vec<_>>>()?;
            let last = *estimates.last()?;
            let too_few = matches
                .iter()
                .any(|m| m.samples.len() < MIN_REPEATS || point.samples.len() < MIN_REPEATS);
            Some(Row {
                key: point.key.clone(),
                values: matches.iter().map(|m| m.median).collect(),
                ratio: last.ratio,
                ci_low: (!too_few).then_some(last.low),
                ci_high: (!too_few).then_some(last.high),
                significant: !too_few && significant(&last),
                too_few_repeats: too_few,
                ratios: estimates.iter().map(|e| [e.ratio, e.low, e.high]).collect(),
            })
        })
        .collect()
}

/// Fewer repeats than this a side give no interval: one repeat resampled
/// is always itself, and two identical runs would be called different.
pub const MIN_REPEATS: usize = 3;

/// The interval leaves out 1 and the ratio is beyond the noise.
pub fn significant(e: &RatioEstimate) -> bool {
    e.significant() && (e.ratio - 1.0).abs() >= NOISE
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn point(pattern: &str, size: u64, ns: &[f64]) -> Value {
        let mut sorted = ns.to_vec();
        sorted.sort_by(f64::total_cmp);
        json!({
            "size": size, "stride": 64, "pattern": pattern,
            "ns_per_load": {"median": sorted[sorted.len() / 2]},
            "page_backing": {"obtained": "thp"}, "clock_ghz": 3.9,
            "samples": ns.iter().map(|v| json!({"ns_per_load": v})).collect::<Vec<_>>()
        })
    }

    #[test]
    fn points_align_by_series_and_size_and_differences_are_called_honestly() {
        let a = json!({"kind": "sweep", "host": {"cpu_model": "X"}, "points": [
            point("random", 16384, &[1.29, 1.30, 1.29]),
            point("random", 1 << 30, &[180.0, 181.0, 182.0]),
            point("stride", 16384, &[1.2, 1.2, 1.2]),
        ]});
        let b = json!({"kind": "sweep", "host": {"cpu_model": "X"}, "points": [
            point("random", 16384, &[1.30, 1.29, 1.31]),
            point("random", 1 << 30, &[230.0, 232.0, 229.0]),
        ]});
        let found = vec![measurements(&a), measurements(&b)];
        assert_eq!(found[0].len(), 3);
        assert_eq!(found[0][0].key, "random 16 KiB");
        let rows = rows(&found);
        // The stride point is in one result only: left out.
        assert_eq!(rows.len(), 2);
        assert!(!rows[0].significant, "{:?}", rows[0]);
        assert!(rows[1].significant && rows[1].ratio > 1.2, "{:?}", rows[1]);
        let (low, high) = (rows[1].ci_low.unwrap(), rows[1].ci_high.unwrap());
        assert!(low <= rows[1].ratio && rows[1].ratio <= high);
        let c = conditions(&[a, b]);
        assert!(c.iter().all(|c| !c.differs), "{c:?}");
    }

    #[test]
    fn one_repeat_a_side_gives_no_interval_and_no_verdict() {
        let a = json!({"kind": "run", "p": point("random", 16384, &[1.29])});
        let b = json!({"kind": "run", "p": point("random", 16384, &[1.29])});
        let rows = rows(&[measurements(&a), measurements(&b)]);
        assert_eq!(rows.len(), 1);
        assert!(rows[0].too_few_repeats && !rows[0].significant);
        assert_eq!((rows[0].ci_low, rows[0].ci_high), (None, None));
    }

    #[test]
    fn differing_conditions_come_first() {
        let a = json!({"host": {"cpu_model": "X", "kernel": "6.1"}, "p": point("random", 4096, &[1.0])});
        let mut b = a.clone();
        b["host"]["kernel"] = json!("6.8");
        b["p"]["page_backing"]["obtained"] = json!("4k");
        let c = conditions(&[a, b]);
        assert!(c[0].differs && c[1].differs && !c[2].differs, "{c:?}");
        let differing: Vec<&str> = c
            .iter()
            .filter(|c| c.differs)
            .map(|c| c.what.as_str())
            .collect();
        assert_eq!(differing, ["kernel", "pages obtained"]);
    }

    #[test]
    fn a_sweeps_levels_pool_the_repeats_on_their_plateaus() {
        let v = json!({
            "detection": {"levels": [
                {"name": "L1", "size_bytes": 49152, "size_within_10pct_bytes": 40960},
                {"name": "L2", "size_bytes": 1 << 20, "size_within_10pct_bytes": 400_000},
                {"name": "memory", "size_bytes": null, "size_within_10pct_bytes": null}
            ]},
            "points": [
                point("random", 16384, &[1.3, 1.3]),
                point("random", 32768, &[1.4, 1.3]),
                point("random", 45000, &[2.0, 2.1]),
                point("random", 131072, &[4.6, 4.7]),
                point("random", 1_500_000, &[9.0, 9.0]),
                point("random", 8 << 20, &[150.0, 152.0]),
                point("stride", 16384, &[1.0, 1.0])
            ]
        });
        let levels = levels(&v);
        let keys: Vec<(&str, usize)> = levels
            .iter()
            .map(|l| (l.key.as_str(), l.samples.len()))
            .collect();
        // L1: 16K and 32K (45K is in the transition); L2: 128K; memory: past 2 MiB.
        assert_eq!(
            keys,
            [("level L1", 4), ("level L2", 2), ("level memory", 2)]
        );
        assert_eq!(measurements(&v)[0].key, "level L1");
    }

    #[test]
    fn levels_label_their_measurements() {
        let v =
            json!({"levels": [{"name": "L1", "measurements": [point("random", 24576, &[1.3])]}]});
        assert_eq!(measurements(&v)[0].key, "L1 random 24 KiB");
    }
}
