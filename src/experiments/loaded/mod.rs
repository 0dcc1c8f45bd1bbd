//! `memlat loaded`: the chase latency while other threads load the memory
//! system (MLC's loaded latency, multichase's multiload). One thread chases
//! a random chain beyond the caches; `threads` others read or write their own
//! buffers with a delay after every 4 KiB, swept from heavy to none. Each
//! point pairs the chase latency with the bandwidth the traffic threads
//! counted themselves; the knee is where latency reaches twice unloaded,
//! the least latency seen ([`crate::analysis::loaded`]).

pub mod plan;
pub mod traffic;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{Observer, Step};
use crate::analysis::loaded::{Knee, knee};
use crate::engine::{Engine, Point};
pub use plan::{CpuPlan, plan_cpus};
use traffic::{Control, PAUSED, Traffic};

/// Delays by default (spin iterations after every 4 KiB a thread moves),
/// heaviest first: from a trickle to as fast as the threads can go. A
/// choice of points: steps of about sqrt 10 (half a decade) span four
/// decades of delay in eight points; finer steps would place the knee
/// closer at the cost of more points, each a chase's measurement.
pub const DEFAULT_DELAYS: [u32; 8] = [100_000, 30_000, 10_000, 3_000, 1_000, 300, 100, 0];

/// How long the traffic runs at a new delay before the chase is timed: a
/// choice of time, far longer than the queues in front of memory take to
/// fill (microseconds) and than a core's or the memory's frequency change
/// under load takes (tens of microseconds to a few milliseconds).
pub const SETTLE: Duration = Duration::from_millis(100);

/// What to measure.
#[derive(Debug, Clone)]
pub struct LoadedPlan {
    /// The chase (a random chain beyond the caches).
    pub chase: Point,
    /// What the traffic threads do.
    pub traffic: Traffic,
    /// Delays, in the order measured.
    pub delays: Vec<u32>,
    /// Where every thread runs.
    pub cpus: CpuPlan,
    /// Each traffic thread's buffer, bytes.
    pub traffic_bytes: u64,
}

/// Lowest, median and highest chase latency over the repeats, ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Lowest repeat.
    pub min: f64,
    /// Median of the repeats.
    pub median: f64,
    /// Highest repeat.
    pub max: f64,
}

/// One point of the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedPoint {
    /// Spin iterations after every 4 KiB; null for the idle point.
    pub delay: Option<u32>,
    /// What the traffic threads did.
    pub traffic: String,
    /// Traffic threads running (0 for idle).
    pub threads: usize,
    /// Bytes per second all traffic threads moved, as they counted.
    pub bandwidth_bytes_per_second: f64,
    /// The chase latency meanwhile.
    pub latency_ns: Spread,
    /// Whether this point was measured again (its latency fell below one at
    /// lighter traffic); the figures are the second measurement's.
    #[serde(default)]
    pub remeasured: bool,
}

/// A loaded-latency curve.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadedResult {
    /// The chase latency with no traffic, ns (median).
    pub idle_latency_ns: f64,
    /// Idle first, then each delay as measured.
    pub points: Vec<LoadedPoint>,
    /// Where latency reaches twice unloaded (the least seen); null if it never does.
    pub knee: Option<Knee>,
    /// Where every thread ran.
    pub cpus: CpuPlan,
    /// The chase's buffer, bytes.
    pub chase_size_bytes: u64,
    /// Each traffic thread's buffer, bytes.
    pub traffic_size_bytes: u64,
    /// Whether every planned point was measured (not cut short).
    pub complete: bool,
    /// Whether latency never fell as traffic rose (after measuring the
    /// points that broke it again); false flags a curve not to be trusted.
    #[serde(default = "yes")]
    pub monotonic: bool,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

fn yes() -> bool {
    true
}

/// Sets `stop` when dropped, so the traffic threads end on every way out.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs the plan: starts the traffic threads (pinned, each faulting in its
/// own buffer), measures idle, then each delay.
pub fn run(
    engine: &mut Engine,
    plan: &LoadedPlan,
    observer: &mut dyn Observer<Vec<LoadedPoint>>,
) -> Result<LoadedResult> {
    let control = Control::default();
    control.delay.store(PAUSED, Ordering::Relaxed);
    let ready = AtomicUsize::new(0);
    let pin_failures = AtomicUsize::new(0);
    let words = (plan.traffic_bytes / 8) as usize;
    let points = std::thread::scope(|scope| -> Result<Vec<LoadedPoint>> {
        let _stop = StopOnDrop(&control.stop);
        for &cpu in &plan.cpus.traffic {
            let (control, ready, pin_failures) = (&control, &ready, &pin_failures);
            scope.spawn(move || {
                if crate::platform::pin_to_cpu(cpu).is_err() {
                    pin_failures.fetch_add(1, Ordering::Relaxed);
                }
                // Faulted in by this thread: local to its node.
                let mut buffer = vec![1u64; words];
                ready.fetch_add(1, Ordering::Relaxed);
                traffic::generate(&mut buffer, plan.traffic, control);
            });
        }
        while ready.load(Ordering::Relaxed) < plan.cpus.traffic.len() {
            std::thread::sleep(Duration::from_millis(5));
        }
        measure_points(engine, plan, &control, observer)
    })?;
    let idle = points.first().map_or(f64::NAN, |p| p.latency_ns.median);
    let curve: Vec<(f64, f64)> = points
        .iter()
        .skip(1)
        .map(|p| (p.bandwidth_bytes_per_second, p.latency_ns.median))
        .collect();
    let mut notes = Vec::new();
    let knee = knee(idle, &curve);
    if knee.is_none() && !curve.is_empty() {
        notes.push(no_knee(idle, &plan.cpus));
    }
    let still = falls(&points);
    let monotonic = still.is_empty();
    let again: Vec<String> = points
        .iter()
        .filter(|p| p.remeasured)
        .map(|p| p.delay.map_or("idle".into(), |d| format!("delay {d}")))
        .collect();
    if !again.is_empty() {
        notes.push(format!(
            "latency fell as traffic rose, so these points were measured again: {}",
            again.join(", ")
        ));
    }
    if !monotonic {
        notes.push(format!(
            "the curve stays non-monotonic after measuring again (latency falls at {} point(s) as traffic rises): other tenants or the clock moved during the run; do not read a knee from it",
            still.len()
        ));
    }
    if pin_failures.load(Ordering::Relaxed) > 0 {
        notes.push("some traffic threads could not be pinned to their CPUs".into());
    }
    if !plan.cpus.smt_with_chaser.is_empty() {
        notes.push(format!(
            "traffic CPU(s) {:?} share a core with the chaser (SMT): they compete for its load ports and miss buffers too, not only for memory",
            plan.cpus.smt_with_chaser
        ));
    }
    if plan.traffic == Traffic::NtWrite && !traffic::NT_WRITE_NATIVE {
        notes.push("nt-write is a plain write on this ISA (no non-temporal store)".into());
    }
    notes.push(
        "bandwidth counts the bytes the traffic threads read or wrote; a write to memory also reads the line first (except nt-write), so the bus carries up to twice that".into(),
    );
    Ok(LoadedResult {
        idle_latency_ns: idle,
        complete: points.len() == plan.delays.len() + 1,
        monotonic,
        points,
        knee,
        cpus: plan.cpus.clone(),
        chase_size_bytes: plan.chase.size,
        traffic_size_bytes: plan.traffic_bytes,
        notes,
    })
}

/// Why no knee, and what would reach one: more --threads only where this
/// process may use more CPUs than it does.
fn no_knee(idle: f64, cpus: &CpuPlan) -> String {
    let threads = cpus.traffic.len();
    let spare = cpus.usable.saturating_sub(threads + 1);
    let advice = if spare > 0 {
        format!("up to {spare} more --threads may")
    } else {
        format!(
            "every CPU this process may use ({}) already runs the chase or traffic, so no more --threads can; a larger machine (or taskset with more CPUs) may",
            cpus.usable
        )
    };
    format!(
        "the chase latency stayed below twice idle ({:.1} ns): {threads} traffic thread(s) did not saturate the memory system; {advice}",
        crate::analysis::loaded::KNEE_FACTOR * idle
    )
}

/// The points whose latency falls below one at lighter traffic ([`crate::analysis::loaded::falls`]).
fn falls(points: &[LoadedPoint]) -> Vec<usize> {
    let medians: Vec<f64> = points.iter().map(|p| p.latency_ns.median).collect();
    let ranges: Vec<f64> = points
        .iter()
        .map(|p| p.latency_ns.max - p.latency_ns.min)
        .collect();
    crate::analysis::loaded::falls(&medians, &ranges)
}

/// Idle, then every delay: set it, let the traffic settle, time the chase
/// while the threads count their bytes; then once more each point whose
/// latency fell below one at lighter traffic.
fn measure_points(
    engine: &mut Engine,
    plan: &LoadedPlan,
    control: &Control,
    observer: &mut dyn Observer<Vec<LoadedPoint>>,
) -> Result<Vec<LoadedPoint>> {
    let settings: Vec<Option<u32>> = std::iter::once(None)
        .chain(plan.delays.iter().copied().map(Some))
        .collect();
    let labels: Vec<String> = settings
        .iter()
        .map(|d| match d {
            None => "idle (no traffic)".into(),
            Some(d) => format!("{} traffic, delay {d}", plan.traffic.name()),
        })
        .collect();
    let cost = super::sweep::cost_ms(&plan.chase) + SETTLE.as_millis() as u64;
    observer.planned(&labels.iter().map(|l| (l.clone(), cost)).collect::<Vec<_>>());
    let mut points = Vec::new();
    for (index, delay) in settings.iter().enumerate() {
        if observer.interrupted() {
            break;
        }
        let step = Step {
            index,
            total: settings.len(),
            label: &labels[index],
            cost_ms: cost,
        };
        observer.begin(&step);
        points.push(measure_one(engine, plan, control, *delay, &labels[index])?);
        observer.checkpoint(&points)?;
        observer.end(&step);
    }
    if points.len() == settings.len() && !observer.interrupted() {
        for i in falls(&points) {
            let mut again = measure_one(engine, plan, control, settings[i], &labels[i])?;
            again.remeasured = true;
            points[i] = again;
            observer.checkpoint(&points)?;
        }
    }
    control.delay.store(PAUSED, Ordering::Relaxed);
    Ok(points)
}

/// One point: the delay set, the traffic settled, the chase timed while
/// the threads count their bytes.
fn measure_one(
    engine: &mut Engine,
    plan: &LoadedPlan,
    control: &Control,
    delay: Option<u32>,
    label: &str,
) -> Result<LoadedPoint> {
    control
        .delay
        .store(delay.unwrap_or(PAUSED), Ordering::Relaxed);
    std::thread::sleep(SETTLE);
    control.bytes.store(0, Ordering::Relaxed);
    let started = Instant::now();
    let m = engine
        .measure(&plan.chase)
        .with_context(|| format!("measuring the chase, {label}"))?;
    let seconds = started.elapsed().as_secs_f64();
    let bytes = control.bytes.load(Ordering::Relaxed) as f64;
    Ok(LoadedPoint {
        delay,
        traffic: plan.traffic.name(),
        threads: if delay.is_some() {
            plan.cpus.traffic.len()
        } else {
            0
        },
        bandwidth_bytes_per_second: if delay.is_some() {
            bytes / seconds
        } else {
            0.0
        },
        latency_ns: Spread {
            min: m.ns_per_load.min,
            median: m.ns_per_load.median,
            max: m.ns_per_load.max,
        },
        remeasured: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpus(usable: usize, traffic: Vec<usize>) -> CpuPlan {
        CpuPlan {
            chaser: 0,
            traffic,
            smt_with_chaser: Vec::new(),
            other_node: Vec::new(),
            usable,
        }
    }

    #[test]
    fn a_fall_is_judged_to_the_engines_own_precision() {
        assert_eq!(
            crate::analysis::loaded::FALL_TOLERANCE,
            crate::engine::PRECISION_MEMORY
        );
    }

    #[test]
    fn more_threads_are_advised_only_where_cpus_are_left() {
        // A 2-vCPU guest: the chaser and one traffic thread use both.
        let n = no_knee(100.0, &cpus(2, vec![1]));
        assert!(!n.contains("more --threads may"), "{n}");
        assert!(n.contains("no more --threads can"), "{n}");
        let n = no_knee(100.0, &cpus(16, vec![1, 2, 3]));
        assert!(n.contains("up to 12 more --threads may"), "{n}");
    }
}
