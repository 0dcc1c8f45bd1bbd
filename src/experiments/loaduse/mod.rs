//! `memlat loaduse` (seed 003): how many cycles after a load its value can be
//! used. A load, N NOPs, then an add that uses the loaded value, timed as N
//! grows, for data in L1, L2 and DRAM; docs/loaduse.md explains the method and
//! how to read the result.
//!
//! - the load-use kernels are [`crate::kernels::load_use`], one per N and ISA, on delta chains;
//! - `driver`: timing them at one working set, pass by pass;
//! - reading a curve (plateau, knees, slope, issue width, latency) is
//!   [`crate::analysis::knee`], pure;
//! - `levels`: what `--level` and `--nops` name, resolved against sysfs;
//! - `report`: the result structs and the words that explain them;
//! - [`run`]: the experiment: every level's curve, then the `memlat run`
//!   chase at each working set for comparison, assembled into the result.

pub mod driver;
pub mod levels;
pub mod report;

use anyhow::Result;

use self::driver::Settings;
use self::levels::LevelSpec;
use self::report::{Context, LoaduseResult, TimedLevel};
use super::{Observer, Step};
use crate::engine::{CycleSource, Engine, Point};
use crate::units::HumanBytes;

/// What to measure: the working sets, the curve settings, and whether to
/// time `memlat run`'s chase at each working set for comparison.
pub struct Plan {
    /// Working sets, smallest first.
    pub levels: Vec<LevelSpec>,
    /// NOPs, passes, chain and pages.
    pub settings: Settings,
    /// The chase to compare with, or `None` to skip it.
    pub chase: Option<Point>,
}

/// Times every level (the first also with the rolled kernel, for the loop
/// overhead), then the comparison chases, and reads the result. Each pass of
/// each level is a step.
pub fn run(
    engine: &mut Engine,
    plan: &Plan,
    observer: &mut dyn Observer<LoaduseResult>,
) -> Result<LoaduseResult> {
    let s = &plan.settings;
    let total = plan.levels.len() * s.passes as usize;
    let mut timed = Vec::new();
    for (i, spec) in plan.levels.iter().enumerate() {
        let label = |pass: u32| {
            format!(
                "{} ({}): pass {}/{} over N = {}..{}",
                spec.name,
                HumanBytes(spec.size),
                pass + 1,
                s.passes,
                s.nops.first().copied().unwrap_or(0),
                s.nops.last().copied().unwrap_or(0)
            )
        };
        let run = driver::level(engine, spec.size, s, i == 0, |pass| {
            let label = label(pass);
            observer.begin(&Step {
                index: i * s.passes as usize + pass as usize,
                total,
                label: &label,
                cost_ms: 0,
            });
        })?;
        timed.push(TimedLevel {
            spec: spec.clone(),
            run,
            chase: None,
        });
    }
    if let Some(template) = &plan.chase {
        for t in &mut timed {
            let m = engine.measure(&Point {
                size: t.spec.size,
                stride: s.line,
                ..template.clone()
            })?;
            // The median, as `memlat run` prints it (its min can read low: a
            // difference of two disturbed timings).
            t.chase = Some((m.cycles_per_load.median, m.kernel.name().to_string()));
        }
    }
    let cycle_source = engine.cycle_source();
    let result = report::assemble(
        Context {
            nops: (
                s.nops.first().copied().unwrap_or(0),
                s.nops.last().copied().unwrap_or(0),
            ),
            passes: s.passes,
            pattern: s.pattern.name().to_string(),
            line: s.line,
            cpu: engine.cpu(),
            cycle_source: cycle_source.name().to_string(),
            clock_suspect: match cycle_source {
                CycleSource::Estimated => engine.clock_estimate().suspect.clone(),
                _ => None,
            },
        },
        timed,
    );
    observer.checkpoint(&result)?;
    Ok(result)
}
