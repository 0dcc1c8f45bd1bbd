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
        &[
            ("--machine", args.machine.as_deref()),
            ("--plateaus", args.plateaus.file()),
        ],
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
    // The references (each level's latency, the next one's) in the middles
    // of the measured plateaus, memory by the one rule: never sizes from a
    // claimed 260 MiB L3 that a guest's share is a twentieth of.
    let available = platform::mem_available_bytes();
    let measured = Some(crate::cli::plateaus::measured_levels(
        &args.plateaus,
        &mut prepared.engine,
        &prepared.template,
    )?);
    let line = machine.line_bytes.max(8);
    let (middles, memory_size): (Vec<Option<u64>>, u64) = match &measured {
        Some(m) => (
            machine
                .caches
                .iter()
                .map(|c| m.level(c.level).map(|p| p.middle(line)))
                .collect(),
            m.memory(available, line).size,
        ),
        None => (
            Vec::new(),
            crate::experiments::quick::claimed_memory(&machine.caches, available).size,
        ),
    };
    let page = crate::experiments::memory::page_bytes(args.measure.pages);
    let plans: Vec<LevelPlan> = assoc::plan(
        &machine.caches,
        machine.line_bytes,
        page,
        &middles,
        memory_size,
        args.max_lines,
    )
    .into_iter()
    .zip(&machine.caches)
    .filter(|(_, c)| args.levels.is_empty() || args.levels.contains(&c.level))
    .map(|(p, _)| p)
    .collect();
    say_cost(&plans, &prepared.template, available);
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

/// A plan longer than this is said before it starts, with the flags that shrink it.
const SAY_SECONDS: f64 = 60.0;

/// Says the plan (each level's lines and stride, or why it is not
/// measured), its time and largest buffer, on stderr before it starts;
/// one that would take more than a minute or more than a quarter of the
/// memory available is said as a warning naming --levels and --max-lines.
fn say_cost(plans: &[LevelPlan], template: &crate::engine::Point, available: Option<u64>) {
    let parts: Vec<String> = plans
        .iter()
        .map(|p| match &p.skip {
            Some(_) => format!("{}: not measured (said below)", p.name),
            None => format!(
                "{}: 1..{} lines {} apart",
                p.name,
                p.lines.last().copied().unwrap_or(0),
                crate::units::HumanBytes(p.stride)
            ),
        })
        .collect();
    // A point takes about five sample times a repeat (its samples of A
    // and 2A loads, their calibration and warm-up) and 10 ms to map and
    // fill its buffer: 160 ms at the default 10 ms and 3 repeats on a
    // loaded Zen 3 guest (216 points, 35 s).
    let point_s =
        0.01 + 5.0 * template.sample_time.as_secs_f64() * f64::from(template.repeats.max(1));
    let seconds = plans.iter().map(|p| p.points()).sum::<u64>() as f64 * point_s;
    let largest = plans.iter().map(|p| p.largest_buffer()).max().unwrap_or(0);
    notice(&format!(
        "memlat assoc: {}; about {:.0} s, {} at most mapped at once",
        parts.join(", "),
        seconds,
        crate::units::HumanBytes(largest)
    ));
    let too_long = seconds > SAY_SECONDS;
    let too_big = available.is_some_and(|a| largest > a / 4);
    if too_long || too_big {
        warn(&format!(
            "this plan {}: give --levels N (one level) or --max-lines N (fewer lines per set) to shrink it",
            match (too_long, too_big) {
                (true, true) =>
                    "takes more than a minute and maps more than a quarter of the memory available",
                (true, false) => "takes more than a minute",
                _ => "maps more than a quarter of the memory available",
            }
        ));
    }
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
    for l in levels.iter().filter(|l| !l.points.is_empty()) {
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
