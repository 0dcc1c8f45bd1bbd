//! `memlat sweep`: flags -> plan -> `sweep::run` -> summary and files.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::chain::Pattern;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::files::{SweepFiles, SweepObserver};
use crate::cli::interrupt::Interrupted;
use crate::cli::{Format, SweepArgs};
use crate::engine::Point;
use crate::error::{UsageError, usage};
use crate::experiments::plateaus;
use crate::experiments::sweep::{
    self, DEFAULT_REPEATS, DEFAULT_STRIDES, SeriesKey, SweepPlan, SweepResult,
};
use crate::limits::{self, Origin};
use crate::output::document::Document;
use crate::output::table::{Cell, Table};
use crate::output::{self, csv};
use crate::platform;
use crate::platform::caches;
use crate::platform::counters::parse_event_list;
use crate::platform::host::Host;
use crate::units::HumanBytes;

mod paths;

use paths::{check_named_files, files, files_dir, load_resume};

/// Runs `memlat sweep`.
pub fn run(args: &SweepArgs) -> Result<()> {
    if args.percentiles && args.measure.kernel == crate::kernels::KernelKind::Index {
        return usage(
            "--percentiles times loads one by one with the pointer or portable kernel: drop --kernel index",
        );
    }
    check_named_files(args)?;
    let output = Output::create(args.measure.output.as_deref())?;
    let resumed = args
        .resume
        .as_deref()
        .map(|path| load_resume(path, args))
        .transpose()?;
    // A resumed sweep goes on on the CPU its points were measured on.
    let mut measure = args.measure.clone();
    if let Some(r) = &resumed {
        match measure.cpu {
            Some(cpu) if cpu != r.config.cpu => {
                return usage(format!(
                    "--cpu {cpu} with --resume: the sweep was measured on CPU {}, and its points must share one; leave --cpu out",
                    r.config.cpu
                ));
            }
            _ => measure.cpu = Some(r.config.cpu),
        }
    }
    let mut prepared = prepare(&measure, Pattern::Stride, DEFAULT_REPEATS)?;
    let mut notes = std::mem::take(&mut prepared.notices);
    let mut plan = match resumed {
        Some(r) => SweepPlan::resume(prepared.template.clone(), r),
        None => new_plan(args, &prepared, &mut notes)?,
    };
    if args.no_refine {
        plan.config.refine = false;
    }
    let this_sweep = plan.resumed.as_ref().map_or("", |r| r.started.as_str());
    plan.bounds_history = plateaus::remembered_detections(&Host::this(), this_sweep);
    check_memory(&plan, args.resume.as_deref())?;
    let files = files(args)?;
    for note in &notes {
        notice(note);
    }
    announce(&plan, &files, prepared.engine.cpu());
    let fresh: Vec<PathBuf> = files
        .paths()
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_err())
        .map(Path::to_path_buf)
        .collect();
    let _locks = match files.create(&plan.start()) {
        Ok(locks) => locks,
        Err(e) => {
            // A full disk at the start: nothing is left for the retry to trip on.
            for path in &fresh {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
    };
    let result = {
        let mut observer = SweepObserver::new(&files, !args.no_progress);
        sweep::run(&mut prepared.engine, &plan, &mut observer)
    };
    let result = match result {
        Ok(result) => result,
        Err(e) => {
            // A start that failed before its first point leaves no file behind
            // (a 0-point file would refuse the retry without --force).
            if plan.resumed.is_none()
                && files
                    .json
                    .as_deref()
                    .and_then(|j| SweepResult::load(j).ok())
                    .is_none_or(|r| r.points.is_empty())
            {
                for path in &fresh {
                    let _ = std::fs::remove_file(path);
                }
            } else if let Some(json) = &files.json {
                // A write that failed mid-sweep (a full disk): the file holds
                // every point finished before it.
                let kept = SweepResult::load(json).map_or(0, |r| r.points.len());
                return Err(e.context(format!(
                    "{} keeps its {kept} finished points; free space (or fix the cause) and continue with --resume {}",
                    json.display(),
                    json.display()
                )));
            }
            return Err(e);
        }
    };
    files.draw(&result)?;
    if matches!(
        result.config.range_end_reason.as_str(),
        "flat-dram" | "memory-size" | "measured-memory-size"
    ) {
        crate::cli::plateaus::remember(&result);
    }
    if let Some(line) = still_rising(&result) {
        notice(&line);
    }
    super::run::report_cycle_source(&prepared.engine);
    summarise_warnings(&result);
    let content = match args.measure.format {
        Format::Text => summary(&result, &files)?.text(),
        Format::Markdown => summary(&result, &files)?.markdown(),
        Format::Json => output::json(&result)?,
        Format::Csv => csv::samples(&result.points),
    };
    output.write(&content)?;
    if crate::cli::interrupt::interrupted() {
        // Returned, not exited: the prefetcher guard and the files close first.
        return Err(Interrupted(format!(
            "memlat sweep: interrupted after {} of {} points; continue with --resume {}",
            result.points.len(),
            result.config.point_count(),
            files
                .json
                .as_ref()
                .map_or("FILE.json".into(), |p| p.display().to_string())
        ))
        .into());
    }
    Ok(())
}

/// A new sweep's plan from the flags.
fn new_plan(
    args: &SweepArgs,
    prepared: &crate::cli::common::Prepared,
    notes: &mut Vec<String>,
) -> Result<SweepPlan> {
    let series = series(args)?;
    let cpu = prepared.engine.cpu();
    let caches = caches::data_caches(cpu);
    let events = match &args.measure.events {
        Some(list) => parse_event_list(list)
            .map_err(|e| UsageError(e.to_string()))?
            .into_iter()
            .map(|e| e.name)
            .collect(),
        None => Vec::new(),
    };
    let range = range(args, notes)?;
    // Without --repeats, repeats go where they buy precision.
    let template = Point {
        until_precise: args.measure.repeats.is_none(),
        distribution: args
            .percentiles
            .then_some(crate::experiments::sweep::PERCENTILE_TIME),
        ..prepared.template.clone()
    };
    let mut plan = SweepPlan::new(template, cpu, range, series, events, caches);
    plan.config.events.sort();
    plan.config.refine = !args.no_refine;
    if plan.config.sizes.is_empty() {
        return usage(format!(
            "--from {} --to {}: no prime multiple of the {}-byte line lies between them; widen the range",
            plan.config.from, plan.config.to, plan.config.unit
        ));
    }
    Ok(plan)
}

/// The line saying what is about to be measured and where the files go.
fn announce(plan: &SweepPlan, files: &SweepFiles, cpu: usize) {
    let pending = plan.pending();
    let last = *plan.config.sizes.last().expect("sizes are not empty");
    eprintln!(
        "memlat sweep: {} sizes from {} to {}{} x {} = {} points{}, {} repeats of {} ms samples, CPU {cpu}{}",
        plan.config.sizes.len(),
        HumanBytes(plan.config.sizes[0]),
        HumanBytes(last),
        if plan.config.adaptive() {
            " (or fewer: it stops where the latency has levelled beyond the caches sysfs lists, or past memory's size)"
        } else {
            ""
        },
        plan.config
            .series
            .iter()
            .map(SeriesKey::label)
            .collect::<Vec<_>>()
            .join(", "),
        plan.config.point_count(),
        match plan.config.point_count() - pending.len() {
            0 => String::new(),
            done => format!(" ({done} already in --resume)"),
        },
        plan.template.repeats,
        plan.template.sample_time.as_millis(),
        match files_dir(files) {
            Some(dir) => format!("; results in {}", dir.display()),
            None => String::new(),
        }
    );
}

/// The lines to measure: --strides, and --pattern random/page-random.
fn series(args: &SweepArgs) -> Result<Vec<SeriesKey>> {
    let mut strides = args
        .strides
        .iter()
        .map(|&s| limits::stride(s, Origin::Flag("--strides")))
        .collect::<Result<Vec<u64>, _>>()
        .map_err(UsageError::from)?;
    let mut pattern = args.measure.pattern;
    // With no series named: stride 64 (what prefetchers make of a stream) and a
    // random chain (the latency, which detection reads). Stride 4096 is not a
    // default: inside a 2 MiB huge page the prefetchers follow it too.
    if strides.is_empty() && pattern.is_none() {
        strides = vec![DEFAULT_STRIDES[0]];
        pattern = Some(Pattern::Random);
    }
    if strides.is_empty() && pattern == Some(Pattern::Stride) {
        strides = DEFAULT_STRIDES.to_vec();
    }
    let mut keys: Vec<SeriesKey> = Vec::new();
    for stride in strides {
        let key = SeriesKey::stride(stride);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    if let Some(p @ (Pattern::Random | Pattern::PageRandom)) = pattern {
        keys.push(SeriesKey::pattern(p));
    }
    Ok(keys)
}

/// --from, --to (without it: until level beyond the caches, capped) and --ratio, checked
/// before any size is computed.
fn range(args: &SweepArgs, notes: &mut Vec<String>) -> Result<sweep::Range> {
    let ratio = limits::ratio(args.ratio, Origin::Flag("--ratio")).map_err(UsageError::from)?;
    let from = limits::size(args.from, Origin::Flag("--from")).map_err(UsageError::from)?;
    let (to, end) = match args.to {
        Some(to) => (
            limits::size(to, Origin::Flag("--to")).map_err(UsageError::from)?,
            sweep::RangeEnd::To,
        ),
        None => {
            let cap = sweep::default_cap(platform::mem_available_bytes());
            notes.push(format!(
                "without --to the sweep goes on until the latency has been level for {} sizes beyond the largest cache sysfs lists, or past memory's size ({}x that cache, or of the last level measured once as many levels have ended as sysfs lists; {} at least), at most to {}",
                sweep::FLAT_POINTS,
                crate::experiments::memory::FACTOR,
                HumanBytes(crate::experiments::memory::FLOOR),
                HumanBytes(cap)
            ));
            (cap, sweep::RangeEnd::FlatDram)
        }
    };
    if to < from {
        return usage(format!(
            "--to {to} is below --from {from}: the sweep goes from --from up to --to"
        ));
    }
    limits::sweep_steps(from, to, ratio, Origin::Flag("--ratio")).map_err(UsageError::from)?;
    Ok(sweep::Range {
        from,
        to,
        ratio,
        end,
    })
}

/// Refuses a sweep whose largest point would not fit in memory, naming --to.
pub(crate) fn check_memory(plan: &SweepPlan, resume: Option<&Path>) -> Result<()> {
    let Some(available) = platform::mem_available_bytes() else {
        return Ok(());
    };
    for spec in plan.pending() {
        let needed = crate::engine::memory_needed(spec.size);
        if needed > available {
            let (flag, fix) = match resume {
                Some(path) => (
                    format!("--resume {}", path.display()),
                    "the file asks for more than this machine has; resume it where it was measured, or start a new sweep",
                ),
                None => (
                    format!("--to {}", HumanBytes(plan.config.to)),
                    "choose a smaller --to",
                ),
            };
            return usage(format!(
                "{flag}: the {} point needs about {} but only {} is available (MemAvailable, or the cgroup's memory.max or memory.limit_in_bytes less its use); {fix}",
                HumanBytes(spec.size),
                HumanBytes(needed),
                HumanBytes(available)
            ));
        }
    }
    Ok(())
}

/// For a sweep that ended at memory's size before its latency levelled:
/// what the last sizes read and how to measure farther.
fn still_rising(result: &SweepResult) -> Option<String> {
    if !matches!(
        result.config.range_end_reason.as_str(),
        "memory-size" | "measured-memory-size"
    ) {
        return None;
    }
    let curve = result.curve();
    let tail = &curve[curve.len().saturating_sub(sweep::FLAT_POINTS)..];
    let (first, last) = (tail.first()?, tail.last()?);
    let lo = tail.iter().map(|p| p.ns).fold(f64::INFINITY, f64::min);
    let hi = tail.iter().map(|p| p.ns).fold(0.0, f64::max);
    // Ended by the measured levels, the curve may well have levelled.
    if hi <= lo * sweep::FLAT_BAND {
        return None;
    }
    let memory = sweep::ended_memory_size(result, platform::mem_available_bytes());
    Some(format!(
        "the sweep ended at memory's size ({}: {}) before the latency levelled: {:.0}..{:.0} ns from {} to {}, more than {:.0}% apart; a rise past memory's size is page walks (the page test tells) or a farther tier; --to {} measures farther",
        HumanBytes(memory.size),
        memory.basis,
        lo,
        hi,
        HumanBytes(first.size_bytes),
        HumanBytes(last.size_bytes),
        (sweep::FLAT_BAND - 1.0) * 100.0,
        HumanBytes(sweep::default_cap(platform::mem_available_bytes())),
    ))
}

/// One line on stderr for all points that carry warnings (each is in the JSON).
fn summarise_warnings(result: &SweepResult) {
    let warned: Vec<_> = result
        .points
        .iter()
        .filter(|m| !m.warnings.is_empty())
        .collect();
    if let Some(first) = warned.first() {
        warn(&format!(
            "{} of {} points have warnings, e.g. at {} {}: {} (each point's warnings are in the JSON)",
            warned.len(),
            result.points.len(),
            SeriesKey::of(first).label(),
            HumanBytes(first.size),
            first.warnings[0]
        ));
    }
}

/// The text summary: ns per load by size and series, then the detected levels.
fn summary(result: &SweepResult, files: &SweepFiles) -> Result<Document> {
    let series = result.series();
    let mut d = Document::new(format!(
        "memlat sweep: {} of {} points in {:.1} s ({} kernel, pages {}, CPU {}){}",
        result.points.len(),
        result.config.point_count(),
        result.total_seconds,
        result.config.kernel.name(),
        result.config.pages.name(),
        result.config.cpu,
        if result.complete { "" } else { ", INCOMPLETE" }
    ));
    let labels: Vec<String> = series.iter().map(SeriesKey::label).collect();
    let mut columns = vec!["<size".to_string()];
    columns.extend(labels);
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new(&names);
    for &size in &result.config.sizes {
        let row: Vec<Cell> = series
            .iter()
            .map(|&key| {
                let m = result
                    .points
                    .iter()
                    .find(|m| m.size == size && SeriesKey::of(m) == key);
                Cell::opt(m.map(|m| m.ns_per_load.median), 2)
            })
            .collect();
        if row.iter().all(|c| *c == Cell::Missing) {
            continue;
        }
        let mut cells = vec![HumanBytes(size).to_string().into()];
        cells.extend(row);
        t.row(cells);
    }
    t.note("ns per load, median of the repeats");
    if let Some(noise) = &result.noise {
        t.note(noise.describe());
    }
    if !result.config.remeasured_sizes.is_empty() {
        t.note(format!(
            "{} sizes that decide the levels were measured again with fresh chains (repeats pooled)",
            result.config.remeasured_sizes.len()
        ));
    }
    d.table(t);
    if let (Some(_), Some(key)) = (&result.detection, result.detection_series()) {
        d.heading(format!(
            "levels detected from the {} curve (sysfs shown beside, not used):",
            key.label()
        ));
        // The headline the report shows, from the JSON value of the result.
        let value = serde_json::to_value(result)?;
        for t in crate::output::present::headline(crate::readback::Kind::Sweep, &value)? {
            d.table(t);
        }
    }
    let paths: Vec<String> = files
        .paths()
        .iter()
        .map(|p| format!("  {}", p.display()))
        .collect();
    if !paths.is_empty() {
        d.heading("files:");
        d.lines(paths);
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::experiments::sweep::{DEFAULT_FROM, DEFAULT_RATIO};
    use clap::Parser;

    fn sweep_args(extra: &[&str]) -> SweepArgs {
        let cli = Cli::try_parse_from(["memlat", "sweep"].iter().chain(extra)).unwrap();
        match cli.command {
            Some(Command::Sweep(args)) => args,
            _ => panic!("expected sweep"),
        }
    }

    #[test]
    fn series_default_to_stride_64_and_random() {
        let keys = series(&sweep_args(&[])).unwrap();
        assert_eq!(
            keys,
            [SeriesKey::stride(64), SeriesKey::pattern(Pattern::Random)]
        );
        let keys = series(&sweep_args(&["--pattern", "random"])).unwrap();
        assert_eq!(keys, [SeriesKey::pattern(Pattern::Random)]);
        let keys = series(&sweep_args(&["--pattern", "random", "--strides", "64,100"])).unwrap();
        assert_eq!(
            keys,
            [
                SeriesKey::stride(64),
                SeriesKey::stride(104),
                SeriesKey::pattern(Pattern::Random)
            ]
        );
        assert!(series(&sweep_args(&["--strides", "0"])).is_err());
    }

    #[test]
    fn sweep_has_its_own_sample_time_default() {
        let args = sweep_args(&[]);
        assert_eq!(args.measure.sample_ms, sweep::DEFAULT_SAMPLE_MS);
        assert_eq!(args.from, DEFAULT_FROM);
        assert_eq!(args.ratio, DEFAULT_RATIO);
        let args = sweep_args(&["--sample-ms", "3"]);
        assert_eq!(args.measure.sample_ms, 3);
    }
}
