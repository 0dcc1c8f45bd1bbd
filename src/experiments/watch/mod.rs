//! `memlat watch`: each level's latency and the last cache level's edge
//! over time, at a cost low enough to run beside a workload.
//!
//! Every chain is built, linked and faulted in once, when the [`Watch`]
//! is made; an interval then costs only its samples: for each size a warm
//! up (two streaming passes over a cache-sized buffer put it back in its
//! level after the memory chain evicted it, and a short walk of its chain
//! the TLB; a few thousand loads of the memory chain warm its page walks)
//! and the fastest of [`SAMPLE_ROUNDS`] timed runs.
//! The runs' length is set on the first interval so that all of it fits
//! the duty cycle, and shortened when an interval spends more.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! use std::time::Duration;
//! let engine = memlat::Engine::builder().cpu(0).build()?;
//! let watch = memlat::experiments::watch::Watch::probe(engine, Duration::from_secs(1), None, 0.1)?;
//! for interval in watch.take(10) {
//!     let interval = interval?;
//!     println!("{:.1}s: {:?} ns", interval.t_s, interval.ns);
//! }
//! # Ok(()) }
//! ```

pub mod plan;
pub mod record;

use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};

pub use plan::{DEFAULT_DUTY, EdgePlan, WatchPlan, edge_bytes};
pub use record::{Event, Interval, SeriesSummary, WatchFile, WatchHeader, WatchSummary};

use crate::chain::{Chain, Pattern};
use crate::engine::{Engine, Point, Strategy, Workload};
use crate::experiments::plateaus::{self, MeasuredLevels};
use crate::experiments::sweep::utc_timestamp;
use crate::kernels::Kernel;

/// Timed runs per sample, the fastest kept: a disturbance (the thread
/// descheduled, another tenant's burst) only slows a run. On this 2-vCPU
/// guest under a load of 13, two runs both disturbed read DRAM at 2-4 us
/// in about one interval of ten; a third run costs about a third more.
pub const SAMPLE_ROUNDS: u32 = 3;

/// Loads walked to warm the memory chain: enough to refill the page-walk
/// caches for its pages, far fewer than its cycle (millions of misses).
pub const MEMORY_WARM_LOADS: u64 = 4096;

/// Sequential passes over a cache-sized probe's buffer before it is timed:
/// on a victim L3 (AMD Zen) one pass leaves the lines split between L2 and
/// L3 as they were filled, the second settles them as the timed runs find
/// them. A pass streams (the prefetchers follow address order), so the
/// edge probes' 2-16 MiB cost about a millisecond, where one cycle of their
/// chains took 20-40 ms of dependent loads and blew the duty cycle.
pub const WARM_PASSES: u32 = 2;

/// Chain loads walked after the passes, at most: the chain's own order
/// brings back the TLB and page-walk caches' state the timed runs see.
pub const MAX_WARM_LOADS: u64 = 1 << 15;

/// The share of the duty budget given to the timed runs on the first
/// interval; the rest is left for warm walks and the clock, until the
/// first interval's own cost is known.
const TIMED_SHARE: f64 = 0.5;

/// The share of the duty budget an interval aims at: intervals vary by a
/// tenth or two with other tenants, and the budget is a ceiling.
const BUDGET_TARGET: f64 = 0.8;

/// Trips a timed run keeps at least however tight the budget: 10,000
/// loads, the engine's own calibration floor, so a run stays far above the
/// timer's resolution.
const MIN_TRIPS: u64 = 100;

/// The longest timed run, however long the interval: a long `--interval`
/// (1h: 360 s of duty) would otherwise spend its budget in minute-long runs,
/// deaf to Ctrl-C until they end; 20 ms of dependent loads already read a
/// level to a fraction of a percent.
pub const MAX_SAMPLE_TIME: Duration = Duration::from_millis(20);

/// The watch was stopped (`stop_when`) between two samples of an
/// interval: the iterator ends without that interval.
#[derive(Debug, thiserror::Error)]
#[error("the watch was stopped inside an interval")]
pub struct Stopped;

/// One size measured every interval, with its chain kept.
struct Probe {
    size: u64,
    memory: bool,
    workload: Workload,
    chain: Chain,
    trips: Option<u64>,
}

/// Measures a [`WatchPlan`] interval after interval; an iterator of
/// [`Interval`]s that waits for each interval's start.
pub struct Watch {
    engine: Engine,
    plan: WatchPlan,
    header: WatchHeader,
    probes: Vec<Probe>,
    kernel: Kernel,
    started: Option<Instant>,
    next: u64,
    steal: Option<CpuTimes>,
    sample_time: Duration,
    stop: Box<dyn Fn() -> bool>,
}

impl Watch {
    /// Builds every chain of `plan` (random, `template`'s line, pages,
    /// node, kernel and seed) once, on `engine`'s CPU.
    pub fn new(
        engine: Engine,
        plan: WatchPlan,
        plateaus: MeasuredLevels,
        template: &Point,
    ) -> Result<Watch> {
        let kernel = Kernel::Chase(template.kernel);
        let mut notes = Vec::new();
        let mut probes = Vec::new();
        for (k, level) in plan.probes().iter().enumerate() {
            let point = Point {
                size: level.size,
                pattern: Pattern::Random,
                ..template.clone()
            };
            point.validate()?;
            let chain = Chain::build(
                Pattern::Random,
                level.size,
                template.line,
                template.line,
                template.seed.wrapping_add(k as u64),
            )?;
            let mut workload = Workload::prepare(level.size, template.pages, template.node)
                .with_context(|| format!("the {} chain", level.name))?;
            workload.link(&chain, kernel)?;
            notes.extend(
                workload
                    .notices
                    .drain(..)
                    .map(|n| format!("{}: {n}", level.name)),
            );
            if level.name == "memory" {
                notes.push(format!(
                    "memory chain backed by {} pages",
                    workload.page_backing.obtained
                ));
            }
            probes.push(Probe {
                size: level.size,
                memory: level.name == "memory",
                workload,
                chain,
                trips: None,
            });
        }
        let budget = plan.duty * plan.interval_s;
        let per_probe = budget * TIMED_SHARE / (probes.len().max(1) as f64 * 2.0);
        let sample_time =
            Duration::from_secs_f64(per_probe / f64::from(SAMPLE_ROUNDS)).min(MAX_SAMPLE_TIME);
        let header = WatchHeader {
            started: String::new(),
            cpu: engine.cpu(),
            plan: plan.clone(),
            plateaus,
            line: template.line,
            kernel: template.kernel.name().to_string(),
            notes,
        };
        Ok(Watch {
            steal: CpuTimes::read(engine.cpu()),
            engine,
            plan,
            header,
            probes,
            kernel,
            started: None,
            next: 0,
            sample_time,
            stop: Box::new(|| false),
        })
    }

    /// A watch of this machine's remembered plateaus (or a probe now),
    /// random chains from [`Point::default`], for `duration` (`None`: until
    /// the caller stops iterating) with at most `duty` of each interval
    /// spent measuring.
    pub fn probe(
        mut engine: Engine,
        interval: Duration,
        duration: Option<Duration>,
        duty: f64,
    ) -> Result<Watch> {
        plan::check(interval, duty).map_err(anyhow::Error::msg)?;
        let template = Point::default();
        let host = crate::platform::host::Host::this();
        let levels = match plateaus::remembered(&host) {
            Some(levels) => levels,
            None => {
                let caches = crate::platform::caches::data_caches(engine.cpu());
                let plan = plateaus::probe_plan(
                    &template,
                    engine.cpu(),
                    &caches,
                    crate::platform::mem_available_bytes(),
                );
                plateaus::probe(&mut engine, &plan)?
            }
        };
        let plan = WatchPlan::new(
            &levels,
            template.line,
            crate::platform::mem_available_bytes(),
            interval,
            duration,
            duty,
        );
        Watch::new(engine, plan, levels, &template)
    }

    /// Ends the iterator once `stop` says so (Ctrl-C): at the next interval,
    /// or at the next sample of the interval in progress, which is dropped.
    pub fn stop_when(mut self, stop: impl Fn() -> bool + 'static) -> Watch {
        self.stop = Box::new(stop);
        self
    }

    /// The header a file of this watch starts with (`started` set once the
    /// first interval has begun).
    pub fn header(&self) -> &WatchHeader {
        &self.header
    }

    /// The plan.
    pub fn plan(&self) -> &WatchPlan {
        &self.plan
    }

    /// How long each timed run lasts at most (the duty's share, at most
    /// [`MAX_SAMPLE_TIME`]).
    pub fn sample_time(&self) -> Duration {
        self.sample_time
    }

    /// Seconds since the first interval began.
    pub fn elapsed_s(&self) -> f64 {
        self.started.map_or(0.0, |s| s.elapsed().as_secs_f64())
    }

    /// Waits for the next interval's start; `false` when the duration is
    /// over or `stop` said so (checked every 50 ms while waiting).
    fn wait(&mut self) -> bool {
        let Some(started) = self.started else {
            return !(self.stop)();
        };
        let at = Duration::from_secs_f64(self.plan.interval_s * self.next as f64);
        if self
            .plan
            .duration_s
            .is_some_and(|d| at.as_secs_f64() >= d - 1e-9)
        {
            return false;
        }
        loop {
            if (self.stop)() {
                return false;
            }
            let now = started.elapsed();
            if now >= at {
                return true;
            }
            std::thread::sleep((at - now).min(Duration::from_millis(50)));
        }
    }

    /// Measures one interval now.
    pub fn measure(&mut self) -> Result<Interval> {
        if self.started.is_none() {
            self.settle()?;
        }
        let started = *self.started.get_or_insert_with(Instant::now);
        if self.header.started.is_empty() {
            self.header.started = utc_timestamp(SystemTime::now());
        }
        let t0 = Instant::now();
        let cpu0 = thread_cpu_seconds();
        let t_s = started.elapsed().as_secs_f64();
        let ns = self.sample_all()?;
        let spent = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        // The duty cycle is what the watch takes from the CPU, not the
        // time it waited for it while other tasks ran.
        self.fit_budget(cpu.unwrap_or(spent));
        let levels = self.plan.levels.len();
        let edge_count = self.plan.edge.as_ref().map_or(0, |e| e.sizes.len());
        // Probes are the cache levels, the edge, then memory (plan.probes()).
        let caches = levels - 1;
        let mut level_ns: Vec<f64> = ns[..caches].to_vec();
        level_ns.push(ns[caches + edge_count]);
        let edge_ns = ns[caches..caches + edge_count].to_vec();
        let edge = self.plan.edge.as_ref().and_then(|e| {
            // The latency the level serves at: its plateau's, as the sweep
            // measured it; this interval's middle sample when none was kept.
            let plateau = self
                .header
                .plateaus
                .levels
                .iter()
                .find(|p| p.name == e.level);
            let level = match plateau {
                Some(p) if p.ns.is_finite() && p.ns > 0.0 => p.ns,
                _ => level_ns[self.plan.levels.iter().position(|l| l.name == e.level)?],
            };
            edge_bytes(&e.sizes, &edge_ns, level, level_ns[levels - 1])
        });
        let now = CpuTimes::read(self.engine.cpu());
        let steal = match (&self.steal, &now) {
            (Some(a), Some(b)) => b.steal_since(a),
            _ => None,
        };
        self.steal = now;
        let interval = Interval {
            index: self.next,
            t_s,
            utc: utc_timestamp(SystemTime::now()),
            ns: level_ns,
            edge_ns,
            edge_bytes: edge,
            steal,
            spent_ms: spent * 1e3,
            cpu_ms: cpu.map(|c| c * 1e3),
        };
        self.next += 1;
        Ok(interval)
    }

    /// One untimed pass over every probe before the first interval: it
    /// sets each probe's run length, and leaves the caches, TLB and clock
    /// as an interval finds them rather than as building hundreds of MiB of
    /// chains left them. Without it the first interval's L3 read 24-45 ns
    /// against 14-15 after, in each of six 40 s watches on the Zen 4 guest.
    fn settle(&mut self) -> Result<()> {
        self.sample_all().map(drop)
    }

    /// Every probe's reading, in the plan's order.
    fn sample_all(&mut self) -> Result<Vec<f64>> {
        self.probes
            .iter_mut()
            .map(|probe| {
                if (self.stop)() {
                    return Err(Stopped.into());
                }
                sample(
                    &self.engine,
                    probe,
                    self.kernel,
                    self.sample_time,
                    self.header.line,
                )
            })
            .collect()
    }

    /// Shortens every timed run when an interval spent more than
    /// [`BUDGET_TARGET`] of what the duty cycle allows.
    fn fit_budget(&mut self, spent: f64) {
        let budget = self.plan.duty * self.plan.interval_s * BUDGET_TARGET;
        if spent <= budget {
            return;
        }
        let scale = budget / spent;
        for probe in &mut self.probes {
            if let Some(trips) = &mut probe.trips {
                *trips = ((*trips as f64 * scale) as u64).max(MIN_TRIPS);
            }
        }
    }

    /// The intervals so far and the time measured, summarised.
    pub fn summarise(
        &self,
        intervals: &[Interval],
        cpu_s: Option<f64>,
        interrupted: bool,
    ) -> WatchSummary {
        record::summarise(
            &self.header,
            intervals,
            self.elapsed_s(),
            cpu_s,
            interrupted,
        )
    }

    /// Gives the engine back.
    pub fn into_engine(self) -> Engine {
        self.engine
    }
}

impl Iterator for Watch {
    type Item = Result<Interval>;

    fn next(&mut self) -> Option<Result<Interval>> {
        if !self.wait() {
            return None;
        }
        match self.measure() {
            Err(e) if e.is::<Stopped>() => None,
            measured => Some(measured),
        }
    }
}

/// One size's reading: warm passes and a short walk, then the fastest of
/// the timed runs.
fn sample(
    engine: &Engine,
    probe: &mut Probe,
    kernel: Kernel,
    sample_time: Duration,
    line: u64,
) -> Result<f64> {
    let mut walker = probe.workload.walker(&probe.chain, kernel);
    let per_trip = kernel.loads_per_trip();
    let warm = if probe.memory {
        MEMORY_WARM_LOADS
    } else {
        for _ in 0..WARM_PASSES {
            probe.workload.touch(probe.size, line);
        }
        probe.chain.len().min(MAX_WARM_LOADS)
    };
    walker.walk(warm.div_ceil(per_trip).max(1))?;
    let timed = engine
        .time(
            &mut walker,
            &mut probe.trips,
            sample_time,
            Strategy::Fastest {
                rounds: SAMPLE_ROUNDS,
            },
        )
        .with_context(|| format!("sampling {} bytes", probe.size))?;
    Ok(timed.ns_per_load)
}

/// The calling thread's CPU time, seconds.
fn thread_cpu_seconds() -> Option<f64> {
    // SAFETY: clock_gettime fills the timespec it is given; all-zero is valid.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        (libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) == 0).then_some(ts)
    }?;
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9)
}

/// A CPU's times from /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuTimes {
    steal: u64,
    total: u64,
}

impl CpuTimes {
    fn read(cpu: usize) -> Option<CpuTimes> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        CpuTimes::parse(&text, cpu)
    }

    /// The `cpuN` line: user nice system idle iowait irq softirq steal ...
    fn parse(text: &str, cpu: usize) -> Option<CpuTimes> {
        let name = format!("cpu{cpu}");
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        (fields.len() == 8).then(|| CpuTimes {
            steal: fields[7],
            total: fields.iter().sum(),
        })
    }

    /// The share of ticks stolen since `before`; `None` when no tick passed.
    fn steal_since(&self, before: &CpuTimes) -> Option<f64> {
        let total = self.total.checked_sub(before.total)?;
        let steal = self.steal.checked_sub(before.steal)?;
        (total > 0).then(|| steal as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_read_from_the_cpu_line() {
        let text =
            "cpu  10 0 10 100 0 0 0 5 0 0\ncpu0 5 0 5 50 0 0 0 2 0 0\ncpu1 5 0 5 50 0 0 0 3 0 0\n";
        let a = CpuTimes::parse(text, 1).unwrap();
        assert_eq!(
            a,
            CpuTimes {
                steal: 3,
                total: 63
            }
        );
        let later = "cpu1 5 0 5 80 0 0 0 13 0 0\n";
        let b = CpuTimes::parse(later, 1).unwrap();
        assert_eq!(b.steal_since(&a), Some(10.0 / 40.0));
        assert_eq!(a.steal_since(&a), None);
        assert_eq!(CpuTimes::parse(text, 7), None);
    }
}
