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

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::plateaus::{LevelSize, MeasuredLevels};
use super::{Observer, Step};
use crate::analysis::stats::Summary;
use crate::kernels::bandwidth::{self, Kernels, Op};
use crate::platform::{Buffer, PageRequest};

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

fn slice(buf: &mut Buffer) -> &mut [u8] {
    let len = buf.len();
    // SAFETY: the buffer's usable region is `len` writable bytes we own
    // (`&mut` makes this the only view of it).
    unsafe { std::slice::from_raw_parts_mut(buf.as_ptr() as *mut u8, len) }
}

/// The operations a kernel set has, in the order they are measured.
fn ops(kernels: &Kernels) -> Vec<Op> {
    let mut ops = vec![Op::Read, Op::Write, Op::Copy];
    if kernels.nt_write.is_some() {
        ops.push(Op::NtWrite);
    }
    ops
}

/// One pass of `op` over `buf`: the whole buffer, or for a copy its first
/// half from its second (whole blocks each, so the source stays aligned).
fn pass_over(kernels: &Kernels, op: Op, buf: &mut [u8], value: u64) -> u64 {
    if op == Op::Copy {
        let half = buf.len() / 2 / bandwidth::BLOCK * bandwidth::BLOCK;
        let (dst, src) = buf.split_at_mut(half);
        bandwidth::pass(kernels, op, dst, &src[..half], value);
        op.bytes_per_pass(half)
    } else {
        bandwidth::pass(kernels, op, buf, &[], value);
        op.bytes_per_pass(buf.len())
    }
}

/// `passes` passes of `op` over `buf`; returns the bytes moved. One call
/// where the read loops inside its kernel (a call a pass would time the
/// call as well: a 16 KiB pass is about a hundred cycles), with software
/// prefetches when `prefetched` and the kernel has them, else a call a
/// pass, each write with its own value.
fn passes_over(kernels: &Kernels, op: Op, buf: &mut [u8], passes: u64, prefetched: bool) -> u64 {
    let looped = match (op, prefetched) {
        (Op::Read, true) => bandwidth::read_passes_prefetched(kernels, buf, passes),
        (Op::Read, false) => bandwidth::read_passes(kernels, buf, passes),
        _ => None,
    };
    if looped.is_some() {
        return passes * op.bytes_per_pass(buf.len());
    }
    (0..passes).map(|k| pass_over(kernels, op, buf, k)).sum()
}

/// Passes of `op` that fill `sample_time`, and the seconds a pass took:
/// batches of 1, 2, 4... passes run the way a sample runs them
/// ([`passes_over`]: in one kernel call where the kernel loops its passes)
/// until one lasts a millisecond, scaled from that batch (the buffer is
/// warm after the smaller ones).
fn calibrate(
    kernels: &Kernels,
    op: Op,
    buf: &mut [u8],
    sample_time: Duration,
    prefetched: bool,
) -> (u64, f64) {
    let mut batch = 1u64;
    loop {
        let started = Instant::now();
        passes_over(kernels, op, buf, batch, prefetched);
        let took = started.elapsed();
        if took >= Duration::from_millis(1) || batch >= 1 << 40 {
            let per_pass_s = (took.as_secs_f64() / batch as f64).max(1e-12);
            let passes = ((sample_time.as_secs_f64() / per_pass_s).ceil() as u64).max(1);
            return (passes, per_pass_s);
        }
        batch *= 2;
    }
}

/// How one thread runs `op`: the passes a sample, and whether the read
/// prefetches (None: the kernels have no prefetching read, or not a read).
/// Where there is a prefetching read, both are calibrated on the thread's
/// buffer and the faster pass wins.
fn choose(kernels: &Kernels, op: Op, buf: &mut [u8], sample_time: Duration) -> (u64, Option<bool>) {
    if op != Op::Read || kernels.read_passes_prefetched.is_none() {
        return (calibrate(kernels, op, buf, sample_time, false).0, None);
    }
    let (plain, plain_s) = calibrate(kernels, op, buf, sample_time, false);
    let (ahead, ahead_s) = calibrate(kernels, op, buf, sample_time, true);
    if ahead_s < plain_s {
        (ahead, Some(true))
    } else {
        (plain, Some(false))
    }
}

/// One thread's part of a point: (bytes, seconds) of each sample per
/// operation, and whether its read prefetched ([`choose`]).
struct ThreadSamples {
    samples: Vec<Vec<(u64, f64)>>,
    read_prefetched: Option<bool>,
}

/// One thread's part of a point: pinned, one buffer of `size` mapped and
/// filled once, then for each operation a calibration and `repeats`
/// samples, each started with the other threads behind `barrier`. Returns
/// (bytes, seconds) per operation and sample. A thread that cannot start
/// says so through `failed` at the first barrier, so none waits for it.
fn thread_part(
    plan: &Plan,
    cpu: usize,
    size: u64,
    barrier: &Barrier,
    failed: &AtomicBool,
) -> Result<ThreadSamples> {
    let ready = crate::platform::pin_to_cpu(cpu)
        .with_context(|| format!("pinning a thread to CPU {cpu}"))
        .and_then(|()| {
            let len = (size as usize).max(2 * bandwidth::BLOCK);
            let mut buf = Buffer::map(len, plan.pages)
                .with_context(|| format!("a {size}-byte buffer on CPU {cpu}"))?;
            buf.fill();
            Ok(buf)
        });
    if ready.is_err() {
        failed.store(true, Ordering::SeqCst);
    }
    barrier.wait();
    let mut buf = ready?;
    if failed.load(Ordering::SeqCst) {
        bail!("another bandwidth thread could not start");
    }
    let buf = slice(&mut buf);
    let mut out = ThreadSamples {
        samples: Vec::new(),
        read_prefetched: None,
    };
    for op in ops(&plan.kernels) {
        let (passes, prefetched) = choose(&plan.kernels, op, buf, plan.sample_time);
        if op == Op::Read {
            out.read_prefetched = prefetched;
        }
        let mut samples = Vec::new();
        for _ in 0..plan.repeats.max(1) {
            barrier.wait();
            let started = Instant::now();
            let bytes = passes_over(&plan.kernels, op, buf, passes, prefetched == Some(true));
            samples.push((bytes, started.elapsed().as_secs_f64()));
        }
        out.samples.push(samples);
    }
    Ok(out)
}

/// Each operation's samples, GB/s.
type Figures = Vec<(Op, Vec<f64>)>;

/// Every operation's samples at one size and thread count (GB/s summed
/// over the threads, per sample), and how many threads' reads prefetched
/// (None where no thread had the choice).
fn measure_point(plan: &Plan, size: u64, threads: usize) -> Result<(Figures, Option<usize>)> {
    let barrier = Barrier::new(threads);
    let failed = AtomicBool::new(false);
    let parts: Vec<Result<ThreadSamples>> = std::thread::scope(|scope| {
        let handles: Vec<_> = plan.cpus[..threads]
            .iter()
            .map(|&cpu| {
                let (barrier, failed) = (&barrier, &failed);
                scope.spawn(move || thread_part(plan, cpu, size, barrier, failed))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| bail!("a bandwidth thread panicked"))
            })
            .collect()
    });
    let parts = parts.into_iter().collect::<Result<Vec<_>>>()?;
    let prefetched = parts
        .iter()
        .filter_map(|part| part.read_prefetched)
        .fold(None, |n: Option<usize>, p| {
            Some(n.unwrap_or(0) + usize::from(p))
        });
    let figures = ops(&plan.kernels)
        .into_iter()
        .enumerate()
        .map(|(k, op)| {
            let samples = (0..plan.repeats.max(1) as usize)
                .map(|r| {
                    parts
                        .iter()
                        .map(|part| gb_per_s(part.samples[k][r].0, part.samples[k][r].1))
                        .sum()
                })
                .collect();
            (op, samples)
        })
        .collect();
    Ok((figures, prefetched))
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

    #[test]
    fn only_a_read_with_a_prefetching_variant_is_timed_both_ways() {
        let mut buf = vec![1u8; 64 << 10];
        let sample = Duration::from_millis(2);
        for kernels in bandwidth::table() {
            let runnable = bandwidth::by_name(kernels.name, &bandwidth::Features::detect()).is_ok();
            if !runnable {
                continue;
            }
            let (passes, prefetched) = choose(&kernels, Op::Read, &mut buf, sample);
            assert!(passes >= 1);
            assert_eq!(
                prefetched.is_some(),
                kernels.read_passes_prefetched.is_some(),
                "{}",
                kernels.name
            );
            assert_eq!(choose(&kernels, Op::Write, &mut buf, sample).1, None);
        }
    }
}
