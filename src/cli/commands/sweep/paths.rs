//! The files a sweep reads and writes: --resume's result, the named or
//! default CSV, JSON and plots, checked before anything is measured.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cli::SweepArgs;
use crate::cli::files::SweepFiles;
use crate::error::{UsageError, usage};
use crate::experiments::sweep::{self, DEFAULT_FROM, DEFAULT_RATIO, SweepResult};
use crate::platform::counters::parse_event_list;

/// Reads --resume's file, checks it as flags are checked, and refuses flags
/// it would contradict or silently ignore.
pub(super) fn load_resume(path: &Path, args: &SweepArgs) -> Result<SweepResult> {
    let given = [
        ("--to", args.to.is_some()),
        ("--strides", !args.strides.is_empty()),
        ("--pattern", args.measure.pattern.is_some()),
        ("--from", args.from != DEFAULT_FROM),
        ("--ratio", args.ratio != DEFAULT_RATIO),
        ("--repeats", args.measure.repeats.is_some()),
        (
            "--sample-ms",
            args.measure.sample_ms != sweep::DEFAULT_SAMPLE_MS,
        ),
        ("--line", args.measure.line.is_some()),
        ("--seed", args.measure.seed != 1),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
        return usage(format!(
            "{flag} with --resume: a resumed sweep keeps the settings recorded in {}; leave {flag} out (or start a new sweep)",
            path.display()
        ));
    }
    let result = SweepResult::load(path)
        .map_err(|e| UsageError(format!("--resume {}: {e:#}", path.display())))?;
    result.config.validate(path).map_err(UsageError::from)?;
    if args.percentiles && !result.config.percentiles {
        return usage(format!(
            "--percentiles with --resume: {} was measured without them, and its points must agree; leave --percentiles out (or start a new sweep)",
            path.display()
        ));
    }
    if let Some(list) = &args.measure.events {
        let mut asked: Vec<String> = parse_event_list(list)
            .map_err(|e| UsageError(e.to_string()))?
            .into_iter()
            .map(|e| e.name)
            .collect();
        asked.sort();
        if asked != result.config.events {
            return usage(format!(
                "-e/--events with --resume: {} recorded events [{}]; give the same -e or none",
                path.display(),
                result.config.events.join(",")
            ));
        }
    }
    Ok(result)
}

/// Refuses, before anything is measured, files named twice (one would
/// destroy the other) and plots that cannot be written.
pub(super) fn check_named_files(args: &SweepArgs) -> Result<()> {
    use crate::cli::files::{Role, check_files};
    let mut named = vec![
        ("-o/--output", args.measure.output.as_deref(), Role::Writes),
        ("--resume", args.resume.as_deref(), Role::Reads),
        ("--csv", args.csv.as_deref(), Role::Writes),
        ("--json", args.json.as_deref(), Role::Writes),
    ];
    named.extend(
        args.plot
            .iter()
            .map(|p| ("--plot", Some(p.as_path()), Role::Plot)),
    );
    check_files(&named)
}

/// The files: those named (with only --plot, the data go beside the plot
/// too); else --resume's file and its siblings; else a new results
/// directory. A new sweep refuses to overwrite an earlier result unless --force.
pub(super) fn files(args: &SweepArgs) -> Result<SweepFiles> {
    let mut named = SweepFiles {
        csv: args.csv.clone(),
        json: args.json.clone(),
        plots: args.plot.iter().cloned().collect(),
    };
    let mut beside_plot = None;
    if named.csv.is_none() && named.json.is_none() && !named.plots.is_empty() {
        let beside = named.plots[0].with_extension("json");
        if args.measure.output.as_deref().is_some_and(|o| o == beside) {
            return usage(format!(
                "--plot alone keeps the data in {}, which -o names too; give --json FILE",
                beside.display()
            ));
        }
        crate::cli::files::writable(&beside).map_err(|e| {
            UsageError(format!(
                "--plot {}: its data go beside it in {}, which cannot be written: {e}; give --json FILE",
                named.plots[0].display(),
                beside.display()
            ))
        })?;
        crate::cli::common::notice(&format!(
            "--plot alone: the data are kept beside it in {} (give --json FILE to choose)",
            beside.display()
        ));
        named.json = Some(beside.clone());
        beside_plot = Some((named.plots[0].clone(), beside));
    }
    if let Some(json) = &args.resume {
        if !named.is_empty() {
            return usage(
                "--csv, --json or --plot with --resume: a resumed sweep writes to the --resume file and its siblings",
            );
        }
        return Ok(SweepFiles {
            csv: Some(json.with_extension("csv")),
            json: Some(json.clone()),
            plots: vec![json.with_extension("svg"), json.with_extension("png")],
        });
    }
    if named.is_empty() {
        let dir = crate::cli::files::results_dir(Path::new("."))?;
        return Ok(SweepFiles::in_dir(&dir));
    }
    // The file kept beside a plot was never named: --force does not reach it.
    if let Some((plot, beside)) = &beside_plot
        && holds_result(beside, true)
    {
        return usage(format!(
            "--plot {}: its data go beside it in {}, which holds an earlier result; continue it with --resume {}, or give --json FILE",
            plot.display(),
            beside.display(),
            beside.display()
        ));
    }
    if !args.force {
        for (flag, path) in named.flagged() {
            let json = named.json.as_deref() == Some(path);
            let beside = beside_plot.as_ref().is_some_and(|(_, b)| b == path);
            if !beside && holds_result(path, json) {
                return usage(format!(
                    "{flag} {}: the file holds an earlier result; continue it with --resume, or replace it with --force",
                    path.display()
                ));
            }
        }
    }
    Ok(named)
}

/// Whether `path` holds points of an earlier sweep worth keeping. A file a
/// run cut short before its first point (0 bytes, a CSV header alone, a
/// JSON of no point) holds nothing: the same command may replace it.
fn holds_result(path: &Path, json: bool) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.len() == 0 {
        return false;
    }
    if json {
        // Unreadable as a sweep: not ours to judge, so it is kept.
        return SweepResult::load(path).map_or(true, |r| !r.points.is_empty());
    }
    crate::input::read_text(path).map_or(true, |t| t.lines().count() > 1)
}

/// The directory the files share, when they all share one.
pub(super) fn files_dir(files: &SweepFiles) -> Option<PathBuf> {
    let dirs: Vec<&Path> = files.paths().iter().filter_map(|p| p.parent()).collect();
    let first = *dirs.first()?;
    (dirs.iter().all(|d| *d == first) && !first.as_os_str().is_empty()).then(|| first.to_path_buf())
}
