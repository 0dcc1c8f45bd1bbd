//! `memlat assoc` as an experiment (seed 004 section 5): for each level,
//! random-chain references for its hit and miss latencies, then N lines one
//! way-size apart for N = 1, 2, ...; the reading is [`crate::analysis::assoc`].

use std::collections::BTreeMap;

use anyhow::Result;
use serde::Serialize;

use super::{Observer, Step};
use crate::analysis::assoc::{self, AssocPoint, LevelPlan};
use crate::analysis::readings::Agreement;
use crate::chain::Pattern;
use crate::engine::{Engine, Point};
use crate::platform::cpuid;
use crate::units::HumanBytes;

/// One level's result in `memlat assoc --format json`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct AssocLevel {
    /// `L1`, `L2`...
    pub name: String,
    /// Measured ways: the reading every pass agrees on; null when the
    /// passes disagree or the data show no step.
    pub ways: Option<u64>,
    /// Each independent pass's reading: one chain per pass, in a set and a
    /// random order of its own.
    pub readings: Vec<Option<u64>>,
    /// Whether every pass read the same ways.
    pub agree: bool,
    /// Capacity claimed by sysfs or the profile (used to choose the stride), bytes.
    pub size_bytes: u64,
    /// Ways claimed by sysfs or the profile, if any.
    pub claimed_ways: Option<u64>,
    /// Distance between the lines of the set, bytes.
    pub stride: u64,
    /// This level's latency (random chain at `hit_size`), ns.
    pub hit_ns: f64,
    /// Random-chain size for `hit_ns`, bytes.
    pub hit_size: u64,
    /// The next level's latency (random chain at `miss_size`), ns.
    pub miss_ns: f64,
    /// Random-chain size for `miss_ns`, bytes.
    pub miss_size: u64,
    /// Latencies at or above this count as misses, ns.
    pub threshold_ns: f64,
    /// Median latency for 1, 2, ... lines in the set, ns.
    pub ns_by_lines: Vec<f64>,
    /// Each line count with every chain's latency.
    pub points: Vec<AssocPoint>,
    /// Page backing of the largest set's buffer.
    pub pages: String,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// Measures every planned level; `template` carries the settings every point
/// shares. Each level is one step; a level's warnings are in its notes.
pub fn run(
    engine: &mut Engine,
    template: &Point,
    plans: &[LevelPlan],
    observer: &mut dyn Observer<Vec<AssocLevel>>,
) -> Result<Vec<AssocLevel>> {
    let mut references = References::default();
    let mut results = Vec::new();
    for (index, plan) in plans.iter().enumerate() {
        if observer.interrupted() {
            break;
        }
        let label = format!(
            "{}: 1..{} lines {} apart",
            plan.name,
            plan.lines.last().copied().unwrap_or(0),
            HumanBytes(plan.stride)
        );
        let step = Step {
            index,
            total: plans.len(),
            label: &label,
            cost_ms: plan.points() * 100,
        };
        observer.begin(&step);
        results.push(match &plan.skip {
            Some(why) => not_measured(plan, why),
            None => measure_level(engine, template, plan, &mut references)?,
        });
        observer.checkpoint(&results)?;
        observer.end(&step);
    }
    Ok(results)
}

/// A level that cannot be tested here: its plan, no reading, and why.
fn not_measured(plan: &LevelPlan, why: &str) -> AssocLevel {
    AssocLevel {
        name: plan.name.clone(),
        ways: None,
        readings: Vec::new(),
        agree: false,
        size_bytes: plan.size_bytes,
        claimed_ways: plan.claimed_ways,
        stride: plan.stride,
        hit_ns: 0.0,
        hit_size: plan.hit_size,
        miss_ns: 0.0,
        miss_size: plan.miss_size,
        threshold_ns: 0.0,
        ns_by_lines: Vec::new(),
        points: Vec::new(),
        pages: String::new(),
        notes: vec![format!("not measured: {why}")],
    }
}

/// Random-chain latencies by size, measured once each.
#[derive(Default)]
struct References(BTreeMap<u64, f64>);

impl References {
    fn get(&mut self, engine: &mut Engine, template: &Point, size: u64) -> Result<f64> {
        if let Some(&ns) = self.0.get(&size) {
            return Ok(ns);
        }
        let m = engine.measure(&Point {
            size,
            pattern: Pattern::Random,
            ..template.clone()
        })?;
        self.0.insert(size, m.ns_per_load.median);
        Ok(m.ns_per_load.median)
    }
}

/// Chain `index` through `n` lines one stride apart, all in one set: in a
/// random order when the stride allows (a stride prefetcher following a
/// constant stride would bring the next way-size line into the same set),
/// each chain in its own set and with its own order.
fn set_chain(template: &Point, plan: &LevelPlan, n: u64, index: u32) -> Point {
    let offset = assoc::set_offset(plan.stride, template.line, index);
    let random = n >= 3 && plan.stride <= crate::limits::MAX_LINE;
    Point {
        size: n * plan.stride,
        stride: plan.stride,
        pattern: if random {
            Pattern::Random
        } else {
            Pattern::Stride
        },
        line: if random { plan.stride } else { template.line },
        offset,
        seed: template.seed + u64::from(index) * 1000,
        ..template.clone()
    }
}

fn measure_level(
    engine: &mut Engine,
    template: &Point,
    plan: &LevelPlan,
    references: &mut References,
) -> Result<AssocLevel> {
    let hit_ns = references.get(engine, template, plan.hit_size)?;
    let miss_ns = references.get(engine, template, plan.miss_size)?;
    let mut points = Vec::new();
    let mut pages = String::new();
    let mut warnings = Vec::new();
    // Each chain is a pass: its own set (away from the page-aligned start
    // of the stride, so the median outvotes a set that other data share)
    // and order, all its counts measured before the next chain starts,
    // after a pause ([`super::passes`]); each count maps a buffer of its own
    // size.
    let mut by_chain: Vec<Vec<f64>> = Vec::new();
    for chain in 0..assoc::CHAINS {
        if chain > 0 {
            super::passes::pause();
        }
        let mut ns = Vec::new();
        for &n in &plan.lines {
            let m = engine.measure(&set_chain(template, plan, n, chain))?;
            pages = m.page_backing.obtained.clone();
            if plan.stride > 4096 && m.page_backing.huge_fraction < 0.99 && n > 1 {
                warnings.push(format!(
                    "at {n} lines only {:.0}% of the buffer is in huge pages: lines {} apart may not share a set physically",
                    m.page_backing.huge_fraction * 100.0,
                    HumanBytes(plan.stride)
                ));
            }
            ns.push(m.ns_per_load.median);
        }
        by_chain.push(ns);
    }
    for (i, &n) in plan.lines.iter().enumerate() {
        points.push(AssocPoint::of(n, by_chain.iter().map(|c| c[i]).collect()));
    }
    warnings.dedup();
    let estimate = assoc::estimate_ways(&points, hit_ns, miss_ns);
    // Each chain is an independent pass: its own set, its own order.
    let passes = Agreement::of(
        (0..assoc::CHAINS as usize)
            .map(|k| {
                let single: Vec<AssocPoint> = points
                    .iter()
                    .filter_map(|p| {
                        let ns = *p.ns_by_chain.get(k)?;
                        Some(AssocPoint::of(p.lines, vec![ns]))
                    })
                    .collect();
                assoc::estimate_ways(&single, hit_ns, miss_ns).ways
            })
            .collect(),
    );
    let mut notes = estimate.notes;
    if !passes.agree {
        notes.push(format!(
            "ways {}; the median over the chains read {}",
            passes.describe(""),
            estimate.ways.map_or("none".into(), |w| w.to_string())
        ));
    }
    if estimate.ways.is_none() && plan.stride > 4096 && cpuid::under_hypervisor() {
        notes.push(
            "this is a virtual machine: the host may back its huge pages with small ones, so lines a way-size apart in guest memory need not share a physical set".into(),
        );
    }
    notes.extend(warnings.into_iter().take(1));
    if let (Some(w), Some(c)) = (passes.value, plan.claimed_ways)
        && w != c
    {
        notes.push(format!("measured {w} ways; the claim is {c}"));
    }
    Ok(AssocLevel {
        name: plan.name.clone(),
        ways: passes.value,
        readings: passes.readings,
        agree: passes.agree,
        size_bytes: plan.size_bytes,
        claimed_ways: plan.claimed_ways,
        stride: plan.stride,
        hit_ns,
        hit_size: plan.hit_size,
        miss_ns,
        miss_size: plan.miss_size,
        threshold_ns: estimate.threshold_ns,
        ns_by_lines: points.iter().map(|p| p.ns).collect(),
        points,
        pages,
        notes,
    })
}
