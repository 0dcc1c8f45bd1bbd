//! The spread test: single loads timed at each level's plateau and each
//! stretch set aside between them, which tell a level from a stretch that
//! is none ([`crate::analysis::detect::one_latency`]).

use anyhow::Result;

use super::SweepPlan;
use crate::analysis::detect::{Detection, LoadSpread};
use crate::engine::Engine;

/// How single loads spread at the geometric middle of each level's plateau
/// (memory's too) and of each stretch set aside (a plateau the first
/// reading dropped for sysfs's count can be the real level, and the one it
/// kept a pause: their loads tell), in groups the timer resolves at the
/// fastest cache between two levels; none with fewer than two caches (no
/// cache then lies between two levels).
pub(super) fn spread_test(
    engine: &mut Engine,
    plan: &SweepPlan,
    d: &Detection,
) -> Result<Vec<LoadSpread>> {
    let caches = &d.levels[..d.levels.len().saturating_sub(1)];
    if caches.len() < 2 {
        return Ok(Vec::new());
    }
    let line = plan.template.line.max(1);
    let plateaus = d.levels.iter().filter_map(|l| l.plateau_bytes);
    let stretches = d.unresolved.iter().map(|u| [u.from_bytes, u.to_bytes]);
    let mut sizes: Vec<u64> = plateaus
        .chain(stretches)
        .map(|[from, to]| {
            let middle = ((from as f64) * (to as f64)).sqrt() as u64 / line * line;
            middle.clamp(from, to)
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let fastest = caches[1..]
        .iter()
        .map(|l| l.latency_ns)
        .fold(f64::INFINITY, f64::min);
    Ok(engine.load_spreads(&plan.template, &sizes, fastest)?)
}
