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
use crate::engine::{Measurement, Point};
use crate::error::UsageError;
use crate::experiments::plateaus::{LevelSize, MeasuredLevels};
use crate::experiments::points;
use crate::limits::{self, Origin};
use crate::output::document::Document;
use crate::output::present;
use crate::output::{self, csv};
use crate::platform;
use crate::platform::caches::{self, CacheInfo};
use crate::readback::Kind;
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
    // JSON is written from the result, text and markdown from its JSON value.
    let out = QuickResult {
        points: &points,
        levels: named
            .iter()
            .map(|l| (!l.name.is_empty()).then_some(l.name.as_str()))
            .collect(),
        plateaus: measured.as_ref(),
        sysfs_caches: &caches,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.measure.format {
        Format::Json => output::result_json("quick", &out)?,
        Format::Csv => csv::samples(&points),
        Format::Text => document(&points, &value)?.text(),
        Format::Markdown => document(&points, &value)?.markdown(),
    };
    output.write(&content)
}

/// The headline (the quick table) under a title naming the chain.
fn document(points: &[Measurement], value: &serde_json::Value) -> Result<Document> {
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
    let mut d = Document::new(title);
    for t in present::headline(Kind::Quick, value)? {
        d.table(t);
    }
    Ok(d)
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
        assert_eq!(
            crate::output::present::fits_in(16 << 10, &caches),
            "L1d 32 KiB"
        );
        assert_eq!(crate::output::present::fits_in(1 << 30, &caches), "memory");
    }
}
