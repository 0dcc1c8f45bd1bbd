//! `memlat sweep` as a library: many sizes x several strides or patterns,
//! measured one point at a time with the files rewritten after each point
//! (seed 004 sections 2-4: the sweep, its plots and the bandwidth view).
//!
//! ```no_run
//! # fn demo(mut engine: memlat::engine::Engine, template: memlat::engine::Point) -> anyhow::Result<()> {
//! use memlat::sweep::{SeriesKey, SweepFiles, SweepPlan, run_sweep};
//! let caches = memlat::platform::caches::data_caches(engine.cpu());
//! let to = memlat::sweep::default_to(&caches);
//! let plan = SweepPlan::new(template, engine.cpu(), 1024, to, 1.3, vec![SeriesKey::pattern(memlat::chain::Pattern::Random)], Vec::new(), caches);
//! let result = run_sweep(&mut engine, &plan, &SweepFiles::default(), true)?;
//! println!("{}", memlat::analysis::detect::table(result.detection.as_ref().unwrap()));
//! # Ok(()) }
//! ```

mod files;
mod interrupt;
mod progress;
mod result;
pub mod seq;
pub mod views;

use std::time::{Instant, SystemTime};

use anyhow::{Context, Result};

pub use files::{RESULTS_DIR, SweepFiles, replace, results_dir, utc_timestamp};
pub use interrupt::interrupted;
pub use result::{SeriesKey, SweepConfig, SweepResult};

use crate::chain::Pattern;
use crate::engine::{Engine, Point};
use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;
use progress::Progress;

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
pub const DEFAULT_SAMPLE_MS: u64 = 10;
/// The largest size is at least this, so the last points are in DRAM.
pub const MIN_TO: u64 = 256 << 20;

/// The default largest size: 4x the last-level cache sysfs lists, at least 256 MiB.
pub fn default_to(caches: &[CacheInfo]) -> u64 {
    let last = caches.iter().map(|c| c.size_bytes).max().unwrap_or(0);
    last.saturating_mul(4).max(MIN_TO)
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
}

impl SweepPlan {
    /// Sizes `seq(from, to, ratio, line, prime)` (seed 004) for each series.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        template: Point,
        cpu: usize,
        from: u64,
        to: u64,
        ratio: f64,
        series: Vec<SeriesKey>,
        events: Vec<String>,
        sysfs_caches: Vec<CacheInfo>,
    ) -> SweepPlan {
        let unit = sysfs_caches
            .first()
            .and_then(|c| c.line_bytes)
            .filter(|l| l.is_power_of_two() && *l >= 8)
            .unwrap_or(64);
        let sizes = seq::seq(from, to, ratio, unit, true);
        SweepPlan {
            config: SweepConfig {
                from,
                to,
                ratio,
                unit,
                sizes,
                series,
                repeats: template.repeats,
                sample_ms: template.sample_time.as_millis() as u64,
                kernel: template.kernel,
                pages: template.pages,
                line: template.line,
                seed: template.seed,
                cpu,
                node: template.node,
                events,
            },
            template,
            sysfs_caches,
            resumed: None,
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
    fn start(&self) -> SweepResult {
        let resumed = self.resumed.as_ref();
        let mut result = SweepResult {
            memlat_version: env!("CARGO_PKG_VERSION").to_string(),
            started: resumed
                .map_or_else(|| utc_timestamp(SystemTime::now()), |r| r.started.clone()),
            config: self.config.clone(),
            sysfs_caches: self.sysfs_caches.clone(),
            points: resumed.map_or_else(Vec::new, |r| r.points.clone()),
            total_seconds: resumed.map_or(0.0, |r| r.total_seconds),
            complete: false,
            detection: None,
        };
        result.sort_points();
        result
    }
}

/// `stride 4096 at 1.5 MiB`.
fn describe(spec: &Point) -> String {
    let key = match spec.pattern {
        Pattern::Stride => SeriesKey::stride(spec.stride),
        other => SeriesKey::pattern(other),
    };
    format!("{} at {}", key.label(), HumanBytes(spec.size))
}

/// Measures every pending point of `plan`, rewriting `files`' CSV and JSON
/// after each one; then detects the levels and draws the plots. Stops early
/// (with `complete: false`) after the point in progress when Ctrl-C is pressed.
/// `progress` shows a bar on stderr when stderr is a terminal.
pub fn run_sweep(
    engine: &mut Engine,
    plan: &SweepPlan,
    files: &SweepFiles,
    progress: bool,
) -> Result<SweepResult> {
    let mut result = plan.start();
    files.create(&result)?;
    let pending = plan.pending();
    let _guard = interrupt::Guard::install();
    let mut bar = Progress::new(&pending, progress);
    let started = Instant::now();
    let base_seconds = result.total_seconds;
    for spec in &pending {
        if interrupted() {
            break;
        }
        bar.start(&describe(spec));
        let m = engine
            .measure(spec)
            .with_context(|| format!("measuring {}", describe(spec)))?;
        result.points.push(m);
        result.sort_points();
        result.total_seconds = base_seconds + started.elapsed().as_secs_f64();
        files.write(&result)?;
        bar.finish_point(spec);
    }
    bar.clear();
    result.complete = plan.config.sizes.iter().all(|&size| {
        plan.config
            .series
            .iter()
            .all(|&k| result.has_point(size, k))
    });
    result.detection = result.detect();
    result.total_seconds = base_seconds + started.elapsed().as_secs_f64();
    files.write(&result)?;
    files.draw(&result)?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(level: u32, size: u64) -> CacheInfo {
        CacheInfo {
            level,
            kind: crate::platform::caches::CacheKind::Unified,
            size_bytes: size,
            line_bytes: Some(64),
            ways: None,
        }
    }

    #[test]
    fn default_to_is_four_llcs_but_at_least_256_mib() {
        assert_eq!(default_to(&[]), 256 << 20);
        assert_eq!(
            default_to(&[cache(1, 32 << 10), cache(3, 32 << 20)]),
            256 << 20
        );
        assert_eq!(default_to(&[cache(3, 256 << 20)]), 1 << 30);
    }
}
