//! `memlat watch`: flags -> plateaus -> [`Watch`] -> a line per interval,
//! the JSON-lines file, the summary and the timeline.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

use crate::chain::Pattern;
use crate::cli::common::{notice, prepare};
use crate::cli::files;
use crate::cli::interrupt::{self, Interrupted};
use crate::cli::plateaus::measured_levels;
use crate::cli::{Format, MeasureArgs, WatchArgs};
use crate::error::{UsageError, usage};
use crate::experiments::sweep::utc_timestamp;
use crate::experiments::watch::record::{self, Tagged};
use crate::experiments::watch::{Interval, Watch, WatchFile, WatchPlan};
use crate::output::watch as show;
use crate::platform;
use crate::units::HumanBytes;

mod duty;
mod lines;

use duty::{capped, duty_unmet, duty_unmet_overall, seconds};
use lines::{Lines, check_free_space};

/// Intervals kept for the live sparklines.
const HISTORY: usize = show::SPARK_WIDTH;

/// The longest `--interval`: a watch samples once an interval, and one
/// reading a day is a job for a timer (cron, systemd) running `memlat`.
const MAX_INTERVAL: Duration = Duration::from_secs(86_400);

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
    // --plateaus FILE is read: neither output may replace it.
    files::check_reads_output_and_plot(
        &[("--plateaus", args.plateaus.file())],
        args.output.as_deref(),
        args.plot.as_deref(),
    )?;
    // Held to the end: a second watch (or any memlat run) naming the same
    // -o is refused at once, rather than both saying "written to" while one
    // writes into a file the other replaced.
    let _lock = args
        .output
        .as_deref()
        .filter(|p| p.as_os_str() != "-")
        .map(|p| files::claim(p, "-o/--output", files::Existing::NeedsForce(args.force)))
        .transpose()?;
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
        if intervals.is_empty()
            && let Some(check) = &watch.header().settle_edge
            && check.agrees == Some(false)
        {
            notice(&check.note);
        }
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
        Some(path) if intervals.is_empty() => {
            notice(&format!(
                "--plot {}: not drawn, no interval was measured",
                path.display()
            ));
            None
        }
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
                    let why = format!("--plot {}: not drawn: {e:#}", path.display());
                    notice(&why);
                    Some(UsageError(why).into())
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

/// Refuses a plan whose cache sizes (the levels' middles and the edge
/// probes; memory, and the miss probe of its size, are capped by
/// themselves) map more than a quarter of the memory available: plateaus
/// no cache has, from a file edited or scaled.
fn check_mapped(plan: &WatchPlan, available: Option<u64>) -> Result<()> {
    let Some(available) = available else {
        return Ok(());
    };
    let miss = plan.miss_probe().map(|(m, _)| m.name);
    let caches: u64 = plan
        .probes()
        .iter()
        .filter(|p| p.name != "memory" && Some(&p.name) != miss.as_ref())
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
    let miss = plan.miss_probe().map_or(String::new(), |(m, region)| {
        format!(
            ", a miss read over {} at a time ({} {})",
            HumanBytes(region),
            m.name,
            HumanBytes(m.size)
        )
    });
    let edge = plan.edge.as_ref().map_or(String::new(), |e| {
        let sizes: Vec<String> = e.sizes.iter().map(|&s| HumanBytes(s).to_string()).collect();
        format!(
            "; {} edge probes {} (between {}){miss}",
            e.level,
            sizes.join(", "),
            e.between
        )
    });
    format!(
        "watching {}{edge}; every {}, measuring at most {} of it (--duty {})",
        levels.join(", "),
        seconds(plan.interval_s),
        seconds(plan.duty * plan.interval_s),
        plan.duty
    )
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

/// What `memlat compare --format json` prints for two watches: a compare
/// result (the envelope, `results`, `conditions`, `rows`) that every reader
/// reads back, with each one's summary.
#[derive(serde::Serialize)]
struct WatchCompare<'a> {
    /// The two results, the first the reference.
    results: [&'a str; 2],
    /// The conditions of each (host, kernel, version), differing ones first.
    conditions: Vec<crate::analysis::compare::Condition>,
    /// No latency rows: a watch's series are compared in `summaries`.
    rows: [(); 0],
    /// Each one's summary (median, p5, p95 and events per series).
    summaries: [&'a crate::experiments::watch::WatchSummary; 2],
    /// For a watch cut short (no summary line), that its summary is computed.
    notes: Vec<String>,
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
        serde::Deserialize::deserialize(&r.value).map_err(|e| {
            crate::error::UsageError(format!("{}: not a watch result: {e}", r.path.display()))
                .into()
        })
    };
    let (fa, fb) = (read(a)?, read(b)?);
    let (sa, sb) = (fa.summary(), fb.summary());
    let labels = [a.label.as_str(), b.label.as_str()];
    let mut table = show::compare_table(labels, &sa, &sb);
    let notes: Vec<String> = [(labels[0], &fa), (labels[1], &fb)]
        .iter()
        .filter_map(|(label, f)| f.cut_short().map(|n| format!("{label}: {n}")))
        .collect();
    for note in &notes {
        table.note(note.clone());
    }
    let content = match args.format {
        Format::Json => crate::output::result_json(
            "compare",
            &WatchCompare {
                results: labels,
                conditions: crate::analysis::compare::conditions(&[&a.value, &b.value]),
                rows: [],
                summaries: [&sa, &sb],
                notes,
            },
        )?,
        Format::Csv => table.csv(),
        Format::Text => table.text(),
        Format::Markdown => table.markdown(),
    };
    output.write(&content)
}
