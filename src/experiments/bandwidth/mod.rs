//! `memlat bandwidth` as an experiment: how many bytes a second each level
//! delivers to one thread and to several, reading, writing, copying and
//! writing around the caches (non-temporal), with the widest vectors the CPU
//! has ([`crate::kernels::bandwidth`]).
//!
//! Each thread is pinned to its own CPU and streams through a buffer of its
//! own of the point's size, mapped and filled once for the point and used by
//! every operation and sample (a copy moves the buffer's second half into
//! its first, so the working set stays the size). Before each operation
//! each thread finds how many passes fill a sample (`sample_time`); every
//! sample then starts on all threads together behind a barrier, and its
//! bandwidth is the sum over threads of the bytes each moved over the time
//! it took. Each figure is the median of `repeats` samples, with their min
//! and max.

mod streams;

use std::time::Duration;

use anyhow::{Result, bail};
use serde::Serialize;

use super::plateaus::{LevelSize, MeasuredLevels};
use super::{Observer, Step};
use crate::analysis::stats::Summary;
use crate::kernels::bandwidth::{self, Kernels, Op};
use crate::platform::PageRequest;
use streams::{measure_point, ops};

/// What to measure.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Sizes per thread, named by level.
    pub sizes: Vec<LevelSize>,
    /// Thread counts (each at most `cpus.len()`).
    pub threads: Vec<usize>,
    /// CPUs to pin threads to, in order.
    pub cpus: Vec<usize>,
    /// The kernels.
    pub kernels: Kernels,
    /// Samples per figure.
    pub repeats: u32,
    /// Target length of one sample.
    pub sample_time: Duration,
    /// Page size asked for.
    pub pages: PageRequest,
    /// Core clock, GHz (for bytes per cycle; 0 when unknown).
    pub ghz: f64,
}

/// Min and max of a figure's samples, GB/s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Spread {
    /// Slowest sample.
    pub min: f64,
    /// Fastest sample.
    pub max: f64,
}

/// One size at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct BandwidthPoint {
    /// Buffer size per thread, bytes.
    pub size_bytes: u64,
    /// The level the size was placed in (`L1`...`memory`, or the size).
    pub level: String,
    /// Threads streaming at once, each on its own CPU.
    pub threads: usize,
    /// Reading, all threads together, GB/s (10^9 bytes a second).
    pub read_gb_per_s: f64,
    /// Writing, GB/s.
    pub write_gb_per_s: f64,
    /// Copying (bytes read plus bytes written), GB/s.
    pub copy_gb_per_s: f64,
    /// Non-temporal writing, GB/s; null where the ISA has no such store.
    pub nt_write_gb_per_s: Option<f64>,
    /// Reading, bytes per core cycle per thread (null when the clock is unknown).
    pub read_bytes_per_cycle: Option<f64>,
    /// How many of the threads read with software prefetches ahead of the
    /// loads: each timed its kernel's read with and without them on its
    /// buffer and kept the faster (which one wins differs by core). Null
    /// where the kernels have no prefetching read.
    #[serde(default)]
    pub read_prefetched_threads: Option<usize>,
    /// Each operation's min and max over the samples.
    pub spread: std::collections::BTreeMap<String, Spread>,
}

/// What a sweep measured (`memlat bandwidth --sweep`): its bounds, its
/// density, and the measured plateaus its sizes were labelled from.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SweepInfo {
    /// The smallest size per thread, bytes.
    pub from_bytes: u64,
    /// The largest size per thread, bytes.
    pub to_bytes: u64,
    /// Sizes per doubling.
    pub per_octave: u32,
    /// Sizes from here up are labelled `memory` (twice the last level's
    /// measured capacity); null without a measured level.
    pub memory_from_bytes: Option<u64>,
    /// The plateaus the labels come from.
    pub plateaus: MeasuredLevels,
}

impl SweepInfo {
    /// One line for a reader: the sweep's sizes and where its levels come from.
    pub fn describe(&self) -> String {
        use crate::units::HumanBytes;
        let p = &self.plateaus;
        let plateaus: Vec<String> = p
            .levels
            .iter()
            .map(|l| {
                format!(
                    "{} {}..{}",
                    l.name,
                    HumanBytes(l.from_bytes),
                    HumanBytes(l.to_bytes)
                )
            })
            .collect();
        let source = match (&p.source[..], &p.file) {
            ("probe", _) => "a coarse probe (--plateaus probe|FILE to choose)".to_string(),
            (_, Some(file)) => format!(
                "the {} sweep {} of {}",
                p.source,
                file.display(),
                p.measured
            ),
            _ => format!("a {} sweep of {}", p.source, p.measured),
        };
        let memory = self
            .memory_from_bytes
            .map_or_else(|| "-".to_string(), |m| HumanBytes(m).to_string());
        format!(
            "a sweep, {} sizes a doubling from {} to {}; each size's level from the measured plateaus ({}), `ramp` between them, `memory` from {memory} (twice the last capacity); plateaus from {source}",
            self.per_octave,
            HumanBytes(self.from_bytes),
            HumanBytes(self.to_bytes),
            plateaus.join(", ")
        )
    }
}

/// A sweep's sizes: `from`, then `per_octave` sizes a doubling
/// (`from` x 2^(k/per_octave)) up to `to`, which ends it; each rounded to a
/// multiple of `unit` (at least one unit), duplicates dropped.
pub fn sweep_sizes(from: u64, to: u64, per_octave: u32, unit: u64) -> Vec<u64> {
    let unit = unit.max(1);
    let round = |x: f64| (((x / unit as f64).round() as u64).max(1)) * unit;
    let (from, to) = (from.min(to), from.max(to));
    let last = round(to as f64);
    let mut sizes = Vec::new();
    let step = 2f64.powf(1.0 / f64::from(per_octave.max(1)));
    let mut k = 0i32;
    loop {
        let x = from as f64 * step.powi(k);
        // Stop short of `to` by a fraction of a step, so the last two are not near twins.
        if x >= to as f64 / step.sqrt() {
            break;
        }
        sizes.push(round(x));
        k += 1;
    }
    sizes.push(last);
    sizes.dedup();
    sizes
}

/// Where the `memory` label starts: twice the last level's measured
/// capacity (the same margin `compare` leaves before memory's plateau).
pub fn memory_from(levels: &MeasuredLevels) -> Option<u64> {
    levels.last_capacity().map(|c| c.saturating_mul(2))
}

/// The measured level a size falls in: a level whose plateau holds it (a
/// size under the first plateau fits the first level), `memory` from
/// [`memory_from`], `ramp` between; the size itself without any level.
pub fn level_of(size: u64, levels: &MeasuredLevels) -> String {
    let Some(first) = levels.levels.first() else {
        return crate::units::HumanBytes(size).to_string();
    };
    if size < first.from_bytes {
        return first.name.clone();
    }
    if let Some(p) = levels
        .levels
        .iter()
        .find(|p| (p.from_bytes..=p.to_bytes).contains(&size))
    {
        return p.name.clone();
    }
    if memory_from(levels).is_some_and(|m| size >= m) {
        return "memory".into();
    }
    "ramp".into()
}

/// A sweep's sizes, each named by [`level_of`].
pub fn sweep_plan(from: u64, to: u64, per_octave: u32, levels: &MeasuredLevels) -> Vec<LevelSize> {
    sweep_sizes(from, to, per_octave, bandwidth::BLOCK as u64)
        .into_iter()
        .map(|size| LevelSize {
            name: level_of(size, levels),
            size,
        })
        .collect()
}

/// GB/s (10^9 bytes a second) of `bytes` moved in `seconds`.
pub fn gb_per_s(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    }
}

/// Bytes per cycle per thread of `gb_per_s` over `threads` at `ghz`.
pub fn bytes_per_cycle(gb_per_s: f64, threads: usize, ghz: f64) -> Option<f64> {
    (ghz > 0.0 && threads > 0).then(|| gb_per_s / threads as f64 / ghz)
}

/// Measures every size at every thread count.
pub fn run(
    plan: &Plan,
    observer: &mut dyn Observer<Vec<BandwidthPoint>>,
) -> Result<Vec<BandwidthPoint>> {
    let steps: Vec<(&LevelSize, usize)> = plan
        .sizes
        .iter()
        .flat_map(|s| plan.threads.iter().map(move |&t| (s, t)))
        .collect();
    let mut points = Vec::new();
    for (index, &(level, threads)) in steps.iter().enumerate() {
        if observer.interrupted() {
            break;
        }
        let label = format!(
            "{} ({}) x {threads} thread(s)",
            level.name,
            crate::units::HumanBytes(level.size)
        );
        let step = Step {
            index,
            total: steps.len(),
            label: &label,
            cost_ms: ops(&plan.kernels).len() as u64
                * u64::from(plan.repeats + 1)
                * plan.sample_time.as_millis() as u64,
        };
        observer.begin(&step);
        let mut spread = std::collections::BTreeMap::new();
        let mut median: Vec<(Op, f64)> = Vec::new();
        let (figures, read_prefetched_threads) = measure_point(plan, level.size, threads)?;
        for (op, samples) in figures {
            let s = Summary::of(&samples).expect("at least one sample");
            spread.insert(
                op.name().to_string(),
                Spread {
                    min: s.min,
                    max: s.max,
                },
            );
            median.push((op, s.median));
        }
        let of = |op: Op| median.iter().find(|(o, _)| *o == op).map(|&(_, m)| m);
        let nt = of(Op::NtWrite);
        let (Some(read), Some(write), Some(copy)) = (of(Op::Read), of(Op::Write), of(Op::Copy))
        else {
            bail!("a bandwidth point without read, write and copy figures");
        };
        points.push(BandwidthPoint {
            size_bytes: level.size,
            level: level.name.clone(),
            threads,
            read_gb_per_s: read,
            write_gb_per_s: write,
            copy_gb_per_s: copy,
            nt_write_gb_per_s: nt,
            read_bytes_per_cycle: bytes_per_cycle(read, threads, plan.ghz),
            read_prefetched_threads,
            spread,
        });
        observer.checkpoint(&points)?;
        observer.end(&step);
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arithmetic_of_a_figure() {
        assert_eq!(gb_per_s(2_000_000_000, 1.0), 2.0);
        assert_eq!(gb_per_s(1_000_000_000, 0.5), 2.0);
        assert_eq!(gb_per_s(1, 0.0), 0.0);
        assert_eq!(bytes_per_cycle(40.0, 2, 4.0), Some(5.0));
        assert_eq!(bytes_per_cycle(40.0, 2, 0.0), None);
    }

    #[test]
    fn a_sweep_is_geometric_whole_blocks_and_ends_at_its_bounds() {
        let sizes = sweep_sizes(4 << 10, 64 << 10, 4, 256);
        // 4 octaves x 4, and the end.
        assert_eq!(sizes.len(), 17, "{sizes:?}");
        assert_eq!((sizes[0], sizes[4], sizes[8]), (4 << 10, 8 << 10, 16 << 10));
        assert_eq!(*sizes.last().unwrap(), 64 << 10);
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        assert!(sizes.iter().all(|s| s % 256 == 0));
        // 2^(1/4): 4 KiB x 1.189 = 4871, rounded to 4864.
        assert_eq!(sizes[1], 4864);
        // An end between steps is kept, the step just under it dropped if too close.
        let odd = sweep_sizes(4 << 10, 9 << 10, 1, 256);
        assert_eq!(odd, vec![4 << 10, 9 << 10]);
        let close = sweep_sizes(4 << 10, 8 << 10 | 512, 1, 256);
        assert_eq!(close, vec![4 << 10, 8 << 10 | 512]);
        // Bounds given backwards, tiny sizes, one size.
        assert_eq!(sweep_sizes(64 << 10, 4 << 10, 4, 256), sizes);
        assert_eq!(sweep_sizes(10, 100, 1, 256), vec![256]);
        assert_eq!(sweep_sizes(8192, 8192, 4, 256), vec![8192]);
        // Default density from 4 KiB to 256 MiB: 16 octaves, 65 sizes.
        assert_eq!(sweep_sizes(4 << 10, 256 << 20, 4, 256).len(), 65);
    }

    fn measured() -> MeasuredLevels {
        let plateau = |name: &str, from: u64, to: u64, capacity: Option<u64>| {
            crate::experiments::plateaus::Plateau {
                name: name.into(),
                from_bytes: from,
                to_bytes: to,
                ns: 1.0,
                capacity_bytes: capacity,
                capacity_bounds: None,
            }
        };
        MeasuredLevels {
            source: "file".into(),
            file: None,
            measured: "then".into(),
            levels: vec![
                plateau("L1", 4 << 10, 30 << 10, Some(48 << 10)),
                plateau("L2", 64 << 10, 1 << 20, Some(2 << 20)),
                plateau("L3", 4 << 20, 16 << 20, None),
            ],
            memory_ns: Some(120.0),
        }
    }

    #[test]
    fn sizes_are_labelled_with_the_measured_level_they_fall_in() {
        let levels = measured();
        let at = |size: u64| level_of(size, &levels);
        assert_eq!(
            at(1 << 10),
            "L1",
            "under the first plateau: fits the first level"
        );
        assert_eq!(at(4 << 10), "L1");
        assert_eq!(at(30 << 10), "L1");
        assert_eq!(at(40 << 10), "ramp");
        assert_eq!(at(64 << 10), "L2");
        assert_eq!(at(2 << 20), "ramp");
        assert_eq!(at(8 << 20), "L3");
        // The last level has no capacity: its plateau's end stands for it.
        assert_eq!(memory_from(&levels), Some(32 << 20));
        assert_eq!(at(20 << 20), "ramp");
        assert_eq!(at(32 << 20), "memory");
        assert_eq!(at(1 << 30), "memory");
        let none = MeasuredLevels {
            levels: Vec::new(),
            ..levels.clone()
        };
        assert_eq!(level_of(1 << 20, &none), "1 MiB");
        assert_eq!(memory_from(&none), None);
        let plan = sweep_plan(16 << 10, 64 << 20, 1, &levels);
        let names: Vec<&str> = plan.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "L1", "ramp", "L2", "L2", "L2", "L2", "L2", "ramp", "L3", "L3", "L3", "memory",
                "memory"
            ]
        );
    }

    #[test]
    fn a_small_run_counts_real_bytes_on_this_host() {
        let plan = Plan {
            sizes: vec![LevelSize {
                name: "L1".into(),
                size: 16 << 10,
            }],
            threads: vec![1],
            cpus: crate::platform::allowed_cpus(),
            kernels: bandwidth::PORTABLE,
            repeats: 2,
            sample_time: Duration::from_millis(2),
            pages: PageRequest::Base,
            ghz: 0.0,
        };
        let points = run(&plan, &mut super::super::Quiet).unwrap();
        assert_eq!(points.len(), 1);
        let p = &points[0];
        // Only what noise cannot break: positive, finite, spread around the median.
        for v in [p.read_gb_per_s, p.write_gb_per_s, p.copy_gb_per_s] {
            assert!(v.is_finite() && v > 0.0, "{p:?}");
        }
        assert!(p.nt_write_gb_per_s.is_none() && p.read_bytes_per_cycle.is_none());
        // The portable read has no prefetching variant: nothing was chosen.
        assert_eq!(p.read_prefetched_threads, None);
        let r = p.spread["read"];
        assert!(r.min <= p.read_gb_per_s && p.read_gb_per_s <= r.max);
    }
}
