//! `memlat sweep` as a library: many sizes x several strides or patterns,
//! measured one point at a time with the files rewritten after each point
//! (seed 004 sections 2-4: the sweep, its plots and the bandwidth view).
//!
//! ```no_run
//! # fn demo(mut engine: memlat::Engine, template: memlat::Point) -> anyhow::Result<()> {
//! use memlat::experiments::{Quiet, sweep::{self, SeriesKey, SweepPlan}};
//! let caches = memlat::platform::caches::data_caches(engine.cpu());
//! let range = sweep::Range { from: 1024, to: 1 << 30, ratio: 1.3, end: sweep::RangeEnd::FlatDram };
//! let series = vec![SeriesKey::pattern(memlat::chain::Pattern::Random)];
//! let plan = SweepPlan::new(template, engine.cpu(), range, series, Vec::new(), caches);
//! let result = sweep::run(&mut engine, &plan, &mut Quiet)?;
//! println!("{}", memlat::output::detect::table(result.detection.as_ref().unwrap()));
//! # Ok(()) }
//! ```

mod remeasure;
mod result;
pub mod seq;
mod spread;
mod stop;

use std::time::{Instant, SystemTime};

use anyhow::{Context, Result};

pub use crate::units::utc_timestamp;
pub use result::{SeriesKey, SweepConfig, SweepPhases, SweepResult};
pub use stop::{
    FLAT_BAND, FLAT_POINTS, Pages, end_of, ended_memory_size, levelled_beyond_caches, memory_size,
    passed_measured_levels, past_levels, reached_memory_size,
};

use crate::analysis::detect::{refinement_sizes, tail};
use crate::chain::Pattern;
use crate::engine::{Engine, Point};
use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;

use super::{Observer, Step};

/// Smallest size by default (`--from`).
pub const DEFAULT_FROM: u64 = 1 << 10;
/// Ratio of the size sequence by default (`--ratio`).
pub const DEFAULT_RATIO: f64 = 1.3;
/// Strides by default (`--strides`): 64 lets prefetchers follow the chain
/// within a page, 4096 starts every load on a new page (seed 004 section 3).
pub const DEFAULT_STRIDES: [u64; 2] = [64, 4096];
/// Repeats per point by default (`--repeats`).
pub const DEFAULT_REPEATS: u32 = 3;
/// Milliseconds per sample by default (`--sample-ms`): short, so the default
/// sweep of about 100 points takes well under a minute.
pub const DEFAULT_SAMPLE_MS: u64 = 5;
/// Without `--to`, a sweep stops this far at the most: a quarter of the
/// memory available, and no more than 4 GiB.
pub const CAP: u64 = 4 << 30;

/// Where a sweep's sizes end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RangeEnd {
    /// At `to`, as asked.
    To,
    /// Where the latency has been level for [`FLAT_POINTS`] sizes beyond
    /// every cache sysfs lists ([`levelled_beyond_caches`]), or at `to`
    /// (the cap).
    FlatDram,
}

/// The sizes of a sweep: seed 004's `seq(from, to, ratio, line, prime)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Smallest size.
    pub from: u64,
    /// Largest size (the cap, for [`RangeEnd::FlatDram`]).
    pub to: u64,
    /// Ratio between successive sizes.
    pub ratio: f64,
    /// Whether the sweep may end before `to`.
    pub end: RangeEnd,
}

/// The cap of a sweep without `--to`: [`CAP`], or a quarter of `available`.
pub fn default_cap(available: Option<u64>) -> u64 {
    available.map_or(CAP, |a| (a / 4).min(CAP))
}

/// How long each point of `--percentiles` times loads one by one: enough
/// for p99 (tens of thousands of timings at DRAM), short beside a point.
pub const PERCENTILE_TIME: std::time::Duration = std::time::Duration::from_millis(20);

/// A sweep keeps each point's distribution without the spectrum's points
/// (hundreds a point, for a picture a sweep does not draw).
pub(crate) fn keep_percentiles_lean(m: &mut crate::engine::Measurement) {
    if let Some(spectrum) = m.distribution.as_mut().and_then(|d| d.spectrum.as_mut()) {
        spectrum.points.clear();
    }
}

/// What to measure: a configuration, the point template, and points already
/// measured (from `--resume`) to keep and skip.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    /// The configuration recorded in the results.
    pub config: SweepConfig,
    /// Every point is this with its size, stride and pattern set.
    pub template: Point,
    /// The caches sysfs claims, recorded beside the results.
    pub sysfs_caches: Vec<CacheInfo>,
    /// A previous run of this sweep whose points are kept and not measured again.
    pub resumed: Option<SweepResult>,
    /// Other sweeps' detections of this machine to pool the levels'
    /// capacity bounds with ([`crate::analysis::detect::pool_bounds`]);
    /// empty: each level's bounds are this sweep's alone.
    pub bounds_history: Vec<crate::analysis::detect::Detection>,
}

impl SweepPlan {
    /// Sizes `seq(from, to, ratio, line, prime)` (seed 004) for each series.
    pub fn new(
        template: Point,
        cpu: usize,
        range: Range,
        series: Vec<SeriesKey>,
        events: Vec<String>,
        sysfs_caches: Vec<CacheInfo>,
    ) -> SweepPlan {
        let unit = sysfs_caches
            .first()
            .and_then(|c| c.line_bytes)
            .filter(|l| l.is_power_of_two() && *l >= 8)
            .unwrap_or(64);
        let sizes = seq::seq(range.from, range.to, range.ratio, unit, true);
        SweepPlan {
            config: SweepConfig {
                from: range.from,
                to: range.to,
                range_end_reason: match range.end {
                    RangeEnd::To => "to",
                    RangeEnd::FlatDram => "cap",
                }
                .into(),
                ratio: range.ratio,
                unit,
                sizes,
                series,
                repeats: template.repeats,
                until_precise: template.until_precise,
                sample_ms: template.sample_time.as_millis() as u64,
                kernel: template.kernel,
                pages: template.pages,
                line: template.line,
                seed: template.seed,
                cpu,
                core_kind: crate::platform::core_kind::core_kind(cpu),
                node: template.node,
                events,
                refine: true,
                percentiles: template.distribution.is_some(),
                refined_sizes: Vec::new(),
                remeasured_sizes: Vec::new(),
                first_pass_levels: Vec::new(),
            },
            template,
            sysfs_caches,
            resumed: None,
            bounds_history: Vec::new(),
        }
    }

    /// Continues `resumed` as it was measured: its configuration, sizes and
    /// series, its points kept; `template` supplies only what a sweep does not record.
    pub fn resume(template: Point, resumed: SweepResult) -> SweepPlan {
        let c = &resumed.config;
        let template = Point {
            repeats: c.repeats,
            until_precise: c.until_precise,
            sample_time: std::time::Duration::from_millis(c.sample_ms),
            kernel: c.kernel,
            pages: c.pages,
            line: c.line,
            seed: c.seed,
            node: c.node,
            distribution: c.percentiles.then_some(PERCENTILE_TIME),
            ..template
        };
        SweepPlan {
            config: resumed.config.clone(),
            template,
            sysfs_caches: resumed.sysfs_caches.clone(),
            resumed: Some(resumed),
            bounds_history: Vec::new(),
        }
    }

    /// The point of `size` on `key`'s line.
    pub fn point(&self, size: u64, key: SeriesKey) -> Point {
        Point {
            size,
            stride: match key.pattern {
                Pattern::Stride => key.stride,
                _ => self.template.stride,
            },
            pattern: key.pattern,
            ..self.template.clone()
        }
    }

    /// Points still to measure, size by size (every series at a size before the
    /// next size, as seed 004's `run` loops), skipping resumed ones.
    pub fn pending(&self) -> Vec<Point> {
        let mut points = Vec::new();
        for &size in &self.config.sizes {
            for &key in &self.config.series {
                if self
                    .resumed
                    .as_ref()
                    .is_some_and(|r| r.has_point(size, key))
                {
                    continue;
                }
                points.push(self.point(size, key));
            }
        }
        points
    }

    /// A result holding only the resumed points (if any).
    pub fn start(&self) -> SweepResult {
        let resumed = self.resumed.as_ref();
        let mut result = SweepResult {
            schema_version: crate::experiments::schema::SCHEMA_VERSION,
            kind: "sweep".into(),
            host: Some(
                resumed
                    .and_then(|r| r.host.clone())
                    .unwrap_or_else(crate::platform::host::Host::this),
            ),
            memlat_version: env!("CARGO_PKG_VERSION").to_string(),
            command: crate::experiments::schema::command_line(),
            started: resumed
                .map_or_else(|| utc_timestamp(SystemTime::now()), |r| r.started.clone()),
            finished: resumed.and_then(|r| r.finished.clone()),
            config: self.config.clone(),
            sysfs_caches: self.sysfs_caches.clone(),
            points: resumed.map_or_else(Vec::new, |r| r.points.clone()),
            total_seconds: resumed.map_or(0.0, |r| r.total_seconds),
            complete: false,
            detection: None,
            noise: None,
            page_test: None,
            load_spreads: Vec::new(),
            // A resumed sweep's stages add to the run it continues.
            phases: resumed.and_then(|r| r.phases.clone()),
        };
        result.sort_points();
        result
    }
}

/// `stride 4096 at 1.5 MiB`.
pub fn describe(spec: &Point) -> String {
    let key = match spec.pattern {
        Pattern::Stride => SeriesKey::stride(spec.stride),
        other => SeriesKey::pattern(other),
    };
    format!("{} at {}", key.label(), HumanBytes(spec.size))
}

/// Rough cost of measuring `spec`, in milliseconds: per repeat, calibration
/// plus the timed rounds plus the clock timings, and a warm-up walk of the
/// whole chain; filling the buffer once. Points differ a lot in cost, so
/// progress counts these, not points.
pub fn cost_ms(spec: &Point) -> u64 {
    let sample = spec.sample_time.as_secs_f64() * 1e3;
    let per_repeat = sample * (f64::from(crate::engine::ROUNDS) + 1.0) + 10.0;
    let lines = (spec.size / 64) as f64;
    // About 20 ns a line to walk once (a mix of cache hits and misses), and
    // 0.25 ns a byte to fault in and fill.
    let walk = lines * 20e-6;
    let fill = spec.size as f64 * 0.25e-6;
    (f64::from(spec.repeats) * (per_repeat + walk) + fill + 40.0).round() as u64
}

/// Measures every pending point of `plan`, handing the result to
/// `observer.checkpoint` after each one (so files can be rewritten and
/// nothing finished is lost); then, unless `config.refine` is off, the
/// points that decide the levels again with fresh chains ([`remeasure`]),
/// and sizes inside each level's capacity bracket until every bracket is
/// within 5%; then detects the levels, and records the machine's noise. Stops early (with `complete: false`) after the
/// point in progress when the observer says it was interrupted.
pub fn run(
    engine: &mut Engine,
    plan: &SweepPlan,
    observer: &mut dyn Observer<SweepResult>,
) -> Result<SweepResult> {
    // One buffer grows with the sizes (each byte faulted once), up to the
    // largest size planned.
    engine.set_room(plan.config.sizes.iter().max().copied());
    let result = run_sweep(engine, plan, observer);
    engine.set_room(None);
    engine.set_past_levels(None);
    result
}

fn run_sweep(
    engine: &mut Engine,
    plan: &SweepPlan,
    observer: &mut dyn Observer<SweepResult>,
) -> Result<SweepResult> {
    let mut result = plan.start();
    observer.checkpoint(&result)?;
    let started = Instant::now();
    let base_seconds = result.total_seconds;
    let mut clock = || base_seconds + started.elapsed().as_secs_f64();
    let watch = crate::experiments::noise::Watch::start(engine, &plan.template);
    let mut phases = result.phases.take().unwrap_or_default();
    let stage = Instant::now();
    measure_grid(engine, plan, &mut result, observer, &mut clock)?;
    // Remeasuring and refining time the edges, at a cache's precision.
    engine.set_past_levels(None);
    phases.grid_s += stage.elapsed().as_secs_f64();
    // The levels are decided (their deciding points measured again) before
    // their edges are refined: refining a level that then goes is wasted.
    let stage = Instant::now();
    if result.config.refine && !observer.interrupted() {
        remeasure::remeasure(engine, plan, &mut result, observer, &mut clock)?;
    }
    phases.remeasure_s += stage.elapsed().as_secs_f64();
    let stage = Instant::now();
    if result.config.refine && !observer.interrupted() {
        refine(engine, plan, &mut result, observer, &mut clock)?;
    }
    phases.refine_s += stage.elapsed().as_secs_f64();
    let cvs: Vec<f64> = result.points.iter().map(|m| m.ns_per_load.cv).collect();
    result.noise = Some(watch.finish(engine, &plan.template, &cvs));
    // Cut short during remeasuring or refinement, the grid may be whole but
    // the sweep is not: a complete sweep is what the cache remembers.
    result.complete = !observer.interrupted()
        && result.config.sizes.iter().all(|&size| {
            result
                .config
                .series
                .iter()
                .all(|&k| result.has_point(size, k))
        });
    result.detection = result.detect();
    // A level serves its loads at one latency: single loads timed inside
    // each cache level's plateau tell a level from a mixture of its
    // neighbours. Read again with them.
    let stage = Instant::now();
    if !observer.interrupted()
        && result.load_spreads.is_empty()
        && let Some(detection) = &result.detection
    {
        let spreads = spread::spread_test(engine, plan, detection)?;
        if !spreads.is_empty() {
            result.load_spreads = spreads;
            result.detection = result.detect();
        }
    }
    phases.spreads_s += stage.elapsed().as_secs_f64();
    // The page test tells the last step and any climb after it: a level,
    // or page walks once the TLBs stop reaching. Read again with it.
    let stage = Instant::now();
    if !observer.interrupted()
        && result.page_test.is_none()
        && let Some(detection) = &result.detection
        && let Some(test) = page_test(engine, plan, detection, &result.curve())?
    {
        result.page_test = Some(test);
        result.detection = result.detect();
    }
    phases.page_test_s += stage.elapsed().as_secs_f64();
    result.phases = Some(phases);
    if let Some(detection) = &mut result.detection {
        crate::analysis::detect::pool_bounds(detection, &plan.bounds_history);
    }
    result.total_seconds = clock();
    result.finished = Some(utc_timestamp(SystemTime::now()));
    observer.checkpoint(&result)?;
    Ok(result)
}

/// The last step's and the climb's ends ([`tail::page_test_sizes`])
/// measured again with the other page size: base pages where the sweep had
/// huge ones, transparent huge pages where it had base ones (none where the
/// kernel has no THP: nothing to compare). Translation moves with the page,
/// a level or a farther tier does not ([`tail::step_cause`],
/// [`tail::climb_cause`]). Four points (the lower end with the sweep's own
/// page too, as a control), each a sweep point's cost.
fn page_test(
    engine: &mut Engine,
    plan: &SweepPlan,
    d: &crate::analysis::detect::Detection,
    curve: &[crate::analysis::detect::CurvePoint],
) -> Result<Option<tail::PageTest>> {
    let Some(sizes) = tail::page_test_sizes(d, curve) else {
        return Ok(None);
    };
    let (pages, page_bytes) = match plan.template.pages {
        crate::platform::PageRequest::Base => {
            let Some(thp) = crate::platform::system::thp_page_bytes() else {
                return Ok(None);
            };
            (crate::platform::PageRequest::Thp, thp)
        }
        _ => (
            crate::platform::PageRequest::Base,
            crate::platform::system::base_page_bytes(),
        ),
    };
    let own = plan.template.pages;
    let mut at = |size: u64, pages| -> Result<f64> {
        let point = Point {
            size,
            pages,
            pattern: crate::chain::Pattern::Random,
            ..plan.template.clone()
        };
        Ok(engine
            .measure(&point)
            .with_context(|| format!("the page test at {}", HumanBytes(size)))?
            .ns_per_load
            .median)
    };
    // The lower end with both pages back to back: the control that the
    // level below still serves it now.
    let below_ns = sizes.below.map(|b| at(b, pages)).transpose()?;
    let below_here_ns = sizes.below.map(|b| at(b, own)).transpose()?;
    // The upper end likewise: the last level must still serve it now.
    let memory_ns = at(sizes.memory, pages)?;
    let memory_here_ns = Some(at(sizes.memory, own)?);
    Ok(Some(tail::PageTest {
        page_bytes,
        memory_ns,
        largest_ns: at(sizes.largest, pages)?,
        below_bytes: sizes.below,
        below_ns,
        below_here_ns,
        memory_here_ns,
    }))
}

/// Measures `points` one by one into `result`, with progress and a
/// checkpoint after each; `stop` ends the loop early (after the point's
/// checkpoint) when it returns true.
fn measure_each(
    engine: &mut Engine,
    points: &[Point],
    result: &mut SweepResult,
    observer: &mut dyn Observer<SweepResult>,
    clock: &mut dyn FnMut() -> f64,
    stop: &mut dyn FnMut(&mut Engine, &mut SweepResult, &Point) -> bool,
) -> Result<()> {
    let labels: Vec<String> = points.iter().map(describe).collect();
    let costs: Vec<(String, u64)> = points
        .iter()
        .zip(&labels)
        .map(|(p, l)| (l.clone(), cost_ms(p)))
        .collect();
    observer.planned(&costs);
    for (index, spec) in points.iter().enumerate() {
        if observer.interrupted() {
            break;
        }
        let step = Step {
            index,
            total: points.len(),
            label: &labels[index],
            cost_ms: costs[index].1,
        };
        observer.begin(&step);
        let mut m = engine
            .measure(spec)
            .with_context(|| format!("measuring {}", labels[index]))?;
        keep_percentiles_lean(&mut m);
        result.points.push(m);
        result.sort_points();
        result.total_seconds = clock();
        result.finished = Some(utc_timestamp(SystemTime::now()));
        let done = stop(engine, result, spec);
        observer.checkpoint(result)?;
        observer.end(&step);
        if done {
            break;
        }
    }
    Ok(())
}

/// The grid: every pending size x series, each whole size then handed to
/// [`stop::after_grid_size`] (memory's precision, and the end).
fn measure_grid(
    engine: &mut Engine,
    plan: &SweepPlan,
    result: &mut SweepResult,
    observer: &mut dyn Observer<SweepResult>,
    clock: &mut dyn FnMut() -> f64,
) -> Result<()> {
    // The sweep's pages, and the TLBs' reach with them, hold for all of it.
    let pages = Pages::of(result);
    let mut after_each = |engine: &mut Engine, result: &mut SweepResult, spec: &Point| {
        size_done(result, spec.size) && stop::after_grid_size(engine, result, pages, spec.size)
    };
    measure_each(
        engine,
        &plan.pending(),
        result,
        observer,
        clock,
        &mut after_each,
    )
}

/// Rounds of refinement at most: each halves every bracket (in log), so
/// four take the grid's 1.3 to within 2%; two more for a capacity that a
/// noisy ramp moved into another bracket.
pub const REFINE_ROUNDS: usize = 6;

/// Measures the detection series at the geometric middle of every capacity
/// bracket wider than 5%, and again on the new brackets, for at most
/// [`REFINE_ROUNDS`] rounds.
fn refine(
    engine: &mut Engine,
    plan: &SweepPlan,
    result: &mut SweepResult,
    observer: &mut dyn Observer<SweepResult>,
    clock: &mut dyn FnMut() -> f64,
) -> Result<()> {
    let Some(key) = result.detection_series() else {
        return Ok(());
    };
    for _ in 0..REFINE_ROUNDS {
        let Some(detection) = result.detect() else {
            return Ok(());
        };
        let brackets: Vec<(u64, u64)> = detection
            .levels
            .iter()
            .filter_map(|l| l.size_bracket_bytes.map(|[a, b]| (a, b)))
            .collect();
        let known: Vec<u64> = result.series_points(key).iter().map(|m| m.size).collect();
        let sizes = refinement_sizes(&brackets, &known, result.config.unit);
        if sizes.is_empty() {
            break;
        }
        let points: Vec<Point> = sizes.iter().map(|&s| plan.point(s, key)).collect();
        let mut record = |_: &mut Engine, result: &mut SweepResult, spec: &Point| {
            let refined = &mut result.config.refined_sizes;
            refined.push(spec.size);
            refined.sort_unstable();
            false
        };
        measure_each(engine, &points, result, observer, clock, &mut record)?;
        if observer.interrupted() {
            break;
        }
    }
    Ok(())
}

/// Whether every series has its point at `size`.
fn size_done(result: &SweepResult, size: u64) -> bool {
    result
        .config
        .series
        .iter()
        .all(|&k| result.has_point(size, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_a_quarter_of_memory_at_most() {
        assert_eq!(default_cap(Some(8 << 30)), 2 << 30);
        assert_eq!(default_cap(None), CAP);
    }
}
