//! The measurement engine: buffer, chain, warm-up, calibration, repeats, checks.
//!
//! One [`Engine`] per process: it pins the thread, opens the counter group and
//! keeps the core-clock estimate current; [`Engine::measure`] turns one
//! [`PointSpec`] into one [`Measurement`]. The method (DESIGN.md):
//! - every page is filled with a non-zero pattern, the chain walked once in full
//!   (which also proves it is one cycle), before anything is timed;
//! - each sample times A loads and 2A loads and keeps the difference, so timer
//!   reads, the call and counter start/stop cancel out;
//! - the kernel's final node is checked against the node the chain says must
//!   come next; a mismatch is an error, never a number.

mod result;
mod timing;

pub(crate) use result::system;
pub use result::{MeasureError, Measurement, PointSpec, Sample};
pub use timing::{CycleSource, Timing};

use std::collections::BTreeMap;
use std::time::Duration;

use crate::analysis::stats::Summary;
use crate::chain::{Chain, ChainError, NodeEncoding, Pattern};
use crate::kernel::{self, KernelKind, UNROLL};
use crate::platform::clock::{self, ClockEstimate, ClockRequest, SampleClock};
use crate::platform::counters::{CounterGroup, EventSpec, EventWarning, GroupReading, parse_event};
use crate::platform::{self, Buffer, PageBacking, PageRequest};
use crate::units::HumanBytes;

/// The block size seed 004 counts distinct blocks in.
pub const BLOCK: u64 = 64;

/// Warn when the clock estimates before and after a point differ by more than this.
pub const CLOCK_DRIFT_WARN: f64 = 0.02;

/// Warn when repeats spread (max - min over median) more than this.
pub const SPREAD_WARN: f64 = 0.05;

/// Nodes walked to warm up repeats after the first (which walks the whole cycle).
pub const WARM_UP_CAP: u64 = 4 << 20;

/// Timings of A and 2A loads per repeat; the fastest of each is kept, since an
/// interrupt or another tenant can only add time, never remove it.
pub const ROUNDS: u32 = 3;

/// Rounds at most, when the machine is so busy that every round is disturbed.
pub const MAX_ROUNDS: u32 = 10;

/// The measuring context: pinned CPU, counters, clock.
pub struct Engine {
    cpu: usize,
    group: Option<CounterGroup>,
    requested_events: Vec<String>,
    cycles_slot: Option<usize>,
    /// Events that could not be opened.
    pub event_warnings: Vec<EventWarning>,
    /// The latest core-clock reading, GHz (the sample clock's, best of a few runs).
    clock_ghz: f64,
    given_ghz: Option<f64>,
    timing: Timing,
    prefetchers: Option<String>,
    loop_ns: f64,
    /// How the core clock was estimated when the engine started.
    clock_estimate: ClockEstimate,
    /// The clock chain timed beside every sample, about `SAMPLE_CLOCK_TIME` long.
    sample_clock: SampleClock,
}

/// How long each clock-chain timing beside a sample lasts.
const SAMPLE_CLOCK_TIME: Duration = Duration::from_millis(2);

/// Runs of the sample clock whose fastest gives the clock before and after a point.
const CLOCK_READS: usize = 3;

impl Engine {
    /// An engine with the most accurate clock that works (`--clock auto`).
    pub fn new(
        cpu: usize,
        events: &[EventSpec],
        given_ghz: Option<f64>,
    ) -> Result<Engine, MeasureError> {
        Self::with_clock(cpu, events, given_ghz, ClockRequest::Auto)
    }

    /// Pins to `cpu`, opens `events` (plus `cycles`, for cycle counts, when the
    /// PMU has it), settles the clock, estimates the core clock and the empty loop's cost.
    pub fn with_clock(
        cpu: usize,
        events: &[EventSpec],
        given_ghz: Option<f64>,
        clock_request: ClockRequest,
    ) -> Result<Engine, MeasureError> {
        platform::pin_to_cpu(cpu).map_err(system(format!("pinning to CPU {cpu} (--cpu)")))?;
        let mut wanted = events.to_vec();
        if !wanted
            .iter()
            .any(|e| e.name == "cycles" || e.name == "cpu-cycles")
        {
            wanted.insert(0, parse_event("cycles").expect("cycles is a known event"));
        }
        let (group, mut event_warnings) = CounterGroup::open(&wanted);
        let requested_events: Vec<String> = events.iter().map(|e| e.name.clone()).collect();
        // A cycles event the user did not ask for is internal: its failure is not a warning.
        event_warnings.retain(|w| requested_events.contains(&w.event));
        let cycles_slot = group
            .as_ref()
            .and_then(|g| g.position("cycles").or_else(|| g.position("cpu-cycles")));
        let timing = Timing::choose(clock_request, cycles_slot.is_some(), given_ghz)?;
        let clock_estimate = clock::estimate_core_clock(cpu);
        let sample_clock = SampleClock::lasting(SAMPLE_CLOCK_TIME, &clock_estimate);
        let clock_ghz = read_clock(&sample_clock);
        let loop_ns = clock::empty_loop_ns_per_trip();
        Ok(Engine {
            clock_estimate,
            sample_clock,
            cpu,
            group,
            requested_events,
            cycles_slot,
            event_warnings,
            clock_ghz,
            given_ghz,
            timing,
            prefetchers: None,
            loop_ns,
        })
    }

    /// The CPU the engine runs on.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// Where cycle counts come from.
    pub fn cycle_source(&self) -> CycleSource {
        self.timing.cycle_source
    }

    /// Records the prefetchers' state (`--prefetchers`) in every measurement.
    pub fn set_prefetchers(&mut self, status: &str) {
        self.prefetchers = Some(status.to_string());
    }

    /// The clock settled on, and why not a better one.
    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// The latest core-clock estimate, GHz.
    pub fn clock_ghz(&self) -> f64 {
        self.clock_ghz
    }

    /// How the core clock was estimated (chains, agreement, ceiling).
    pub fn clock_estimate(&self) -> &ClockEstimate {
        &self.clock_estimate
    }

    /// Why estimated cycles should not be trusted, when they should not
    /// (never for counted or given cycles).
    pub fn clock_suspect(&self) -> Option<&str> {
        match self.cycle_source() {
            CycleSource::Estimated => self.clock_estimate.suspect.as_deref(),
            _ => None,
        }
    }

    /// Bytes a point needs in memory (see [`memory_needed`]).
    pub fn memory_needed(spec: &PointSpec) -> u64 {
        memory_needed(spec.size, spec.pattern, spec.line)
    }

    fn build_chain(spec: &PointSpec, seed: u64) -> Result<Chain, ChainError> {
        Chain::build(spec.pattern, spec.size, spec.stride, spec.line, seed)
    }

    /// Measures one point.
    pub fn measure(&mut self, spec: &PointSpec) -> Result<Measurement, MeasureError> {
        ensure_memory(spec.size, Self::memory_needed(spec))?;
        let first_chain = Self::build_chain(spec, spec.seed)?;
        let mut warnings = Vec::new();
        let mut buffer = Buffer::map(spec.size as usize, spec.pages).map_err(system(format!(
            "mapping {} (-n/--size)",
            HumanBytes(spec.size)
        )))?;
        warnings.append(&mut buffer.notices);
        if let Some(node) = spec.node {
            platform::bind_to_node(&buffer, node).map_err(system(format!(
                "binding memory to NUMA node {node} (--node)"
            )))?;
        }
        buffer.fill();
        let page_backing = buffer.backing();
        if spec.pages != PageRequest::Base && page_backing.huge_fraction < 0.5 {
            warnings.push(format!(
                "asked for --pages {} but only {:.0}% of the buffer is in huge pages; TLB misses will add to the latency (check /sys/kernel/mm/transparent_hugepage/enabled)",
                spec.pages.name(),
                page_backing.huge_fraction * 100.0
            ));
        }
        let clock_before = self.clock_ghz;
        let mut trips = spec.accesses.map(|a| a.div_ceil(UNROLL).max(1));
        let mut samples = Vec::new();
        let mut chain = first_chain;
        let mut last_offset = 0;
        for repeat in 0..spec.repeats {
            let seed = spec.seed.wrapping_add(repeat as u64);
            if repeat > 0 && spec.pattern != Pattern::Stride {
                chain = Self::build_chain(spec, seed)?;
            }
            let sample = self.sample(spec, &mut buffer, &chain, &mut trips, repeat, seed)?;
            last_offset = sample.1;
            samples.push(sample.0);
        }
        // Re-read the clock: it is this point's "after" and the next one's "before".
        self.clock_ghz = read_clock(&self.sample_clock);
        let clock_after = self.clock_ghz;
        let drift = (clock_after - clock_before).abs() / clock_before;
        if drift > CLOCK_DRIFT_WARN && self.given_ghz.is_none() {
            warnings.push(format!(
                "the core clock estimate moved {:.1}% during the measurement ({clock_before:.3} -> {clock_after:.3} GHz): frequency scaling or another tenant; estimated cycles are less certain",
                drift * 100.0
            ));
        }
        let accesses = trips.unwrap_or(1) * UNROLL;
        Ok(self.summarise(
            spec,
            &chain,
            samples,
            accesses,
            last_offset,
            page_backing,
            clock_before,
            clock_after,
            warnings,
        ))
    }

    /// One repeat: link, warm up, calibrate (first time only), time A and 2A loads.
    fn sample(
        &self,
        spec: &PointSpec,
        buffer: &mut Buffer,
        chain: &Chain,
        trips: &mut Option<u64>,
        repeat: u32,
        seed: u64,
    ) -> Result<(Sample, u64), MeasureError> {
        let base = buffer.as_ptr();
        let encoding = if spec.kernel.uses_addresses() {
            NodeEncoding::Address(base as u64)
        } else {
            NodeEncoding::WordIndex
        };
        chain.link_into(buffer.words_mut(), encoding);
        let mut walker = Walker {
            kind: spec.kernel,
            base,
            chain,
            loads: 0,
            offset: 0,
        };
        // Warm-up: the first repeat walks one full cycle (rounded up to whole
        // trips), which warms caches and TLB and proves the chain returns where it
        // should. Later repeats of DRAM-sized chains walk WARM_UP_CAP nodes: far
        // more than any cache holds, and seconds less per repeat.
        let warm_up = if repeat == 0 {
            chain.len()
        } else {
            chain.len().min(WARM_UP_CAP)
        };
        walker.walk(warm_up.div_ceil(UNROLL))?;
        let a = match *trips {
            Some(a) => a,
            None => {
                // A sample is A + 2A loads: the A run gets a third of the time.
                let target = spec.sample_time / 3;
                let mut failure = None;
                let a = clock::trips_lasting(target, |t| {
                    let (took, result) = clock::time(|| walker.walk(t));
                    if let Err(e) = result {
                        failure = Some(e);
                    }
                    took
                });
                if let Some(e) = failure {
                    return Err(e);
                }
                // At least a few hundred trips so loop-exit effects are negligible.
                let a = a.max(100);
                *trips = Some(a);
                a
            }
        };
        // The core clock is timed beside the loads (fastest of the rounds), so a
        // frequency change between samples moves ns but not estimated cycles.
        let mut add_ns = f64::INFINITY;
        let mut run_a: Option<TimedRun> = None;
        let mut run_2a: Option<TimedRun> = None;
        let mut rounds = 0;
        // At least ROUNDS rounds; more (up to MAX_ROUNDS) while the fastest 2A run
        // is not about twice the fastest A run, i.e. while every round was disturbed.
        while rounds < ROUNDS || (rounds < MAX_ROUNDS && !plausible(&run_a, &run_2a)) {
            add_ns = add_ns.min(self.sample_clock.time_ns());
            let run = self.timed(&mut walker, a)?;
            if run_a.as_ref().is_none_or(|best| run.ns < best.ns) {
                run_a = Some(run);
            }
            let run = self.timed(&mut walker, 2 * a)?;
            if run_2a.as_ref().is_none_or(|best| run.ns < best.ns) {
                run_2a = Some(run);
            }
            rounds += 1;
        }
        let disturbed = !plausible(&run_a, &run_2a);
        let (run_a, run_2a) = (run_a.expect("ROUNDS >= 1"), run_2a.expect("ROUNDS >= 1"));
        add_ns = add_ns.min(self.sample_clock.time_ns());
        let local_ghz = self.sample_clock.ghz(add_ns);
        let loads = (a * UNROLL) as f64;
        // Normally the 2A run minus the A run, over A loads; when no round was
        // clean, the 2A run alone over 2A loads (fixed costs then stay in, but
        // they are microseconds against milliseconds), never a negative latency.
        let per_load = |x2: f64, x1: f64| {
            if disturbed {
                x2 / (2.0 * loads)
            } else {
                (x2 - x1) / loads
            }
        };
        let ticks = match (run_a.ticks, run_2a.ticks) {
            (Some(t1), Some(t2)) => Some(per_load(t2, t1)),
            _ => None,
        };
        // A time-base counter times the loads; otherwise the monotonic clock does.
        let ns_per_load = ticks
            .and_then(|t| self.timing.ns_from_ticks(t))
            .unwrap_or(per_load(run_2a.ns, run_a.ns));
        let counts: Vec<Option<f64>> = match (&run_2a.reading, &run_a.reading) {
            (Some(r2), Some(r1)) => r2
                .scaled()
                .iter()
                .zip(r1.scaled())
                .map(|(x2, x1)| Some(per_load((*x2)?, x1?)))
                .collect(),
            _ => Vec::new(),
        };
        let counter_scale = match (&run_a.reading, &run_2a.reading) {
            (Some(r1), Some(r2)) => Some(r1.scale().max(r2.scale())),
            _ => None,
        };
        let mut events = BTreeMap::new();
        for name in &self.requested_events {
            let slot = self.group.as_ref().and_then(|g| g.position(name));
            events.insert(
                name.clone(),
                slot.and_then(|i| counts.get(i).copied().flatten()),
            );
        }
        let cycles_per_load = match self.cycle_source() {
            CycleSource::Given => ns_per_load * self.given_ghz.unwrap_or(f64::NAN),
            CycleSource::Perf => self
                .cycles_slot
                .and_then(|i| counts.get(i).copied().flatten())
                .unwrap_or(f64::NAN),
            CycleSource::CycleCounter => ticks.unwrap_or(f64::NAN),
            CycleSource::Estimated => ns_per_load * local_ghz,
        };
        let sample = Sample {
            repeat,
            seed,
            ns_a: run_a.ns,
            ns_2a: run_2a.ns,
            ticks_a: run_a.ticks,
            ticks_2a: run_2a.ticks,
            rounds,
            disturbed,
            ns_per_load,
            cycles_per_load,
            clock_ghz: local_ghz,
            events,
            counter_scale,
        };
        Ok((sample, walker.offset))
    }

    /// Times `trips` trips; the counter group runs around (not inside) the
    /// timer, the ISA counter is read just outside it.
    fn timed(&self, walker: &mut Walker, trips: u64) -> Result<TimedRun, MeasureError> {
        if let Some(g) = &self.group {
            g.start().map_err(system("starting counters"))?;
        }
        let before = self.timing.read();
        let (took, result) = clock::time(|| walker.walk(trips));
        let after = self.timing.read();
        let reading = match &self.group {
            Some(g) => Some(g.stop().map_err(system("reading counters"))?),
            None => None,
        };
        result?;
        Ok(TimedRun {
            ns: took.as_nanos() as f64,
            ticks: before.zip(after).map(|(b, a)| a.wrapping_sub(b) as f64),
            reading,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn summarise(
        &self,
        spec: &PointSpec,
        chain: &Chain,
        samples: Vec<Sample>,
        accesses: u64,
        last_offset: u64,
        page_backing: PageBacking,
        clock_before: f64,
        clock_after: f64,
        mut warnings: Vec<String>,
    ) -> Measurement {
        let ns: Vec<f64> = samples.iter().map(|s| s.ns_per_load).collect();
        let cycles: Vec<f64> = samples.iter().map(|s| s.cycles_per_load).collect();
        let ns_per_load = Summary::of(&ns).expect("at least one repeat");
        let cycles_per_load = Summary::of(&cycles).expect("at least one repeat");
        if samples.len() > 1 && ns_per_load.relative_spread() > SPREAD_WARN {
            warnings.push(format!(
                "repeats spread {:.1}% (min {:.3} ns, max {:.3} ns): another tenant, or a level shared with others; more --repeats or a quieter machine will tell",
                ns_per_load.relative_spread() * 100.0,
                ns_per_load.min,
                ns_per_load.max
            ));
        }
        let disturbed = samples.iter().filter(|s| s.disturbed).count();
        if disturbed > 0 {
            warnings.push(format!(
                "{disturbed} of {} repeats had no undisturbed round in {MAX_ROUNDS} (the 2A-load run never took twice the A-load run): their latency is the 2A run over 2A loads; the machine is busy",
                samples.len()
            ));
        }
        let mut events = BTreeMap::new();
        for name in &self.requested_events {
            let values: Vec<f64> = samples
                .iter()
                .filter_map(|s| s.events.get(name).copied().flatten())
                .collect();
            events.insert(name.clone(), Summary::of(&values).map(|s| s.median));
        }
        if let Some(scale) = samples
            .iter()
            .filter_map(|s| s.counter_scale)
            .reduce(f64::max)
            && scale > 1.01
        {
            warnings.push(format!(
                    "the counter group was multiplexed (enabled/running up to {scale:.2}); counts are scaled estimates"
                ));
        }
        let clock_ghz = match self.cycle_source() {
            CycleSource::Perf | CycleSource::CycleCounter => {
                cycles_per_load.median / ns_per_load.median
            }
            CycleSource::Estimated => {
                let clocks: Vec<f64> = samples.iter().map(|s| s.clock_ghz).collect();
                Summary::of(&clocks).map_or(clock_before, |c| c.median)
            }
            CycleSource::Given => self.given_ghz.unwrap_or(f64::NAN),
        };
        if let Some(why) = self.clock_suspect() {
            warnings.push(format!("clock suspect: {why}"));
        }
        let loop_ghz = self.given_ghz.unwrap_or(self.clock_ghz);
        Measurement {
            size: spec.size,
            stride: spec.stride,
            pattern: spec.pattern,
            kernel: spec.kernel,
            line: spec.line,
            accesses,
            chain_nodes: chain.len(),
            distinct_blocks: chain.distinct_blocks(BLOCK),
            last_element: last_offset / 8,
            repeats: spec.repeats,
            seed: spec.seed,
            ns_per_load,
            cycles_per_load,
            cycle_source: self.cycle_source(),
            clock_method: Some(self.clock_estimate.clone()),
            clock: self.timing.clock_name.clone(),
            clock_note: self.timing.note.clone(),
            prefetchers: self.prefetchers.clone(),
            clock_ghz,
            clock_ghz_before: clock_before,
            clock_ghz_after: clock_after,
            events,
            page_backing,
            cpu: self.cpu,
            node: spec.node,
            loop_overhead_cycles: self.loop_ns * loop_ghz,
            loop_overhead_ns: self.loop_ns,
            unroll: UNROLL,
            samples,
            warnings,
        }
    }
}

/// The clock now: the fastest of a few runs of the sample clock (a
/// disturbance only slows a run, so the fastest is the truest).
fn read_clock(sample_clock: &SampleClock) -> f64 {
    let ns = (0..CLOCK_READS)
        .map(|_| sample_clock.time_ns())
        .fold(f64::INFINITY, f64::min);
    sample_clock.ghz(ns)
}

/// Whether the fastest 2A run took about twice the fastest A run, as it must
/// when at least one round of each ran undisturbed. Within 1.9..2.1 the
/// difference (2A - A) and the plain 2A/2 estimates agree within 5%.
fn plausible(run_a: &Option<TimedRun>, run_2a: &Option<TimedRun>) -> bool {
    match (run_a, run_2a) {
        (Some(a), Some(b)) => (1.9..=2.1).contains(&(b.ns / a.ns)),
        _ => false,
    }
}

/// Bytes a buffer of `size` needs in memory: whole 2 MiB pages, the alignment
/// slack, and the visiting order of random chains (4 bytes a node).
pub fn memory_needed(size: u64, pattern: Pattern, line: u64) -> u64 {
    let order = match pattern {
        Pattern::Stride => 0,
        Pattern::Random | Pattern::PageRandom => 4 * (size / line),
    };
    size.div_ceil(2 << 20) * (2 << 20) + (2 << 20) + order
}

/// Refuses, before anything is allocated, a buffer that needs more than MemAvailable.
pub fn ensure_memory(size: u64, needed: u64) -> Result<(), MeasureError> {
    match platform::mem_available_bytes() {
        Some(available) if needed > available => Err(MeasureError::NotEnoughMemory {
            size: HumanBytes(size),
            needed: HumanBytes(needed),
            available: HumanBytes(available),
        }),
        _ => Ok(()),
    }
}

/// One timed run of the kernel.
struct TimedRun {
    /// Monotonic-clock nanoseconds.
    ns: f64,
    /// ISA counter ticks, when one is read.
    ticks: Option<f64>,
    /// The counter group's reading, when one is open.
    reading: Option<GroupReading>,
}

/// Follows a chain trip by trip, checking every run's end node.
struct Walker<'a> {
    kind: KernelKind,
    base: *const u64,
    chain: &'a Chain,
    loads: u64,
    offset: u64,
}

impl Walker<'_> {
    fn walk(&mut self, trips: u64) -> Result<(), MeasureError> {
        // SAFETY: the chain was linked into this buffer in the kernel's encoding
        // (Engine::sample) and `offset` is always a node of it.
        let end = unsafe { kernel::chase(self.kind, self.base, self.offset, trips) };
        self.loads = (self.loads + trips * UNROLL) % self.chain.len();
        let expected = self.chain.node_offset(self.loads);
        if end != expected {
            return Err(MeasureError::ChainMismatch {
                kernel: self.kind.name(),
                expected,
                got: end,
                loads: trips * UNROLL,
            });
        }
        self.offset = end;
        Ok(())
    }
}
