//! One cache line bounced between two pinned threads. Two methods:
//! - `cas`: both threads compare-and-swap one counter, each waiting for the
//!   other's increment (a round trip moves the line there and back);
//! - `read-write`: one thread writes `ping`, the other spins until it sees
//!   it and writes `pong` on a second line (each write invalidates the
//!   reader's copy; the reader then fetches it).
//!
//! One-way latency = time of many round trips / (2 x round trips). Every
//! sample holds enough round trips to last [`SAMPLE_TIME`], thousands of
//! times the clock's resolution: never a 0 ns from a coarse clock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};

/// How the line is bounced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Compare-and-swap on one line.
    Cas,
    /// A write seen by a spinning reader, answered on a second line.
    ReadWrite,
}

impl Method {
    /// The name on the command line and in output.
    pub fn name(self) -> &'static str {
        match self {
            Method::Cas => "cas",
            Method::ReadWrite => "read-write",
        }
    }
}

/// How long one sample lasts at least.
pub const SAMPLE_TIME: Duration = Duration::from_micros(200);

/// Samples per pair; the median and minimum are kept.
pub const SAMPLES: usize = 15;

/// A cache line of its own (128 bytes: adjacent-line prefetchers pair lines).
#[repr(align(128))]
#[derive(Default)]
struct Line(AtomicU64);

/// One pair's one-way latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairLatency {
    /// Median over the samples, ns.
    pub median_ns: f64,
    /// Fastest sample, ns.
    pub min_ns: f64,
    /// Round trips per sample.
    pub round_trips: u64,
}

/// The responder's side of `round_trips` round trips, `samples` times.
fn respond(
    method: Method,
    lines: &[Line; 2],
    round_trips: u64,
    samples: usize,
    abort: &AtomicBool,
) {
    let total = round_trips * samples as u64;
    for i in 0..total {
        match method {
            Method::Cas => {
                let want = 2 * i + 1;
                while lines[0]
                    .0
                    .compare_exchange(want, want + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
                {
                    if abort.load(Ordering::Relaxed) {
                        return;
                    }
                    std::hint::spin_loop();
                }
            }
            Method::ReadWrite => {
                while lines[0].0.load(Ordering::Acquire) != i + 1 {
                    if abort.load(Ordering::Relaxed) {
                        return;
                    }
                    std::hint::spin_loop();
                }
                lines[1].0.store(i + 1, Ordering::Release);
            }
        }
    }
}

/// The initiator's side: times each sample of `round_trips` round trips.
fn initiate(method: Method, lines: &[Line; 2], round_trips: u64, samples: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(samples);
    let mut i = 0u64;
    for _ in 0..samples {
        let started = Instant::now();
        for _ in 0..round_trips {
            match method {
                Method::Cas => {
                    let want = 2 * i;
                    while lines[0]
                        .0
                        .compare_exchange(want, want + 1, Ordering::AcqRel, Ordering::Relaxed)
                        .is_err()
                    {
                        std::hint::spin_loop();
                    }
                }
                Method::ReadWrite => {
                    lines[0].0.store(i + 1, Ordering::Release);
                    while lines[1].0.load(Ordering::Acquire) != i + 1 {
                        std::hint::spin_loop();
                    }
                }
            }
            i += 1;
        }
        times.push(started.elapsed());
    }
    if method == Method::Cas {
        // The responder's last increment.
        while lines[0].0.load(Ordering::Acquire) != 2 * i {
            std::hint::spin_loop();
        }
    }
    times
}

/// Runs `samples` samples of `round_trips` between `from` (this side) and
/// `to`, each thread pinned; returns each sample's one-way latency in ns.
fn session(
    from: usize,
    to: usize,
    method: Method,
    round_trips: u64,
    samples: usize,
) -> Result<Vec<f64>> {
    let lines: [Line; 2] = Default::default();
    let abort = AtomicBool::new(false);
    let times = std::thread::scope(|scope| -> Result<Vec<Duration>> {
        let responder = scope.spawn(|| {
            crate::platform::pin_to_cpu(to)
                .map(|()| respond(method, &lines, round_trips, samples, &abort))
        });
        let pinned = crate::platform::pin_to_cpu(from);
        if pinned.is_err() {
            abort.store(true, Ordering::Relaxed);
        }
        let times = pinned.map(|()| initiate(method, &lines, round_trips, samples));
        let answered = responder
            .join()
            .map_err(|_| anyhow!("the responder on CPU {to} panicked"))?;
        answered.map_err(|e| anyhow!("pinning to CPU {to}: {e}"))?;
        times.map_err(|e| anyhow!("pinning to CPU {from}: {e}"))
    })?;
    Ok(times
        .iter()
        .map(|t| t.as_secs_f64() * 1e9 / (2 * round_trips) as f64)
        .collect())
}

/// The one-way latency between `from` and `to`: a short calibration picks
/// round trips for [`SAMPLE_TIME`], then [`SAMPLES`] samples.
pub fn pair(from: usize, to: usize, method: Method) -> Result<PairLatency> {
    let probe = 256;
    let first = session(from, to, method, probe, 1)?;
    let per_round_trip = (first[0] * 2.0).max(1.0);
    let round_trips = ((SAMPLE_TIME.as_secs_f64() * 1e9 / per_round_trip).ceil() as u64).max(probe);
    let mut ns = session(from, to, method, round_trips, SAMPLES)?;
    ns.sort_by(f64::total_cmp);
    Ok(PairLatency {
        median_ns: ns[ns.len() / 2],
        min_ns: ns[0],
        round_trips,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_bounced_between_two_cpus_takes_time() {
        let cpus = crate::platform::allowed_cpus();
        if cpus.len() < 2 {
            println!("SKIPPED: needs two CPUs");
            return;
        }
        for method in [Method::Cas, Method::ReadWrite] {
            let p = pair(cpus[0], cpus[1], method).unwrap();
            assert!(p.min_ns > 0.0 && p.min_ns <= p.median_ns, "{p:?}");
            assert!(p.round_trips >= 256);
        }
    }
}
