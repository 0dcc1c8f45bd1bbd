//! `memlat characterize`: the whole machine in one command. Each stage of
//! [`stages::STAGES`] runs as a child memlat with its own flags and its own
//! Ctrl-C handling ([`child`]) and writes `DIR/<stage>.json`; a summary
//! ([`summary`]) follows every stage, and one HTML report of them all ends
//! the run, interrupted or not.

mod child;
mod stages;
mod summary;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, Result};

use crate::cli::CharacterizeArgs;
use crate::cli::files::{Role, check_files};
use crate::cli::interrupt::{self, Interrupted};
use crate::error::{UsageError, usage};
use stages::{Context, Mode, Planned};
use summary::{StageRecord, Status, Summary};

/// The summary's file name in DIR.
const SUMMARY: &str = "characterize.json";
/// The report's file name in DIR.
const REPORT: &str = "report.html";

/// Runs `memlat characterize`.
pub fn run(args: &CharacterizeArgs) -> Result<()> {
    let mode = match (args.tiny, args.quick) {
        (true, _) => Mode::Tiny,
        (false, true) => Mode::Quick,
        (false, false) => Mode::Full,
    };
    let cpus = crate::platform::allowed_cpus().len();
    let planned = stages::plan(mode, cpus, &args.stages, &has_flag).map_err(UsageError)?;
    let (dir, resume) = match (&args.output, &args.resume) {
        (_, Some(dir)) => (dir.as_path(), true),
        (Some(dir), None) => (dir.as_path(), false),
        (None, None) => return usage("-o DIR: give the directory for the results"),
    };
    let earlier = prepare_dir(dir, args.force, resume)?;
    if let Some(e) = &earlier
        && !e.mode.is_empty()
        && e.mode != mode.name()
    {
        return usage(format!(
            "-o {}: the interrupted run there was a {} one; give the same settings to complete it, or --force to start again",
            dir.display(),
            e.mode
        ));
    }
    let mut context = context(dir, mode, cpus);
    let (summary_path, report_path) = (dir.join(SUMMARY), dir.join(REPORT));
    let files: Vec<PathBuf> = planned
        .iter()
        .map(|p| context.file(p.stage.name))
        .chain([summary_path.clone(), report_path.clone()])
        .collect();
    check_files(
        &files
            .iter()
            .map(|f| ("-o/--output", Some(f.as_path()), Role::Writes))
            .collect::<Vec<_>>(),
    )?;
    let exe = std::env::current_exe().context("finding this memlat's own program")?;
    eprintln!(
        "memlat characterize ({}): {} stage(s) into {}, about {}",
        mode.name(),
        planned.len(),
        dir.display(),
        duration(planned.iter().map(|p| p.estimate).sum())
    );
    let _ctrl_c = interrupt::Guard::install();
    // SIGTERM (a shutdown, a batch system's time limit) ends it as Ctrl-C
    // does: the stage in progress keeps its points and the report is written.
    interrupt::also_on_sigterm();
    let start = Instant::now();
    let mut summary = Summary {
        mode: mode.name().into(),
        complete: false,
        seconds: 0.0,
        stages: Vec::new(),
        report: None,
        report_left_out: Vec::new(),
    };
    let (mut actual, mut estimated) = (0.0, 0.0);
    for (k, p) in planned.iter().enumerate() {
        let label = format!("[{}/{}] {}", k + 1, planned.len(), p.stage.name);
        let kept = earlier.as_ref().and_then(|e| finished_earlier(e, p, dir));
        let record = if let Some(record) = kept {
            eprintln!("{label}: done by the earlier run, kept");
            if p.stage.name == "sweep" {
                learn_plateaus(&mut context);
            }
            record
        } else if let Some(why) = &p.skip {
            eprintln!("{label}: skipped: {why}");
            skipped(p, why)
        } else if interrupt::interrupted() {
            skipped(p, &format!("not started: {}", interrupt::cause()))
        } else {
            let left: Vec<f64> = planned[k..].iter().map(|p| p.estimate).collect();
            eprintln!(
                "{label}: about {} ({} left in all) ...",
                duration(stages::time_left(&[p.estimate], actual, estimated)),
                duration(stages::time_left(&left, actual, estimated))
            );
            let record = run_stage(&exe, p, &context, earlier.is_some())?;
            (actual, estimated) = (actual + record.seconds, estimated + p.estimate);
            eprintln!("{label}: {}", outcome(&record));
            if p.stage.name == "sweep" && record.file.is_some() {
                learn_plateaus(&mut context);
            }
            record
        };
        summary.stages.push(record);
        summary.seconds = start.elapsed().as_secs_f64();
        summary.write(&summary_path)?;
    }
    let interrupted = interrupt::interrupted();
    let failed: Vec<String> = summary
        .with(Status::Failed)
        .iter()
        .map(|s| s.name.clone())
        .collect();
    summary.complete =
        !interrupted && failed.is_empty() && summary.with(Status::Interrupted).is_empty();
    summary.write(&summary_path)?;
    let mut inputs = vec![summary_path.clone()];
    inputs.extend(
        summary
            .stages
            .iter()
            .filter_map(|s| s.file.as_ref().map(|f| dir.join(f))),
    );
    let (html, left_out) = crate::cli::commands::report::html_of(&inputs);
    crate::cli::files::replace(&report_path, &html)?;
    for l in &left_out {
        crate::cli::common::warn(&format!("left out of the report: {l}"));
    }
    summary.report = Some(REPORT.into());
    summary.report_left_out = left_out;
    summary.seconds = start.elapsed().as_secs_f64();
    summary.write(&summary_path)?;
    eprintln!(
        "memlat characterize: {} in all; report {}, summary {}",
        duration(summary.seconds),
        report_path.display(),
        summary_path.display()
    );
    if interrupted {
        return Err(Interrupted(format!(
            "memlat characterize: interrupted ({}); the report holds the {} stage(s) done and what the interrupted one measured",
            interrupt::cause(),
            summary.with(Status::Done).len()
        ))
        .into());
    }
    if !failed.is_empty() {
        anyhow::bail!(
            "{} of {} stage(s) failed ({}): why is in {}, and each stage's command to repeat it alone",
            failed.len(),
            summary.stages.len(),
            failed.join(", "),
            summary_path.display()
        );
    }
    Ok(())
}

/// Whether this memlat's `command` has `--flag`.
fn has_flag(command: &str, flag: &str) -> bool {
    use clap::CommandFactory;
    crate::cli::Cli::command()
        .find_subcommand(command)
        .is_some_and(|c| c.get_arguments().any(|a| a.get_long() == Some(flag)))
}

/// DIR: created when missing; one that holds files only with --force, or
/// when they are an unfinished run's (its summary, when it left one, is
/// returned: that run is completed).
fn prepare_dir(dir: &Path, force: bool, resume: bool) -> Result<Option<Summary>> {
    let flag = if resume { "--resume" } else { "-o" };
    match std::fs::symlink_metadata(dir) {
        // Not followed: a link planted in a shared directory would aim a
        // root run's files wherever its owner chose.
        Ok(m) if m.file_type().is_symlink() => usage(format!(
            "{flag} {}: it is a symbolic link; memlat writes no file through a link: name the directory itself",
            dir.display()
        )),
        Ok(m) if !m.is_dir() => usage(format!(
            "{flag} {}: exists and is not a directory; give a directory (created when missing)",
            dir.display()
        )),
        Ok(_) => {
            let names: Vec<String> = std::fs::read_dir(dir)
                .map_err(|e| UsageError(format!("{flag} {}: cannot read it: {e}", dir.display())))?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if names.is_empty() || force {
                return Ok(None);
            }
            let earlier = Summary::load(&dir.join(SUMMARY)).map_err(|e| {
                UsageError(format!(
                    "{flag} {}: {e}; its summary is not one characterize wrote: give a new or empty directory, or --force to measure again",
                    dir.display()
                ))
            })?;
            match earlier {
                Some(s) if s.complete && s.report.is_some() => usage(format!(
                    "{flag} {}: holds a complete characterization ({REPORT}); give a new or empty directory, or --force to measure again",
                    dir.display()
                )),
                Some(s) => Ok(Some(s)),
                // Killed before its first stage ended: nothing to keep.
                None if resume || names.iter().all(|n| written_here(n)) => Ok(Some(Summary {
                    mode: String::new(),
                    complete: false,
                    seconds: 0.0,
                    stages: Vec::new(),
                    report: None,
                    report_left_out: Vec::new(),
                })),
                None => usage(format!(
                    "{flag} {}: the directory holds files already; give a new or empty one, or --force to replace the files characterize writes there (<stage>.json, {SUMMARY}, {REPORT}; others are left alone)",
                    dir.display()
                )),
            }
        }
        Err(_) if resume => usage(format!(
            "--resume {}: no such directory; start a run with -o {}",
            dir.display(),
            dir.display()
        )),
        // Never through a link another user owns, at any component.
        Err(_) => crate::safe_fs::Dir::create_all(dir, 0o755)
            .map(|_| None)
            .map_err(|e| UsageError(format!("-o {}: cannot create it: {e}", dir.display())).into()),
    }
}

/// Whether characterize writes a file of this name (a stage's JSON, the
/// summary, the report, a sweep's siblings, or a temporary beside one).
fn written_here(name: &str) -> bool {
    // A killed stage's lock (`.NAME.lock`) or temporary (`.NAME.PID.TAG.tmp`).
    let base = name
        .strip_prefix('.')
        .and_then(|n| {
            n.strip_suffix(".lock")
                .map(str::to_string)
                .or_else(|| n.split_once(".json.").map(|(b, _)| format!("{b}.json")))
        })
        .unwrap_or_else(|| name.to_string());
    let stage = base
        .strip_suffix(".json")
        .or_else(|| base.strip_prefix("sweep.").map(|_| "sweep"));
    base == REPORT
        || base == SUMMARY
        || stage.is_some_and(|s| stages::STAGES.iter().any(|st| st.name == s))
}

/// The earlier run's record of `p` when it finished it and its file is
/// still there, by the one name characterize gives it (`<stage>.json` in
/// DIR: a record naming any other file is measured again, never read).
fn finished_earlier(earlier: &Summary, p: &Planned, dir: &Path) -> Option<StageRecord> {
    let record = earlier.stages.iter().find(|s| s.name == p.stage.name)?;
    let own = format!("{}.json", p.stage.name);
    let present = record.file.as_deref() == Some(own.as_str())
        && std::fs::symlink_metadata(dir.join(&own)).is_ok_and(|m| m.is_file());
    (record.status == Status::Done && present).then(|| record.clone())
}

/// The context before any stage: sizes from sysfs until the sweep is done.
fn context(dir: &Path, mode: Mode, cpus: usize) -> Context {
    let cpu = crate::platform::current_cpu().unwrap_or(0);
    let caches = crate::platform::caches::data_caches(cpu);
    let available = crate::platform::mem_available_bytes();
    let dram = crate::experiments::quick::claimed_memory(&caches, available).size;
    Context {
        dir: dir.to_path_buf(),
        mode,
        cpus,
        plateaus: None,
        dram_bytes: dram,
        sweep_to: stages::sweep_to(caches.iter().map(|c| c.size_bytes).max(), available),
    }
}

/// After the sweep: the later stages place their sizes in its plateaus.
fn learn_plateaus(context: &mut Context) {
    let sweep = context.file("sweep");
    match crate::experiments::plateaus::from_file(&sweep) {
        Ok(levels) => {
            let available = crate::platform::mem_available_bytes();
            if let Some(memory) = levels.sizes(64, available).last() {
                context.dram_bytes = memory.size;
            }
            context.plateaus = Some(sweep);
        }
        Err(e) => crate::cli::common::notice(&format!(
            "the sweep shows no plateau to place sizes in ({e:#}): bandwidth and mlp take their own (--plateaus auto)"
        )),
    }
}

fn skipped(p: &Planned, why: &str) -> StageRecord {
    StageRecord {
        name: p.stage.name.into(),
        status: Status::Skipped,
        seconds: 0.0,
        estimated_seconds: p.estimate,
        file: None,
        why: Some(why.into()),
        command: Vec::new(),
        stderr_tail: Vec::new(),
    }
}

/// Runs one stage and says how it went.
fn run_stage(exe: &Path, p: &Planned, context: &Context, resuming: bool) -> Result<StageRecord> {
    let file = context.file(p.stage.name);
    // A sweep the earlier run left cut short goes on from its last point.
    let cut_sweep = resuming
        && p.stage.name == "sweep"
        && crate::experiments::sweep::SweepResult::load(&file)
            .is_ok_and(|r| !r.complete && !r.points.is_empty());
    let args: Vec<std::ffi::OsString> = if cut_sweep {
        vec![
            "sweep".into(),
            "--no-progress".into(),
            "--resume".into(),
            file.clone().into_os_string(),
        ]
    } else {
        (p.stage.args)(context)
    };
    let finished = child::run(exe, &args)?;
    let wrote = file.is_file() && finished.status != Status::Failed;
    let last = finished
        .stderr_tail
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .cloned()
        .unwrap_or_default();
    let (status, why) = match finished.status {
        Status::Done if wrote => (Status::Done, None),
        Status::Done => (
            Status::Failed,
            Some(format!("it ended without writing {}", file.display())),
        ),
        Status::Interrupted if wrote => (
            Status::Interrupted,
            Some(format!(
                "{}: stopped after its current point; its file holds what it measured",
                crate::cli::interrupt::cause()
            )),
        ),
        Status::Interrupted => (
            Status::Interrupted,
            Some(format!(
                "{} before it wrote a result",
                crate::cli::interrupt::cause()
            )),
        ),
        _ => (
            Status::Failed,
            Some(format!("{} ({})", last, finished.exit)),
        ),
    };
    Ok(StageRecord {
        name: p.stage.name.into(),
        status,
        seconds: finished.seconds,
        estimated_seconds: p.estimate,
        file: wrote.then(|| format!("{}.json", p.stage.name)),
        why,
        command: std::iter::once("memlat".to_string())
            .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect(),
        stderr_tail: if status == Status::Done {
            Vec::new()
        } else {
            finished.stderr_tail
        },
    })
}

/// `done in 6.1 s`, `failed after 2.0 s: error: ...`.
fn outcome(r: &StageRecord) -> String {
    let took = duration(r.seconds);
    match (r.status, &r.why) {
        (Status::Done, _) => format!("done in {took}"),
        (Status::Interrupted, why) => {
            format!("interrupted after {took}: {}", why.as_deref().unwrap_or(""))
        }
        (_, why) => format!("failed after {took}: {}", why.as_deref().unwrap_or("")),
    }
}

/// `0.04 s`, `4.7 s`, `42 s`, `3 min 05 s`.
fn duration(seconds: f64) -> String {
    match seconds {
        s if s < 1.0 => format!("{s:.2} s"),
        s if s < 10.0 => format!("{s:.1} s"),
        s if s < 120.0 => format!("{s:.0} s"),
        s => format!("{} min {:02} s", (s / 60.0) as u64, (s % 60.0) as u64),
    }
}
