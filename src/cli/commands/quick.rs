//! `memlat` with no command: a random chain at a few sizes from L1 to DRAM.

use anyhow::Result;
use serde::Serialize;

use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{prepare, warn};
use crate::cli::files::Output;
use crate::cli::plateaus::measured_levels;
use crate::cli::progress::Announce;
use crate::cli::{Format, QuickArgs};
use crate::engine::{CycleSource, Measurement, Point};
use crate::error::UsageError;
use crate::experiments::plateaus::{LevelSize, MeasuredLevels};
use crate::experiments::points;
use crate::limits::{self, Origin};
use crate::output::document::Document;
use crate::output::table::{Cell, Table};
use crate::output::{self, csv};
use crate::platform;
use crate::platform::caches::{self, CacheInfo};
use crate::units::HumanBytes;

#[derive(Serialize)]
struct QuickResult<'a> {
    /// One measurement per size.
    points: &'a [Measurement],
    /// The level each point was placed in (`L1`...`memory`; null for --sizes).
    levels: Vec<Option<&'a str>>,
    /// The measured plateaus the sizes were placed in, and where they came
    /// from (null with --sizes).
    plateaus: Option<&'a MeasuredLevels>,
    /// The caches sysfs claims, for comparison (not measured).
    sysfs_caches: &'a [CacheInfo],
}

fn fits_in(size: u64, caches: &[CacheInfo]) -> String {
    caches
        .iter()
        .find(|c| size <= c.size_bytes)
        .map_or("memory".to_string(), |c| {
            format!("{} {}", c.name(), HumanBytes(c.size_bytes))
        })
}

/// Runs the quick table.
pub fn run(args: &QuickArgs) -> Result<()> {
    crate::cli::files::check_reads_output_and_plot(
        &[("--plateaus", args.plateaus.file())],
        args.measure.output.as_deref(),
        None,
    )?;
    let output = Output::create(args.measure.output.as_deref())?;
    let prepared = prepare(&args.measure, Pattern::Random, 3)?;
    for note in &prepared.notices {
        crate::cli::common::notice(note);
    }
    let mut engine = prepared.engine;
    let caches = caches::data_caches(engine.cpu());
    let measured = if args.sizes.is_empty() {
        Some(measured_levels(
            &args.plateaus,
            &mut engine,
            &prepared.template,
        )?)
    } else {
        None
    };
    let named: Vec<LevelSize> = match &measured {
        Some(m) => m.sizes(prepared.template.line, platform::mem_available_bytes()),
        None => args
            .sizes
            .iter()
            .map(|&size| LevelSize {
                name: String::new(),
                size,
            })
            .collect(),
    };
    let sizes: Vec<u64> = named.iter().map(|l| l.size).collect();
    let mut planned: Vec<(String, Point)> = Vec::new();
    for &size in &sizes {
        let size = limits::size(size, Origin::Flag("--sizes")).map_err(UsageError::from)?;
        // Each size once (--sizes 64K,64K is one point).
        if planned.iter().any(|(_, p)| p.size == size) {
            continue;
        }
        // Every size is checked before the first is measured.
        crate::engine::ensure_memory(size, platform::mem_available_bytes()).map_err(|e| {
            let (flag, fix) = if args.sizes.is_empty() {
                ("--plateaus", "give --plateaus probe, or --sizes")
            } else {
                ("--sizes", "give smaller sizes")
            };
            UsageError(format!(
                "{flag}: the {} point: {e}; {fix}",
                HumanBytes(size)
            ))
        })?;
        let point = Point {
            size,
            until_precise: args.measure.repeats.is_none(),
            ..prepared.template.clone()
        };
        planned.push((HumanBytes(size).to_string(), point));
    }
    let points = points::run(&mut engine, &planned, &mut Announce)?;
    for m in &points {
        for w in &m.warnings {
            warn(&format!("{}: {w}", HumanBytes(m.size)));
        }
    }
    report_cycle_source(&engine);
    let content = match args.measure.format {
        Format::Json => output::result_json(
            "quick",
            &QuickResult {
                points: &points,
                levels: named
                    .iter()
                    .map(|l| (!l.name.is_empty()).then_some(l.name.as_str()))
                    .collect(),
                plateaus: measured.as_ref(),
                sysfs_caches: &caches,
            },
        )?,
        Format::Csv => csv::samples(&points),
        Format::Text => document(&points, &named, measured.as_ref(), &caches).text(),
        Format::Markdown => document(&points, &named, measured.as_ref(), &caches).markdown(),
    };
    output.write(&content)
}

fn document(
    points: &[Measurement],
    named: &[LevelSize],
    measured: Option<&MeasuredLevels>,
    caches: &[CacheInfo],
) -> Document {
    let title = match points.first() {
        Some(first) => format!(
            "memlat: load latency by pointer chasing ({} chain, {}-byte nodes, {} kernel, CPU {})",
            first.pattern.name(),
            first.line,
            first.kernel.name(),
            first.cpu
        ),
        None => "memlat: load latency by pointer chasing".into(),
    };
    let mut t = Table::new(&[
        "<size",
        "<level",
        "<sysfs: fits in",
        "ns/load",
        "cycles/load",
        "ns min..max",
        "repeats",
        "pages",
    ]);
    for (m, level) in points.iter().zip(named) {
        t.row(vec![
            HumanBytes(m.size).to_string().into(),
            if level.name.is_empty() {
                "-".into()
            } else {
                level.name.clone().into()
            },
            fits_in(m.size, caches).into(),
            Cell::float(m.ns_per_load.median, 2),
            Cell::float(m.cycles_per_load.median, 2),
            format!("{:.2}..{:.2}", m.ns_per_load.min, m.ns_per_load.max).into(),
            (m.samples.len() as u64).into(),
            m.page_backing.obtained.clone().into(),
        ]);
    }
    if let Some(why) = clock_suspect(points, caches) {
        t.note(format!(
            "clock suspect: {why}; the cycles column is not to be read"
        ));
    }
    if let Some(measured) = measured {
        t.note(measured.describe());
    }
    // Repeats adapt to the noise, so rows may differ: say what each used.
    let used: Vec<usize> = points.iter().map(|m| m.samples.len()).collect();
    let (fewest, most) = (
        used.iter().copied().min().unwrap_or(0),
        used.iter().copied().max().unwrap_or(0),
    );
    let repeats = if fewest == most {
        format!("median of {most} repeats")
    } else {
        format!("median of each row's repeats ({fewest} to {most}: the repeats column)")
    };
    if let Some(m) = points.last() {
        t.note(format!(
            "cycles: {} ({:.3} GHz); {repeats}, each a fresh random chain",
            match m.cycle_source {
                CycleSource::Perf => "counted by perf's cycles event",
                CycleSource::CycleCounter => "counted by the core's cycle counter",
                CycleSource::Given => "ns x the clock given with --ghz",
                CycleSource::Estimated =>
                    "estimated, ns x the core clock measured from dependent add and multiply chains",
            },
            m.clock_ghz,
        ));
    }
    let mut d = Document::new(title);
    d.table(t);
    d
}

/// Why estimated cycles are not to be read: the clock's verdict, or an
/// L1-sized row under 2 cycles.
fn clock_suspect(points: &[Measurement], caches: &[CacheInfo]) -> Option<String> {
    let estimated: Vec<&Measurement> = points
        .iter()
        .filter(|m| m.cycle_source == CycleSource::Estimated)
        .collect();
    if let Some(why) = estimated
        .iter()
        .find_map(|m| m.clock_method.as_ref()?.suspect.clone())
    {
        return Some(why);
    }
    let l1_size = caches.first().map_or(16 << 10, |c| c.size_bytes);
    estimated
        .iter()
        .find(|m| m.size <= l1_size)
        .and_then(|m| crate::platform::clock::l1_cycles_suspect(m.cycles_per_load.median))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_say_which_claimed_level_they_fit_in() {
        let caches = [
            CacheInfo::example(1, 32 << 10),
            CacheInfo::example(2, 1 << 20),
        ];
        assert_eq!(fits_in(16 << 10, &caches), "L1d 32 KiB");
        assert_eq!(fits_in(1 << 30, &caches), "memory");
    }
}
