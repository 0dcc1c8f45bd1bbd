//! Memory-level parallelism from N chains walked side by side: throughput
//! against N, and where it stops growing (`memlat mlp`).
//!
//! With N independent chains the core can overlap N misses; the time per
//! load falls as 1/N until the core (or the memory system) runs out of miss
//! buffers, then stays. The **effective parallelism** at N is the time per
//! load of one chain over the time per load at N: how many loads were in
//! flight on average. The **saturation point** is the smallest N whose
//! throughput is within half a chain of the best: one chain more could add
//! no more than half of what a chain adds while the core has room for it
//! (a sharp knee at 13 misses in flight reads 13, where "within 90% of the
//! best" read 12).

use serde::{Deserialize, Serialize};

/// How far below the best a count may stand and be saturated, in chains'
/// worth of throughput: half a chain, the midpoint between a chain that
/// adds a whole one (room left) and one that adds none (no room).
pub const SATURATED_CHAINS: f64 = 0.5;

/// The last count still grows when its throughput is this much above the
/// count before it.
pub const STILL_GROWING: f64 = 1.03;

/// N independent chains keep at most N loads in flight, so parallelism above
/// N means the one-chain baseline was slow (a burst of another tenant): the
/// ratio of two medians each good to 2% (the engine's `PRECISION_MEMORY`)
/// may exceed N by about 4%, not more.
pub const PARALLELISM_SLACK: f64 = 1.05;

/// Whether any point claims more loads in flight than it has chains (beyond
/// [`PARALLELISM_SLACK`]): the one-chain baseline must be measured again.
pub fn baseline_suspect(points: &[MlpPoint]) -> bool {
    points
        .iter()
        .any(|p| p.parallelism > f64::from(p.chains) * PARALLELISM_SLACK)
}

/// One level's single verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Throughput levels off at `saturation_chains`.
    LevelsOff,
    /// Throughput still grew at the most chains tried: no saturation point.
    StillGrowing,
}

/// One chain count at one size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MlpPoint {
    /// Chains walked side by side.
    pub chains: u32,
    /// Time per load over all chains, ns (median of the repeats).
    pub ns_per_load: f64,
    /// Loads completed per second.
    pub loads_per_second: f64,
    /// Bytes per second, counting a whole line per load.
    pub bytes_per_second: f64,
    /// Time per load of one chain over the time per load here.
    pub parallelism: f64,
}

/// The points of one size from `(chains, ns per load)`, one chain first.
pub fn points(measured: &[(u32, f64)], line: u64) -> Vec<MlpPoint> {
    let single = measured
        .iter()
        .find(|(n, _)| *n == 1)
        .map_or(f64::NAN, |(_, ns)| *ns);
    points_against(measured, line, single)
}

/// The fastest a chain's load was seen to take: N chains walked side by
/// side in lockstep take N x their time per load for each chain's load.
/// A load can take less with more chains than alone where the memory
/// system clocks up under traffic (Intel's uncore frequency scaling, AMD's
/// fabric power states): then this, not one chain's, is the latency the
/// counts' parallelism is measured against, and no count exceeds its
/// chains.
pub fn fastest_chain_latency(measured: &[(u32, f64)]) -> Option<(u32, f64)> {
    measured
        .iter()
        .map(|&(n, ns)| (n, f64::from(n) * ns))
        .filter(|(_, ns)| ns.is_finite() && *ns > 0.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The points of one size, counted against one chain's latency unless a
/// count shows more loads in flight than chains ([`baseline_suspect`]):
/// then against [`fastest_chain_latency`], returned with its count.
pub fn counted(measured: &[(u32, f64)], line: u64) -> (Vec<MlpPoint>, Option<(u32, f64)>) {
    let single = points(measured, line);
    if baseline_suspect(&single)
        && let Some((n, fastest)) = fastest_chain_latency(measured)
    {
        return (points_against(measured, line, fastest), Some((n, fastest)));
    }
    (single, None)
}

/// The points of one size against a chain's load latency `reference_ns`.
pub fn points_against(measured: &[(u32, f64)], line: u64, reference_ns: f64) -> Vec<MlpPoint> {
    measured
        .iter()
        .map(|&(chains, ns)| MlpPoint {
            chains,
            ns_per_load: ns,
            loads_per_second: 1e9 / ns,
            bytes_per_second: 1e9 / ns * line as f64,
            parallelism: reference_ns / ns,
        })
        .collect()
}

/// Where throughput stops growing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// Levels off, or still growing at the most chains tried; `None` without points.
    pub verdict: Option<Verdict>,
    /// The smallest chain count within half a chain of the best throughput,
    /// when it levels off; `None` when still growing or without points.
    pub chains: Option<u32>,
    /// Misses in flight at saturation, by Little's law: the best throughput
    /// times one chain's latency (the best point's parallelism).
    pub parallelism: f64,
    /// 0..1: how clearly the curve levels off (low when the best is the
    /// largest count tried, or the counts beyond saturation scatter).
    pub confidence: f64,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// Reads the saturation point from the points of one size.
pub fn saturation(points: &[MlpPoint]) -> Saturation {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.chains);
    let best = sorted
        .iter()
        .map(|p| p.loads_per_second)
        .fold(0.0, f64::max);
    // What one chain adds while there is room: a chain's own throughput.
    let per_chain = sorted
        .iter()
        .map(|p| p.loads_per_second / p.parallelism)
        .find(|t| t.is_finite() && *t > 0.0)
        .unwrap_or(0.0);
    let Some(at) = sorted
        .iter()
        .position(|p| p.loads_per_second >= best - SATURATED_CHAINS * per_chain)
    else {
        return Saturation {
            verdict: None,
            chains: None,
            parallelism: f64::NAN,
            confidence: 0.0,
            notes: vec!["no points".into()],
        };
    };
    let mut notes = Vec::new();
    let beyond = &sorted[at..];
    // Levelled off: the counts beyond saturation stay near the best.
    let floor = beyond
        .iter()
        .map(|p| p.loads_per_second)
        .fold(f64::INFINITY, f64::min);
    let flatness = (floor / best).clamp(0.0, 1.0);
    let support = (beyond.len() as f64 / 4.0).min(1.0);
    let mut confidence = flatness * support;
    let last = sorted.last().expect("points exist");
    // Still growing: the last count is the best and clearly above the one before.
    let growing = sorted.len() > 1
        && last.loads_per_second >= 0.99 * best
        && last.loads_per_second > STILL_GROWING * sorted[sorted.len() - 2].loads_per_second;
    if growing {
        confidence = confidence.min(0.3);
        let max = crate::kernels::parallel::MAX_CHAINS;
        notes.push(if (last.chains as usize) < max {
            format!(
                "this core may keep more misses in flight than {} (raise --chains, up to {max})",
                last.chains
            )
        } else {
            // Advice to raise --chains past what it accepts could not be followed.
            format!(
                "this core keeps at least {} misses in flight: throughput still grew at {}, and memlat runs at most {max} chains side by side, so where it levels off is beyond what memlat can measure",
                last.chains, last.chains
            )
        });
    }
    if sorted[0].chains != 1 {
        notes.push(
            "no single-chain point: parallelism is relative to the fewest chains tried".into(),
        );
    }
    // One verdict: a curve still growing at its last count has not levelled
    // off anywhere, whatever count came within half a chain of it.
    let (verdict, chains, parallelism) = if growing {
        (Verdict::StillGrowing, None, last.parallelism)
    } else {
        let most = sorted
            .iter()
            .map(|p| p.parallelism)
            .filter(|p| p.is_finite())
            .fold(sorted[at].parallelism, f64::max);
        (Verdict::LevelsOff, Some(sorted[at].chains), most)
    };
    Saturation {
        verdict: Some(verdict),
        chains,
        parallelism,
        confidence: (confidence * 100.0).round() / 100.0,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core with `buffers` miss buffers at `latency` ns per miss.
    fn model(buffers: f64, latency: f64, upto: u32) -> Vec<(u32, f64)> {
        (1..=upto)
            .map(|n| (n, latency / f64::from(n).min(buffers)))
            .collect()
    }

    #[test]
    fn saturates_where_the_miss_buffers_run_out() {
        let p = points(&model(10.0, 100.0, 16), 64);
        assert!((p[0].parallelism - 1.0).abs() < 1e-12);
        assert!((p[15].parallelism - 10.0).abs() < 1e-9);
        assert!((p[3].bytes_per_second - 4.0 * 64.0 * 1e7).abs() < 1.0);
        let s = saturation(&p);
        // 9 chains stand a whole chain below 10 chains' throughput: the
        // knee is 10, where the miss buffers run out.
        assert_eq!(s.chains, Some(10));
        assert_eq!(s.verdict, Some(Verdict::LevelsOff));
        assert!(s.confidence > 0.8, "{s:?}");
        assert!(s.notes.is_empty());
    }

    #[test]
    fn still_growing_at_the_last_count_is_said() {
        let s = saturation(&points(&model(32.0, 100.0, 16), 64));
        // One verdict: no "levels off at 15" beside "still grew at 16".
        assert_eq!(s.verdict, Some(Verdict::StillGrowing));
        assert_eq!(s.chains, None);
        assert!((s.parallelism - 16.0).abs() < 1e-9);
        assert!(s.confidence <= 0.3);
        // At memlat's most chains, no advice to raise them.
        assert!(!s.notes[0].contains("raise --chains"), "{s:?}");
        assert!(
            s.notes[0].contains("at least 16 misses in flight")
                && s.notes[0].contains("at most 16 chains"),
            "{s:?}"
        );
        // Below it, raising --chains is advice that can be followed.
        let fewer = saturation(&points(&model(32.0, 100.0, 8), 64));
        assert!(
            fewer.notes[0].contains("raise --chains, up to 16"),
            "{fewer:?}"
        );
        let json = serde_json::to_value(s.verdict).unwrap();
        assert_eq!(json, "still_growing");
    }

    #[test]
    fn a_low_limit_saturates_early() {
        let s = saturation(&points(&model(2.5, 1.3, 16), 64));
        // Half a chain short of the best at 2, the best at 3: either is
        // within half a chain; the misses in flight are the best's, 2.5.
        assert!(matches!(s.chains, Some(2 | 3)), "{s:?}");
        assert!((s.parallelism - 2.5).abs() < 1e-9);
        assert_eq!(saturation(&[]).chains, None);
        assert_eq!(saturation(&[]).verdict, None);
    }

    #[test]
    fn parallelism_above_the_chain_count_is_a_slow_baseline() {
        // Issue 27: a 1-chain baseline of 305 ns, twice memory latency,
        // made 16 chains read 30.4 in flight.
        let mut measured = model(10.0, 150.0, 16);
        measured[0].1 = 305.0;
        let p = points(&measured, 64);
        assert!(baseline_suspect(&p));
        assert!(!baseline_suspect(&points(&model(10.0, 150.0, 16), 64)));
        // Within the medians' precision of N: not suspect.
        let near = points(&[(1, 100.0), (2, 49.0)], 64);
        assert!(!baseline_suspect(&near));
    }

    #[test]
    fn a_load_faster_under_traffic_becomes_the_reference() {
        // This Zen 4 guest's memory: 1 chain 216 ns, 2 chains 93.4 ns a
        // load (187 ns for each chain's), so 2.31 "in flight" from 2 chains.
        let measured = [(1, 216.0), (2, 93.4), (4, 48.0), (8, 26.0)];
        assert!(baseline_suspect(&points(&measured, 64)));
        let (n, reference) = fastest_chain_latency(&measured).unwrap();
        assert_eq!(n, 2);
        assert!((reference - 186.8).abs() < 1e-9, "{reference}");
        let p = points_against(&measured, 64, reference);
        assert!(!baseline_suspect(&p));
        assert!(
            p.iter()
                .all(|q| q.parallelism <= f64::from(q.chains) + 1e-9)
        );
        assert_eq!(fastest_chain_latency(&[]), None);
    }
}
