//! `memlat watch`: flags -> plateaus -> [`Watch`] -> a line per interval,
//! the JSON-lines file, the summary and the timeline.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};

use crate::chain::Pattern;
use crate::cli::common::{notice, prepare};
use crate::cli::files;
use crate::cli::interrupt::{self, Interrupted};
use crate::cli::plateaus::measured_levels;
use crate::cli::{Format, MeasureArgs, WatchArgs};
use crate::error::{UsageError, usage};
use crate::experiments::sweep::utc_timestamp;
use crate::experiments::watch::record::{self, Tagged};
use crate::experiments::watch::{Interval, Watch, WatchFile, WatchHeader, WatchPlan};
use crate::output::watch as show;
use crate::platform;
use crate::units::HumanBytes;

/// Intervals kept for the live sparklines.
const HISTORY: usize = show::SPARK_WIDTH;

/// The longest `--interval`: a watch samples once an interval, and one
/// reading a day is a job for a timer (cron, systemd) running `memlat`.
const MAX_INTERVAL: Duration = Duration::from_secs(86_400);

/// Intervals measured before the duty cycle is judged: the run lengths
/// are set on the settle pass and shortened over the first intervals.
const DUTY_JUDGED_AFTER: usize = 5;

/// Runs `memlat watch`.
pub fn run(args: &WatchArgs) -> Result<()> {
    let began = Instant::now();
    if !crate::experiments::watch::plan::DUTY_RANGE.contains(&args.duty) {
        return usage(format!(
            "--duty {}: give a fraction of each interval from 0.01 to 1 (0.1 measures 10% of the time)",
            args.duty
        ));
    }
    if args.interval < crate::experiments::watch::plan::MIN_INTERVAL {
        return usage("--interval: at least 100ms (each interval samples every level once)");
    }
    if args.interval > MAX_INTERVAL {
        return usage(format!(
            "--interval {}: at most 24h (one reading a day is a job for a timer such as cron running `memlat`)",
            seconds(args.interval.as_secs_f64())
        ));
    }
    files::check_output_and_plot(args.output.as_deref(), args.plot.as_deref())?;
    if let Some(path) = &args.output {
        check_free_space(path)?;
    }
    let prepared = prepare(&measure_args(args), Pattern::Random, 1)?;
    for n in &prepared.notices {
        notice(n);
    }
    let mut engine = prepared.engine;
    let _guard = interrupt::Guard::install();
    // SIGTERM (a shutdown, a service stopped, `timeout`) ends the watch as
    // Ctrl-C does: the summary, the file's last line and the plot are written.
    interrupt::also_on_sigterm();
    let levels = measured_levels(&args.plateaus, &mut engine, &prepared.template)?;
    let plan = WatchPlan::new(
        &levels,
        prepared.template.line,
        platform::mem_available_bytes(),
        args.interval,
        args.duration,
        args.duty,
    );
    check_mapped(&plan, platform::mem_available_bytes())?;
    notice(&describe(&plan));
    let mut watch =
        Watch::new(engine, plan, levels, &prepared.template)?.stop_when(interrupt::interrupted);
    if let Some(note) = capped(&watch) {
        notice(&note);
    }
    // The file and its first line now, before any interval: a disk that
    // cannot take the header is found before the watch begins.
    let mut file = match &args.output {
        Some(path) => {
            let mut header = watch.header().clone();
            header.started = utc_timestamp(SystemTime::now());
            Some(Lines::create(path, &header)?)
        }
        None => None,
    };
    let live = !args.plain && std::io::stdout().is_terminal();
    let mut intervals: Vec<Interval> = Vec::new();
    let mut measuring: Option<anyhow::Error> = None;
    let mut stdout_failed: Option<std::io::Error> = None;
    let mut duty_said = false;
    while let Some(interval) = watch.next() {
        let interval = match interval {
            Ok(interval) => interval,
            Err(e) => {
                measuring = Some(e);
                break;
            }
        };
        let file_ok = file.as_mut().is_none_or(|f| {
            f.append(&Tagged {
                record: "interval",
                inner: &interval,
            })
        });
        intervals.push(interval);
        if !file_ok {
            break;
        }
        let recent = &intervals[intervals.len().saturating_sub(HISTORY)..];
        let line = show::live_line(watch.header(), recent, live);
        let mut out = std::io::stdout().lock();
        let written = if live {
            write!(out, "\r\x1b[K{}", fit(&line, terminal_width()))
        } else {
            writeln!(out, "{line}")
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            stdout_failed = Some(e);
            break;
        }
        drop(out);
        if !duty_said && let Some(note) = duty_unmet(watch.plan(), &intervals) {
            if live {
                eprintln!();
            }
            notice(&note);
            duty_said = true;
        }
    }
    if live && stdout_failed.is_none() {
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out).and_then(|()| out.flush()) {
            stdout_failed = Some(e);
        }
    }
    let file_failed = file.as_ref().and_then(|f| f.failed.clone());
    let stopped = interrupt::interrupted()
        || measuring.is_some()
        || stdout_failed.is_some()
        || file_failed.is_some();
    // A watch that ran its course covered its whole intervals (its last
    // one ends an interval after it began, not when its samples did).
    let elapsed = watch.elapsed_s();
    let wall = if stopped {
        elapsed
    } else {
        elapsed.max(intervals.len() as f64 * watch.plan().interval_s)
    };
    let mut summary = record::summarise(watch.header(), &intervals, wall, cpu_seconds(), stopped);
    summary.process_wall_s = Some(began.elapsed().as_secs_f64());
    if let Some(f) = &mut file {
        f.append(&Tagged {
            record: "summary",
            inner: &summary,
        });
    }
    // The summary table to standard output, or to stderr where it cannot go.
    let table = show::summary_table(&summary).text();
    if stdout_failed.is_none() {
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(table.as_bytes()).and_then(|()| out.flush()) {
            stdout_failed = Some(e);
        }
    }
    if let Some(e) = &stdout_failed {
        let _ = writeln!(
            std::io::stderr(),
            "memlat: standard output failed ({e}); the summary:\n{table}"
        );
    }
    if !duty_said && let Some(note) = duty_unmet_overall(watch.plan(), &summary) {
        notice(&note);
    }
    let plotted = match &args.plot {
        Some(path) => {
            let read = WatchFile {
                header: watch.header().clone(),
                intervals,
                summary: Some(summary.clone()),
            };
            match crate::output::plot::watch::plot(&read, &summary, path) {
                Ok(()) => {
                    notice(&format!("plot written to {}", path.display()));
                    None
                }
                Err(e) => {
                    Some(UsageError(format!("--plot {}: not drawn: {e:#}", path.display())).into())
                }
            }
        }
        None => None,
    };
    // What the file holds, said whatever ended the watch.
    if let Some(f) = &file {
        match &f.failed {
            None => notice(&format!("written to {}", f.path.display())),
            Some(why) => notice(&format!(
                "{} holds its header and {} whole interval(s) of {} measured, and no summary: writing it failed ({why}); `memlat report {}` reads them and computes the summary",
                f.path.display(),
                f.intervals,
                summary.intervals,
                f.path.display()
            )),
        }
    }
    if let Some(e) = measuring {
        return Err(e);
    }
    if let (Some(f), Some(why)) = (&file, &file_failed) {
        return usage(format!(
            "-o {}: writing it failed after {} whole interval(s) ({why}); the watch ended there, its summary above; free space on its disk or name a file elsewhere",
            f.path.display(),
            f.intervals
        ));
    }
    if let Some(e) = stdout_failed {
        return usage(format!(
            "standard output is closed or full ({e}): the watch ended after {} interval(s), its summary on stderr{}; keep the intervals with -o FILE, or redirect standard output",
            summary.intervals,
            file.as_ref()
                .map_or(String::new(), |f| format!(" and in {}", f.path.display()))
        ));
    }
    if let Some(e) = plotted {
        return Err(e);
    }
    if interrupt::interrupted() {
        let signal = if interrupt::terminated() {
            "terminated (SIGTERM)"
        } else {
            "interrupted"
        };
        return Err(Interrupted(format!(
            "memlat watch: {signal}; the summary above covers every interval measured"
        ))
        .into());
    }
    Ok(())
}

/// A duration as `--interval` takes it (`1h30m`, `90s`, `500ms`).
fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0}ms", s * 1e3)
    } else if s < 60.0 || s.fract() != 0.0 {
        format!("{s}s")
    } else if s < 3600.0 {
        format!("{}m{}", (s / 60.0).floor(), tail(s % 60.0, "s"))
    } else {
        let m = (s % 3600.0) / 60.0;
        format!("{}h{}", (s / 3600.0).floor(), tail(m.floor(), "m"))
    }
}

fn tail(v: f64, unit: &str) -> String {
    if v > 0.0 {
        format!("{v}{unit}")
    } else {
        String::new()
    }
}

/// Refuses an `-o` whose disk has less than a few intervals' room left,
/// before anything is measured.
fn check_free_space(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(c) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()))
    else {
        return Ok(());
    };
    // SAFETY: statvfs fills the struct it is given; all-zero is a valid one.
    let stat = unsafe {
        let mut stat: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c.as_ptr(), &mut stat) == 0).then_some(stat)
    };
    let Some(stat) = stat else {
        return Ok(());
    };
    let free = (stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64);
    if free < 64 << 10 {
        return usage(format!(
            "-o {}: its disk has {} free; a watch writes about a kilobyte an interval: free space or name a file elsewhere",
            path.display(),
            HumanBytes(free)
        ));
    }
    Ok(())
}

/// Refuses a plan whose cache sizes (the levels' middles and the edge
/// probes; memory is capped to a quarter by itself) map more than a quarter
/// of the memory available: plateaus no cache has, from a file edited or
/// scaled.
fn check_mapped(plan: &WatchPlan, available: Option<u64>) -> Result<()> {
    let Some(available) = available else {
        return Ok(());
    };
    let caches: u64 = plan
        .probes()
        .iter()
        .filter(|p| p.name != "memory")
        .map(|p| p.size)
        .sum();
    if caches > available / 4 {
        return usage(format!(
            "--plateaus: the cache sizes placed in these plateaus map {}, more than a quarter of the {} of memory available: no cache is that large; give --plateaus probe, or a sweep of this machine",
            HumanBytes(caches),
            HumanBytes(available)
        ));
    }
    Ok(())
}

/// A note when the runs are capped below what the duty allows (a long
/// interval): each interval then measures far less than its budget.
fn capped(watch: &Watch) -> Option<String> {
    let cap = crate::experiments::watch::MAX_SAMPLE_TIME;
    (watch.sample_time() >= cap).then(|| {
        let plan = watch.plan();
        format!(
            "each timed run is capped at {} ms, so an interval measures for well under the {} its --duty {} allows",
            cap.as_millis(),
            seconds(plan.duty * plan.interval_s),
            plan.duty
        )
    })
}

/// What an interval takes of the CPU, ms: its measuring thread's CPU time,
/// else its wall time.
fn cost_ms(i: &Interval) -> f64 {
    i.cpu_ms.unwrap_or(i.spent_ms)
}

/// The note when the last intervals each took more than the duty allows,
/// once the runs have been shortened as far as they go: what to give
/// instead, `--interval` and `--duty` alike.
fn duty_unmet(plan: &WatchPlan, intervals: &[Interval]) -> Option<String> {
    if intervals.len() < DUTY_JUDGED_AFTER {
        return None;
    }
    let mut recent: Vec<f64> = intervals[intervals.len() - 3..]
        .iter()
        .map(cost_ms)
        .collect();
    recent.sort_by(f64::total_cmp);
    unmet_note(plan, recent[1])
}

/// [`duty_unmet`] over the whole watch, for one too short to be judged
/// as it ran.
fn duty_unmet_overall(plan: &WatchPlan, summary: &record::WatchSummary) -> Option<String> {
    let spent = summary.measuring_cpu_s.unwrap_or(summary.measuring_s);
    (summary.intervals >= 2).then_some(())?;
    let per_interval = spent / summary.intervals as f64 * 1e3;
    unmet_note(plan, per_interval)
}

fn unmet_note(plan: &WatchPlan, cost_ms: f64) -> Option<String> {
    let budget_ms = plan.duty * plan.interval_s * 1e3;
    if cost_ms <= budget_ms * 1.1 {
        return None;
    }
    let share = cost_ms / (plan.interval_s * 1e3);
    // The shortest interval that keeps the duty, in tenths of a second up.
    let interval = (cost_ms / plan.duty / 100.0).ceil() / 10.0;
    let duty = (share * 100.0).ceil() / 100.0;
    let instead = if duty <= 1.0 {
        format!(
            "give --interval {} or longer, or --duty {duty:.2}",
            seconds(interval)
        )
    } else {
        format!("give --interval {} or longer", seconds(interval))
    };
    Some(format!(
        "--duty {} cannot be kept at --interval {}: each interval's samples take about {cost_ms:.0} ms of CPU however short their runs, {:.0}% of it, not {:.0}%; {instead}",
        plan.duty,
        seconds(plan.interval_s),
        share * 100.0,
        plan.duty * 100.0
    ))
}

/// The shared measuring flags watch takes; the rest at their defaults.
fn measure_args(args: &WatchArgs) -> MeasureArgs {
    MeasureArgs {
        pattern: Some(Pattern::Random),
        kernel: args.kernel,
        line: None,
        pages: args.pages,
        cpu: args.cpu,
        node: None,
        repeats: None,
        seed: args.seed,
        prefetchers: crate::platform::prefetch::PrefetchMode::AsIs,
        events: None,
        ghz: None,
        clock: crate::platform::clock::ClockRequest::Auto,
        sample_ms: 50,
        format: Format::Text,
        output: None,
    }
}

/// One line: what each interval measures and what it may spend.
fn describe(plan: &WatchPlan) -> String {
    let levels: Vec<String> = plan
        .levels
        .iter()
        .map(|l| format!("{} {}", l.name, HumanBytes(l.size)))
        .collect();
    let edge = plan.edge.as_ref().map_or(String::new(), |e| {
        let sizes: Vec<String> = e.sizes.iter().map(|&s| HumanBytes(s).to_string()).collect();
        format!(
            "; {} edge probes {} (between {})",
            e.level,
            sizes.join(", "),
            e.between
        )
    });
    format!(
        "watching {}{edge}; every {} s, measuring at most {:.0} ms of it (--duty {})",
        levels.join(", "),
        plan.interval_s,
        plan.duty * plan.interval_s * 1e3,
        plan.duty
    )
}

/// The JSON-lines file being written: its whole lines, and why writing
/// stopped (a full disk) if it did.
struct Lines {
    file: File,
    path: PathBuf,
    /// Bytes of whole lines written.
    len: u64,
    /// Interval lines written whole.
    intervals: usize,
    /// Why a write failed; nothing is written after it.
    failed: Option<String>,
}

impl Lines {
    /// Creates the file holding its first line (the envelope and header),
    /// replacing any file there atomically, and opens it to append.
    fn create(path: &Path, header: &WatchHeader) -> Result<Lines> {
        let line = crate::output::result_json_line(
            "watch",
            &Tagged {
                record: "header",
                inner: header,
            },
        )?;
        files::replace(path, &line).map_err(|e| {
            UsageError(format!(
                "-o {}: cannot write its first line ({e:#}); free space on its disk or name a file elsewhere",
                path.display()
            ))
        })?;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .with_context(|| format!("-o {}: reopening it to append", path.display()))?;
        Ok(Lines {
            file,
            path: path.to_path_buf(),
            len: line.len() as u64,
            intervals: 0,
            failed: None,
        })
    }

    /// Appends one record as one line, written whole by one call; `false`
    /// once a write has failed. A line written in part is cut off, so the
    /// file ends with whole lines a reader can use.
    fn append<T: serde::Serialize>(&mut self, record: &Tagged<'_, T>) -> bool {
        if self.failed.is_some() {
            return false;
        }
        let written = serde_json::to_string(record)
            .map_err(std::io::Error::other)
            .and_then(|line| {
                let line = line + "\n";
                self.file.write_all(line.as_bytes())?;
                Ok(line.len() as u64)
            });
        match written {
            Ok(n) => {
                self.len += n;
                if record.record == "interval" {
                    self.intervals += 1;
                }
                true
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                self.failed = Some(e.to_string());
                false
            }
        }
    }
}

/// The process's user and system CPU time so far, seconds.
fn cpu_seconds() -> Option<f64> {
    // SAFETY: getrusage fills the struct it is given; all-zero is a valid rusage.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage)
    }?;
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(usage.ru_utime) + secs(usage.ru_stime))
}

/// The terminal's width in columns (80 when it cannot be read).
fn terminal_width() -> usize {
    // SAFETY: TIOCGWINSZ fills a winsize; all-zero is a valid one.
    let ws = unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        (libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) == 0).then_some(ws)
    };
    // A terminal that reports no size (0 columns) is taken as 80 wide.
    ws.filter(|w| w.ws_col > 0)
        .map_or(80, |w| usize::from(w.ws_col))
        .max(20)
}

/// `line` cut to `width - 1` characters, so an in-place line never wraps.
fn fit(line: &str, width: usize) -> String {
    line.chars().take(width - 1).collect()
}

/// What `memlat compare --format json` prints for two watches.
#[derive(serde::Serialize)]
struct WatchCompare<'a> {
    /// The two results, the first the reference.
    results: [&'a str; 2],
    /// Each one's summary (median, p5, p95 and events per series).
    summaries: [&'a crate::experiments::watch::WatchSummary; 2],
}

/// `memlat compare` of two watch results: per series, each one's median
/// and p5-p95, the ratio of medians and of spreads.
pub(crate) fn compare(
    args: &crate::cli::CompareArgs,
    results: &[crate::cli::inputs::Loaded],
    output: files::Output,
) -> Result<()> {
    let [a, b] = results else {
        return usage(format!(
            "give two watch results to compare (got {})",
            results.len()
        ));
    };
    if args.plot.is_some() {
        return usage(
            "--plot: not drawn for watch results; `memlat report` draws each one's timeline",
        );
    }
    let read = |r: &crate::cli::inputs::Loaded| -> Result<WatchFile> {
        serde_json::from_value(r.value.clone()).map_err(|e| {
            crate::error::UsageError(format!("{}: not a watch result: {e}", r.path.display()))
                .into()
        })
    };
    let (sa, sb) = (read(a)?.summary(), read(b)?.summary());
    let labels = [a.label.as_str(), b.label.as_str()];
    let table = show::compare_table(labels, &sa, &sb);
    let content = match args.format {
        Format::Json => crate::output::json(&WatchCompare {
            results: labels,
            summaries: [&sa, &sb],
        })?,
        Format::Csv => table.csv(),
        Format::Text => table.text(),
        Format::Markdown => table.markdown(),
    };
    output.write(&content)
}
