//! `memlat levels`: seed 002's procedure, one random walk per cache level and
//! one for memory, N iterations each; results_{name}.csv and a summary.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::progress::AnnounceAnd;
use crate::cli::{Format, LevelsArgs};
use crate::engine::Point;
use crate::error::usage;
use crate::experiments::fixed_levels::{self as levels, LevelSummary};
use crate::experiments::points;
use crate::output;
use crate::output::document::Document;
use crate::output::present;
use crate::platform;
use crate::platform::caches::{Machine, Source};
use crate::readback::Kind;
use crate::units::HumanBytes;

/// What `memlat levels --format json` prints.
#[derive(Serialize)]
struct LevelsOutput<'a> {
    /// The machine's name (in the CSV's name).
    name: &'a str,
    /// Where the cache sizes came from.
    source: Source,
    /// The per-iteration CSV written.
    csv: String,
    /// Prefetcher state during the run.
    prefetchers: &'a str,
    /// One summary per level, memory last.
    levels: &'a [LevelSummary],
}

/// A measurement's warning as advice `memlat levels` accepts: it refuses
/// `--repeats` (each level is measured `--iterations` times).
fn levels_advice(warning: &str) -> String {
    warning.replace(
        crate::engine::SPREAD_ADVICE,
        "more --iterations or a quieter machine will tell",
    )
}

/// Runs `memlat levels`.
pub fn run(args: &LevelsArgs) -> Result<()> {
    crate::limits::repeats(args.iterations, crate::limits::Origin::Flag("--iterations"))?;
    if args.measure.repeats.is_some() {
        return usage(
            "--repeats: memlat levels repeats each level --iterations times (default 10); use --iterations",
        );
    }
    let reads = [
        ("--machine", args.machine.as_deref()),
        ("--plateaus", args.plateaus.file()),
    ];
    crate::cli::files::check_reads_output_and_plot(&reads, args.measure.output.as_deref(), None)?;
    let output = Output::create(args.measure.output.as_deref())?;
    let profile = args.machine.as_deref().map(Machine::load).transpose()?;
    let profile_given = profile.is_some();
    let mut prepared = prepare(&args.measure, Pattern::Random, args.iterations)?;
    let mut machine = profile.unwrap_or_else(|| Machine::from_sysfs(prepared.engine.cpu()));
    if let Some(name) = &args.name {
        if name.is_empty() || name.contains('/') {
            return usage(format!(
                "--name '{name}': give a plain name, e.g. --name denali"
            ));
        }
        machine.name = name.clone();
    }
    if machine.caches.is_empty() {
        return usage(
            "no cache levels known: sysfs lists none here; describe them with --machine FILE (see examples/machine-zen4-vm.txt)",
        );
    }
    let csv_path = args
        .csv
        .clone()
        .map_or_else(|| default_csv(&machine.name), Ok)?;
    crate::cli::files::check_files(&[
        (
            "--machine",
            args.machine.as_deref(),
            crate::cli::files::Role::Reads,
        ),
        (
            "--plateaus",
            args.plateaus.file(),
            crate::cli::files::Role::Reads,
        ),
        (
            "-o/--output",
            args.measure.output.as_deref(),
            crate::cli::files::Role::Writes,
        ),
        ("--csv", Some(&csv_path), crate::cli::files::Role::Writes),
    ])?;
    let csv_file = Output::create_for(Some(&csv_path), "--csv")?;
    let (mut sizes, mut notes) = levels::plan(&machine, platform::mem_available_bytes());
    if profile_given {
        notes.push(
            "sizes from the --machine profile: half of each cache and memory at 8x its last level, as seed 002 (without --machine, the measured plateaus and the memory every command measures)".into(),
        );
    } else {
        // sysfs's sizes land on the ramps of a shared machine: the measured plateaus place them.
        let measured = crate::cli::plateaus::measured_levels(
            &args.plateaus,
            &mut prepared.engine,
            &prepared.template,
        )?;
        levels::place_in_plateaus(
            &mut sizes,
            &measured,
            machine.line_bytes,
            platform::mem_available_bytes(),
            &mut notes,
        );
    }
    for note in prepared.notices.iter().chain(&notes) {
        notice(note);
    }
    let planned: Vec<(String, Point)> = sizes
        .iter()
        .map(|level| {
            let label = format!(
                "{} at {} ({} iterations)",
                level.level,
                HumanBytes(level.size),
                args.iterations
            );
            let point = Point {
                size: level.size,
                ..prepared.template.clone()
            };
            (label, point)
        })
        .collect();
    let name_of = |i: usize| sizes[i].level.clone();
    let rows_of =
        |done: &[crate::engine::Measurement]| -> Vec<(String, crate::engine::Measurement)> {
            done.iter()
                .enumerate()
                .map(|(i, m)| (name_of(i), m.clone()))
                .collect()
        };
    // Rewritten after each level so an interrupted run keeps what it measured.
    let mut observer = AnnounceAnd(|done: &Vec<crate::engine::Measurement>| {
        csv_file.write(&crate::output::csv::levels(&rows_of(done)))
    });
    let mut measured = points::run(&mut prepared.engine, &planned, &mut observer)?;
    for m in &mut measured {
        for w in &mut m.warnings {
            *w = levels_advice(w);
        }
    }
    let rows = rows_of(&measured);
    let mut summaries = Vec::new();
    for (level, m) in &rows {
        for w in &m.warnings {
            warn(&format!("{level}: {w}"));
        }
        summaries.push(levels::summarise(level, m));
    }
    report_cycle_source(&prepared.engine);
    eprintln!("wrote {}", csv_path.display());
    let status = prepared.prefetch.status.clone();
    // JSON is written from the result, text and markdown from its JSON value.
    let out = LevelsOutput {
        name: &machine.name,
        source: machine.source,
        csv: csv_path.display().to_string(),
        prefetchers: &status,
        levels: &summaries,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.measure.format {
        Format::Json => output::result_json("levels", &out)?,
        Format::Csv => crate::output::csv::levels(&rows),
        Format::Text | Format::Markdown => {
            let mut d = Document::new(format!(
                "memlat levels: {} (seed 002: random walk, fresh each iteration)",
                machine.name
            ));
            for t in present::headline(Kind::Levels, &value)? {
                d.table(t);
            }
            d.line(format!(
                "{}; per-iteration rows in {}; prefetchers {}",
                match (machine.source, profile_given) {
                    (Source::Profile, _) | (_, true) => "cache sizes from --machine (half of each)",
                    (Source::Sysfs, false) =>
                        "levels from sysfs, each size in its measured plateau",
                },
                csv_path.display(),
                status
            ));
            if args.measure.format == Format::Text {
                d.text()
            } else {
                d.markdown()
            }
        }
    };
    output.write(&content)
}

/// `memlat-results/results_{name}.csv`, its directory created (never
/// through a link another user owns): results go under memlat-results/
/// unless --csv names a path.
fn default_csv(name: &str) -> Result<PathBuf> {
    let dir = PathBuf::from(crate::cli::files::RESULTS_DIR);
    crate::safe_fs::Dir::create_all(&dir, 0o755).map_err(|e| {
        crate::error::UsageError(format!(
            "cannot create {}: {e}; name the file with --csv FILE, or run where you can write",
            dir.display()
        ))
    })?;
    Ok(dir.join(format!("results_{name}.csv")))
}

#[cfg(test)]
mod advice_tests {
    use super::levels_advice;

    #[test]
    fn levels_advises_iterations_not_the_repeats_it_refuses() {
        let w = format!(
            "repeats spread 9.0% (min 1 ns, max 2 ns): another tenant; {}",
            crate::engine::SPREAD_ADVICE
        );
        let advice = levels_advice(&w);
        assert!(!advice.contains("--repeats"), "{advice}");
        assert!(advice.contains("more --iterations"), "{advice}");
    }
}
