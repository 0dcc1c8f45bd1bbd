//! `memlat assoc`: the ways of each cache level from conflict misses (seed 004
//! section 5); see [`crate::analysis::assoc`] for the method.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::Serialize;

use super::{notice, prepare, warn};
use crate::analysis::assoc::{self, AssocPoint, LevelPlan};
use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::{AssocArgs, Format};
use crate::engine::{Engine, Point};
use crate::error::usage;
use crate::experiments::fixed_levels as levels;
use crate::output::{self, Output};
use crate::platform;
use crate::platform::caches::{Machine, Source};
use crate::platform::cpuid;
use crate::units::HumanBytes;

/// One level's result in `memlat assoc --format json`.
#[derive(Debug, Serialize)]
struct AssocLevel {
    /// `L1`, `L2`...
    name: String,
    /// Measured ways; null when the data show no step.
    ways: Option<u64>,
    /// Capacity claimed by sysfs or the profile (used to choose the stride), bytes.
    size_bytes: u64,
    /// Ways claimed by sysfs or the profile, if any.
    claimed_ways: Option<u64>,
    /// Distance between the lines of the set, bytes.
    stride: u64,
    /// This level's latency (random chain at `hit_size`), ns.
    hit_ns: f64,
    /// Random-chain size for `hit_ns`, bytes.
    hit_size: u64,
    /// The next level's latency (random chain at `miss_size`), ns.
    miss_ns: f64,
    /// Random-chain size for `miss_ns`, bytes.
    miss_size: u64,
    /// Latencies at or above this count as misses, ns.
    threshold_ns: f64,
    /// Latency for each number of lines in the set.
    points: Vec<AssocPoint>,
    /// Page backing of the largest set's buffer.
    pages: String,
    /// What to keep in mind.
    notes: Vec<String>,
}

/// What `memlat assoc --format json` prints.
#[derive(Serialize)]
struct AssocOutput<'a> {
    /// One entry per level tested.
    levels: &'a [AssocLevel],
    /// Where sizes and claimed ways came from.
    source: Source,
    /// Prefetcher state during the run.
    prefetchers: &'a str,
}

/// Runs `memlat assoc`.
pub fn run(args: &AssocArgs) -> Result<()> {
    if args.measure.pattern.is_some() {
        return usage(
            "--pattern: memlat assoc chooses its chains (stride chains for the sets, random chains for the reference latencies)",
        );
    }
    if args.max_lines == Some(0) || args.max_lines.is_some_and(|n| n > 128) {
        return usage("--max-lines: give 1 to 128 lines per set");
    }
    let output = Output::create(args.measure.output.as_deref())?;
    let profile = args.machine.as_deref().map(Machine::load).transpose()?;
    let mut prepared = prepare(&args.measure, Pattern::Stride, 3)?;
    for note in &prepared.notices {
        notice(note);
    }
    let machine = profile.unwrap_or_else(|| Machine::from_sysfs(prepared.engine.cpu()));
    if machine.caches.is_empty() {
        return usage(
            "no cache levels known: sysfs lists none here; describe them with --machine FILE",
        );
    }
    for &level in &args.levels {
        if !machine.caches.iter().any(|c| c.level == level) {
            return usage(format!(
                "--levels {level}: no such cache level (known: {})",
                machine
                    .caches
                    .iter()
                    .map(|c| c.level.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
    }
    let (sizes, _) = levels::plan(&machine, platform::mem_available_bytes());
    let memory_size = sizes.last().map_or(256 << 20, |s| s.size);
    let plans: Vec<LevelPlan> = assoc::plan(
        &machine.caches,
        machine.line_bytes,
        memory_size,
        args.max_lines,
    )
    .into_iter()
    .zip(&machine.caches)
    .filter(|(_, c)| args.levels.is_empty() || args.levels.contains(&c.level))
    .map(|(p, _)| p)
    .collect();
    let mut references = References::default();
    let mut results = Vec::new();
    for plan in &plans {
        results.push(measure_level(
            &mut prepared.engine,
            &prepared.template,
            plan,
            &mut references,
        )?);
    }
    report_cycle_source(&prepared.engine);
    let status = prepared.prefetch.status.clone();
    let content = match args.measure.format {
        Format::Json => output::json(&AssocOutput {
            levels: &results,
            source: machine.source,
            prefetchers: &status,
        })?,
        Format::Text | Format::Csv => {
            if args.measure.format == Format::Csv {
                notice("--format csv: assoc prints a table; use --format json for machines");
            }
            table(&results, &status)
        }
    };
    output.write(&content)
}

/// Random-chain latencies by size, measured once each.
#[derive(Default)]
struct References(BTreeMap<u64, f64>);

impl References {
    fn get(&mut self, engine: &mut Engine, template: &Point, size: u64) -> Result<f64> {
        if let Some(&ns) = self.0.get(&size) {
            return Ok(ns);
        }
        eprintln!("reference: random chain at {} ...", HumanBytes(size));
        let m = engine.measure(&Point {
            size,
            pattern: Pattern::Random,
            ..template.clone()
        })?;
        self.0.insert(size, m.ns_per_load.median);
        Ok(m.ns_per_load.median)
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
    eprintln!(
        "{}: 1..{} lines {} apart ...",
        plan.name,
        plan.lines.last().copied().unwrap_or(0),
        HumanBytes(plan.stride)
    );
    let mut points = Vec::new();
    let mut pages = String::new();
    let mut warnings = Vec::new();
    for &n in &plan.lines {
        let m = engine.measure(&Point {
            size: n * plan.stride,
            stride: plan.stride,
            pattern: Pattern::Stride,
            ..template.clone()
        })?;
        pages = m.page_backing.obtained.clone();
        if plan.stride > 4096 && m.page_backing.huge_fraction < 0.99 && n > 1 {
            warnings.push(format!(
                "at {n} lines only {:.0}% of the buffer is in huge pages: lines {} apart may not share a set physically",
                m.page_backing.huge_fraction * 100.0,
                HumanBytes(plan.stride)
            ));
        }
        points.push(AssocPoint {
            lines: n,
            ns: m.ns_per_load.median,
        });
    }
    warnings.dedup();
    for w in warnings.iter().take(1) {
        warn(&format!("{}: {w}", plan.name));
    }
    let estimate = assoc::estimate_ways(&points, hit_ns, miss_ns);
    let mut notes = estimate.notes;
    if estimate.ways.is_none() && plan.stride > 4096 && cpuid::under_hypervisor() {
        notes.push(
            "this is a virtual machine: the host may back its huge pages with small ones, so lines a way-size apart in guest memory need not share a physical set".into(),
        );
    }
    notes.extend(warnings.into_iter().take(1));
    if let (Some(w), Some(c)) = (estimate.ways, plan.claimed_ways)
        && w != c
    {
        notes.push(format!("measured {w} ways; the claim is {c}"));
    }
    Ok(AssocLevel {
        name: plan.name.clone(),
        ways: estimate.ways,
        size_bytes: plan.size_bytes,
        claimed_ways: plan.claimed_ways,
        stride: plan.stride,
        hit_ns,
        hit_size: plan.hit_size,
        miss_ns,
        miss_size: plan.miss_size,
        threshold_ns: estimate.threshold_ns,
        points,
        pages,
        notes,
    })
}

fn table(levels: &[AssocLevel], prefetchers: &str) -> String {
    let mut out = String::from(
        "memlat assoc: N lines one stride apart share a set; the largest N that still hits is the ways\n\n",
    );
    out += &format!(
        "{:<6} {:>10} {:>10} {:>8} {:>8} {:>16}\n",
        "level", "size", "stride", "claimed", "ways", "hit / miss ns"
    );
    for l in levels {
        out += &format!(
            "{:<6} {:>10} {:>10} {:>8} {:>8} {:>16}\n",
            l.name,
            HumanBytes(l.size_bytes).to_string(),
            HumanBytes(l.stride).to_string(),
            l.claimed_ways.map_or("?".into(), |w| w.to_string()),
            l.ways.map_or("unknown".into(), |w| w.to_string()),
            format!("{:.2} / {:.2}", l.hit_ns, l.miss_ns)
        );
    }
    for l in levels {
        out += &format!(
            "\n{} (threshold {:.2} ns), ns by lines in the set:\n",
            l.name, l.threshold_ns
        );
        let cells: Vec<String> = l
            .points
            .iter()
            .map(|p| {
                let mark = if p.ns >= l.threshold_ns { "*" } else { "" };
                format!("{}:{:.2}{mark}", p.lines, p.ns)
            })
            .collect();
        for chunk in cells.chunks(8) {
            out += &format!("  {}\n", chunk.join("  "));
        }
        for note in &l.notes {
            out += &format!("  note: {note}\n");
        }
    }
    out += &format!("\n(* = miss: at or above the threshold)\nprefetchers: {prefetchers}\n");
    out
}
