//! Bandwidth results side by side (`memlat compare` on `memlat bandwidth`
//! files): points matched by level and thread count (by size and thread
//! count when a result is a sweep, or when its levels are sizes), each
//! operation's GB/s as a ratio of medians, last result over the first.
//!
//! A bandwidth point keeps each operation's median and its samples' min and
//! max, not every sample, so no bootstrap interval can be drawn. What is
//! given instead are **bounds**: the last result's slowest sample over the
//! first's fastest, and its fastest over the first's slowest. Every ratio
//! of one sample to another lies within them; they are not a confidence
//! interval, and with a few samples a side they are wide on a noisy machine.

use serde::Serialize;
use serde_json::Value;

use std::borrow::Borrow;

use super::compare::{Condition, Field, NOISE, conditions_of};
use crate::units::HumanBytes;

/// The operations a bandwidth point may hold: the JSON name of the figure,
/// of its spread, and the name shown.
pub const OPS: [(&str, &str, &str); 4] = [
    ("read_gb_per_s", "read", "read"),
    ("write_gb_per_s", "write", "write"),
    ("copy_gb_per_s", "copy", "copy"),
    ("nt_write_gb_per_s", "nt_write", "nt-write"),
];

/// One operation's figure at one point of one result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// Median GB/s.
    pub median: f64,
    /// The slowest and fastest samples, where the result has them.
    pub spread: Option<(f64, f64)>,
}

/// One point of a bandwidth result.
#[derive(Debug, Clone, PartialEq)]
pub struct BwFound {
    /// The level the size was placed in (`L2`, `ramp`, `memory`, or the size).
    pub level: String,
    /// Buffer per thread, bytes.
    pub size: u64,
    /// Threads.
    pub threads: usize,
    /// Per operation of [`OPS`], in order: None where not measured.
    pub figures: [Option<Figure>; 4],
}

/// Whether `value` is a bandwidth result.
pub fn is_bandwidth(value: &Value) -> bool {
    value["kind"] == "bandwidth"
}

/// Whether a bandwidth result is a sweep (its points are matched by size).
pub fn is_sweep(value: &Value) -> bool {
    value["sweep"].is_object()
}

/// The points of a bandwidth result, in its order (points without a size
/// or thread count are skipped).
pub fn points(value: &Value) -> Vec<BwFound> {
    value["points"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let size = p["size_bytes"].as_u64()?;
            let threads = p["threads"].as_u64()? as usize;
            let figures = OPS.map(|(field, spread, _)| {
                let median = p[field].as_f64().filter(|v| v.is_finite() && *v > 0.0)?;
                let s = &p["spread"][spread];
                let spread = s["min"].as_f64().zip(s["max"].as_f64());
                Some(Figure { median, spread })
            });
            Some(BwFound {
                level: p["level"]
                    .as_str()
                    .map_or_else(|| HumanBytes(size).to_string(), str::to_string),
                size,
                threads,
                figures,
            })
        })
        .collect()
}

/// How points are matched across results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchBy {
    /// Level name and thread count (level tables).
    Level,
    /// Size and thread count (when any result is a sweep).
    Size,
}

/// Sweeps are matched by size (their level labels may differ from host to
/// host); level tables by level, which for `--sizes` results is the size.
pub fn match_by<R: Borrow<Value>>(results: &[R]) -> MatchBy {
    if results.iter().any(|r| is_sweep(r.borrow())) {
        MatchBy::Size
    } else {
        MatchBy::Level
    }
}

/// One operation compared.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct OpRatio {
    /// `read`, `write`, `copy`, `nt-write`.
    pub op: String,
    /// Median GB/s in each result.
    pub values: Vec<f64>,
    /// Last result over the first.
    pub ratio: f64,
    /// The last's slowest sample over the first's fastest; null when a side
    /// has no spread.
    pub low: Option<f64>,
    /// The last's fastest sample over the first's slowest.
    pub high: Option<f64>,
    /// The bounds leave out 1 (no sample of one beats a sample of the
    /// other) and the ratio is beyond [`NOISE`].
    pub apart: bool,
    /// Every result over the first.
    pub ratios: Vec<f64>,
}

/// One point the results share.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct BandwidthRow {
    /// What matched: the level, or the size for sweeps.
    pub key: String,
    /// The level in each result.
    pub levels: Vec<String>,
    /// The size per thread in each result, bytes.
    pub sizes: Vec<u64>,
    /// Threads.
    pub threads: usize,
    /// The operations every result measured here.
    pub ops: Vec<OpRatio>,
}

fn key(p: &BwFound, by: MatchBy) -> (String, usize) {
    match by {
        MatchBy::Level => (p.level.clone(), p.threads),
        MatchBy::Size => (HumanBytes(p.size).to_string(), p.threads),
    }
}

/// The points every result has (matched `by`), in the first result's
/// order, each operation compared with the first result's.
pub fn rows(found: &[Vec<BwFound>], by: MatchBy) -> Vec<BandwidthRow> {
    let Some(first) = found.first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter_map(|point| {
            let k = key(point, by);
            let matches: Vec<&BwFound> = found
                .iter()
                .map(|f| f.iter().find(|p| key(p, by) == k))
                .collect::<Option<Vec<_>>>()?;
            let ops: Vec<OpRatio> = OPS
                .iter()
                .enumerate()
                .filter_map(|(i, &(_, _, name))| {
                    let figs: Vec<Figure> = matches
                        .iter()
                        .map(|m| m.figures[i])
                        .collect::<Option<_>>()?;
                    Some(compare_op(name, &figs))
                })
                .collect();
            (!ops.is_empty()).then(|| BandwidthRow {
                key: k.0,
                levels: matches.iter().map(|m| m.level.clone()).collect(),
                sizes: matches.iter().map(|m| m.size).collect(),
                threads: point.threads,
                ops,
            })
        })
        .collect()
}

/// The last figure over the first, with bounds from their spreads.
fn compare_op(name: &str, figs: &[Figure]) -> OpRatio {
    let (first, last) = (figs[0], figs[figs.len() - 1]);
    let ratio = last.median / first.median;
    let (low, high) = match (first.spread, last.spread) {
        (Some((a_min, a_max)), Some((b_min, b_max))) if a_min > 0.0 && a_max > 0.0 => {
            (Some(b_min / a_max), Some(b_max / a_min))
        }
        _ => (None, None),
    };
    let leaves_out_one = matches!((low, high), (Some(l), Some(h)) if l > 1.0 || h < 1.0);
    OpRatio {
        op: name.to_string(),
        values: figs.iter().map(|f| f.median).collect(),
        ratio,
        low,
        high,
        apart: leaves_out_one && (ratio - 1.0).abs() >= NOISE,
        ratios: figs.iter().map(|f| f.median / first.median).collect(),
    }
}

/// The conditions of bandwidth results that explain differences, differing ones first.
pub fn conditions<R: Borrow<Value>>(results: &[R]) -> Vec<Condition> {
    let fields: [(&str, Field); 9] = [
        ("cpu model", |r| r["host"]["cpu_model"].clone()),
        ("host", |r| r["host"]["hostname"].clone()),
        ("kernel", |r| r["host"]["kernel"].clone()),
        ("kind", |r| r["kind"].clone()),
        ("vector kernels", |r| r["isa_kernel"].clone()),
        ("core clock GHz", |r| r["clock_ghz"].clone()),
        ("samples per figure", |r| {
            match (r["repeats"].as_u64(), r["sample_ms"].as_u64()) {
                (Some(n), Some(ms)) => Value::String(format!("{n} x {ms} ms")),
                _ => Value::Null,
            }
        }),
        ("CPUs", |r| r["cpus"].clone()),
        ("sweep", |r| {
            let s = &r["sweep"];
            match (
                s["from_bytes"].as_u64(),
                s["to_bytes"].as_u64(),
                s["per_octave"].as_u64(),
            ) {
                (Some(from), Some(to), Some(n)) => Value::String(format!(
                    "{}..{}, {n} a doubling",
                    HumanBytes(from),
                    HumanBytes(to)
                )),
                _ => Value::Null,
            }
        }),
    ];
    conditions_of(results, &fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn point(level: &str, size: u64, threads: u64, read: [f64; 3], nt: Option<f64>) -> Value {
        let [min, median, max] = read;
        json!({
            "size_bytes": size, "level": level, "threads": threads,
            "read_gb_per_s": median, "write_gb_per_s": median / 2.0,
            "copy_gb_per_s": median, "nt_write_gb_per_s": nt,
            "read_bytes_per_cycle": null,
            "spread": {
                "read": {"min": min, "max": max},
                "write": {"min": median / 2.0, "max": median / 2.0},
                "copy": {"min": median, "max": median}
            }
        })
    }

    fn result(points: Vec<Value>, sweep: bool) -> Value {
        let mut v = json!({
            "schema_version": 2, "kind": "bandwidth", "host": {"cpu_model": "X"},
            "isa_kernel": "avx512", "clock_ghz": 3.9, "repeats": 5, "sample_ms": 20,
            "points": points, "sweep": null
        });
        if sweep {
            v["sweep"] = json!({"from_bytes": 4096, "to_bytes": 1 << 20, "per_octave": 4});
        }
        v
    }

    #[test]
    fn level_tables_match_by_level_and_threads_with_sample_bounds() {
        let a = result(
            vec![
                point("L1", 24 << 10, 1, [200.0, 210.0, 212.0], Some(20.0)),
                point("L1", 24 << 10, 2, [400.0, 420.0, 424.0], Some(40.0)),
                point("memory", 256 << 20, 1, [30.0, 31.0, 32.0], Some(30.0)),
            ],
            false,
        );
        // Another host: L1 at another size, memory slower, no 2-thread point.
        let b = result(
            vec![
                point("L1", 32 << 10, 1, [205.0, 211.0, 215.0], Some(20.0)),
                point("memory", 1 << 30, 1, [20.0, 21.0, 22.0], Some(33.0)),
            ],
            false,
        );
        let values = [a.clone(), b.clone()];
        assert_eq!(match_by(&values), MatchBy::Level);
        let rows = rows(&[points(&a), points(&b)], MatchBy::Level);
        assert_eq!(rows.len(), 2, "the 2-thread point is in one result only");
        let l1 = &rows[0];
        assert_eq!((l1.key.as_str(), l1.threads), ("L1", 1));
        assert_eq!(l1.sizes, vec![24 << 10, 32 << 10]);
        let read = &l1.ops[0];
        assert_eq!(read.op, "read");
        assert!((read.ratio - 211.0 / 210.0).abs() < 1e-12);
        // Bounds: 205/212 .. 215/200; they hold 1: not apart.
        assert!((read.low.unwrap() - 205.0 / 212.0).abs() < 1e-12);
        assert!((read.high.unwrap() - 215.0 / 200.0).abs() < 1e-12);
        assert!(!read.apart);
        let memory = &rows[1];
        let ops: Vec<&str> = memory.ops.iter().map(|o| o.op.as_str()).collect();
        assert_eq!(ops, ["read", "write", "copy", "nt-write"]);
        let read = &memory.ops[0];
        assert!(read.apart && read.ratio < 0.7, "{read:?}");
        assert!(read.high.unwrap() < 1.0);
        // nt-write has no spread in these files: a ratio without bounds, never apart.
        let nt = &memory.ops[3];
        assert!((nt.ratio - 1.1).abs() < 1e-12);
        assert_eq!((nt.low, nt.high, nt.apart), (None, None, false));
        assert_eq!(nt.ratios, vec![1.0, 1.1]);
    }

    #[test]
    fn an_operation_missing_from_a_result_is_left_out_and_sizes_match_sizes() {
        // --sizes results: the level is the size; a portable run has no nt-write.
        let a = result(
            vec![point(
                "16 KiB",
                16 << 10,
                1,
                [100.0, 110.0, 111.0],
                Some(9.0),
            )],
            false,
        );
        let b = result(
            vec![point("16 KiB", 16 << 10, 1, [50.0, 55.0, 56.0], None)],
            false,
        );
        let rows = rows(&[points(&a), points(&b)], MatchBy::Level);
        assert_eq!(rows.len(), 1);
        let ops: Vec<&str> = rows[0].ops.iter().map(|o| o.op.as_str()).collect();
        assert_eq!(ops, ["read", "write", "copy"]);
        assert!(rows[0].ops[0].apart && (rows[0].ops[0].ratio - 0.5).abs() < 1e-12);
    }

    #[test]
    fn sweeps_match_by_size_whatever_their_labels() {
        let a = result(
            vec![
                point("L2", 64 << 10, 1, [190.0, 191.0, 192.0], None),
                point("ramp", 2 << 20, 1, [60.0, 61.0, 62.0], None),
            ],
            true,
        );
        let b = result(
            vec![
                point("L2", 64 << 10, 1, [180.0, 181.0, 182.0], None),
                point("L3", 2 << 20, 1, [90.0, 91.0, 92.0], None),
                point("L3", 3 << 20, 1, [90.0, 91.0, 92.0], None),
            ],
            true,
        );
        let values = [a.clone(), b.clone()];
        assert_eq!(match_by(&values), MatchBy::Size);
        let rows = rows(&[points(&a), points(&b)], MatchBy::Size);
        let keys: Vec<(&str, &[String])> = rows
            .iter()
            .map(|r| (r.key.as_str(), r.levels.as_slice()))
            .collect();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0].0, "64 KiB");
        assert_eq!(
            keys[1],
            ("2 MiB", &["ramp".to_string(), "L3".to_string()][..])
        );
        // By level the same sweeps would share only L2.
        assert_eq!(
            super::rows(&[points(&a), points(&b)], MatchBy::Level).len(),
            1
        );
    }

    #[test]
    fn three_results_compare_the_last_with_the_first_and_keep_every_ratio() {
        let r = |m: f64| {
            result(
                vec![point("L1", 4096, 1, [m - 1.0, m, m + 1.0], None)],
                false,
            )
        };
        let found = [points(&r(100.0)), points(&r(150.0)), points(&r(200.0))];
        let rows = rows(&found, MatchBy::Level);
        let read = &rows[0].ops[0];
        assert_eq!(read.values, vec![100.0, 150.0, 200.0]);
        assert_eq!(read.ratios, vec![1.0, 1.5, 2.0]);
        assert!((read.ratio - 2.0).abs() < 1e-12 && read.apart);
    }

    #[test]
    fn conditions_name_the_kernels_clock_and_samples() {
        let a = result(Vec::new(), false);
        let mut b = a.clone();
        b["isa_kernel"] = json!("portable");
        b["repeats"] = json!(3);
        let c = conditions(&[a, b]);
        let differing: Vec<&str> = c
            .iter()
            .filter(|c| c.differs)
            .map(|c| c.what.as_str())
            .collect();
        assert_eq!(differing, ["vector kernels", "samples per figure"]);
        assert_eq!(c[1].values, ["5 x 20 ms", "3 x 20 ms"]);
        assert!(!is_sweep(&json!({"sweep": null})) && is_bandwidth(&result(vec![], true)));
    }
}
