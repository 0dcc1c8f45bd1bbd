//! `memlat assoc`: the ways of each cache level from conflict misses (seed 004
//! section 5); see [`crate::analysis::assoc`] for the method.

use anyhow::Result;

use crate::analysis::assoc::rise_threshold;
use serde::Serialize;

use crate::analysis::assoc::{self, LevelPlan};
use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::{AssocArgs, Format};
use crate::error::usage;
use crate::experiments::assoc::{self as experiment, AssocLevel};
use crate::experiments::fixed_levels as levels;
use crate::output;
use crate::output::document::Document;
use crate::output::present;
use crate::output::table::{Cell, Table};
use crate::platform;
use crate::platform::caches::{Machine, Source};
use crate::readback::Kind;

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
    crate::cli::files::check_reads_output_and_plot(
        &[("--machine", args.machine.as_deref())],
        args.measure.output.as_deref(),
        None,
    )?;
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
    let results = experiment::run(
        &mut prepared.engine,
        &prepared.template,
        &plans,
        &mut crate::cli::progress::Announce,
    )?;
    for level in &results {
        for note in level.notes.iter().filter(|n| n.contains("huge pages")) {
            warn(&format!("{}: {note}", level.name));
        }
    }
    report_cycle_source(&prepared.engine);
    let status = prepared.prefetch.status.clone();
    // JSON is written from the result, text and markdown from its JSON value.
    let out = AssocOutput {
        levels: &results,
        source: machine.source,
        prefetchers: &status,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.measure.format {
        Format::Json => output::result_json("assoc", &out)?,
        Format::Csv => points_table(&results).csv(),
        Format::Text => document(&results, &status, &value)?.text(),
        Format::Markdown => document(&results, &status, &value)?.markdown(),
    };
    output.write(&content)
}

/// One row per level and line count: the data behind the ways (`*` marks a miss).
fn points_table(levels: &[AssocLevel]) -> Table {
    let mut t = Table::new(&["<level", "lines", "ns", "threshold_ns", "<miss"]);
    t.note("threshold_ns: half way from a hit to the least any replacement policy misses with that many lines in the set, 1 in N loads");
    for l in levels {
        for p in &l.points {
            let miss = if p.ns >= rise_threshold(p.lines, l.hit_ns, l.miss_ns) {
                "*"
            } else {
                ""
            };
            t.row(vec![
                l.name.clone().into(),
                p.lines.into(),
                Cell::float(p.ns, 2),
                Cell::float(rise_threshold(p.lines, l.hit_ns, l.miss_ns), 2),
                miss.into(),
            ]);
        }
    }
    t
}

/// The headline (each level's ways, its notes below), then each level's
/// latency by lines in the set.
fn document(
    levels: &[AssocLevel],
    prefetchers: &str,
    value: &serde_json::Value,
) -> Result<Document> {
    let mut d = Document::new(
        "memlat assoc: N lines one stride apart share a set; the largest N that still hits is the ways",
    );
    for t in present::headline(Kind::Assoc, value)? {
        d.table(t);
    }
    for l in levels {
        d.heading(format!(
            "{} (risen at {:.2} ns one line past the ways), ns by lines in the set (* = risen: nearer the least any replacement misses with N lines, 1 in N loads, than a hit):",
            l.name, l.threshold_ns
        ));
        let cells: Vec<String> = l
            .points
            .iter()
            .map(|p| {
                let mark = if p.ns >= rise_threshold(p.lines, l.hit_ns, l.miss_ns) {
                    "*"
                } else {
                    ""
                };
                format!("{}:{:.2}{mark}", p.lines, p.ns)
            })
            .collect();
        d.lines(cells.chunks(8).map(|c| c.join("  ")).collect());
    }
    d.line(format!("prefetchers: {prefetchers}"));
    Ok(d)
}
