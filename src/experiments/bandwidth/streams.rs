//! One point of `memlat bandwidth`: the threads, each pinned to its CPU
//! with a buffer of its own, calibrating each operation (and choosing the
//! faster of a read with and without software prefetches, where the
//! kernels have both) and timing its samples behind a barrier shared
//! with the others.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::{Plan, gb_per_s};
use crate::kernels::bandwidth::{self, Kernels, Op};
use crate::platform::Buffer;

fn slice(buf: &mut Buffer) -> &mut [u8] {
    let len = buf.len();
    // SAFETY: the buffer's usable region is `len` writable bytes we own
    // (`&mut` makes this the only view of it).
    unsafe { std::slice::from_raw_parts_mut(buf.as_ptr() as *mut u8, len) }
}

/// The operations a kernel set has, in the order they are measured.
pub(super) fn ops(kernels: &Kernels) -> Vec<Op> {
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
    if op == Op::Read && bandwidth::read_passes(kernels, buf, passes, prefetched).is_some() {
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
pub(super) fn measure_point(
    plan: &Plan,
    size: u64,
    threads: usize,
) -> Result<(Figures, Option<usize>)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
