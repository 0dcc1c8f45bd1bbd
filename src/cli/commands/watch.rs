//! `memlat watch`: flags -> plateaus -> [`Watch`] -> a line per interval,
//! the JSON-lines file, the summary and the timeline.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result};

use crate::chain::Pattern;
use crate::cli::common::{notice, prepare};
use crate::cli::files;
use crate::cli::interrupt::{self, Interrupted};
use crate::cli::plateaus::measured_levels;
use crate::cli::{Format, MeasureArgs, WatchArgs};
use crate::error::usage;
use crate::experiments::watch::record::Tagged;
use crate::experiments::watch::{Interval, Watch, WatchFile, WatchPlan};
use crate::output::watch as show;
use crate::platform;
use crate::units::HumanBytes;

/// Intervals kept for the live sparklines.
const HISTORY: usize = show::SPARK_WIDTH;

/// Runs `memlat watch`.
pub fn run(args: &WatchArgs) -> Result<()> {
    if !crate::experiments::watch::plan::DUTY_RANGE.contains(&args.duty) {
        return usage(format!(
            "--duty {}: give a fraction of each interval from 0.01 to 1 (0.1 measures 10% of the time)",
            args.duty
        ));
    }
    if args.interval < crate::experiments::watch::plan::MIN_INTERVAL {
        return usage("--interval: at least 100ms (each interval samples every level once)");
    }
    files::check_output_and_plot(args.output.as_deref(), args.plot.as_deref())?;
    let prepared = prepare(&measure_args(args), Pattern::Random, 1)?;
    for n in &prepared.notices {
        notice(n);
    }
    let mut engine = prepared.engine;
    let _guard = interrupt::Guard::install();
    let levels = measured_levels(&args.plateaus, &mut engine, &prepared.template)?;
    let plan = WatchPlan::new(
        &levels,
        prepared.template.line,
        platform::mem_available_bytes(),
        args.interval,
        args.duration,
        args.duty,
    );
    notice(&describe(&plan));
    let mut watch =
        Watch::new(engine, plan, levels, &prepared.template)?.stop_when(interrupt::interrupted);
    let live = !args.plain && std::io::stdout().is_terminal();
    let mut file: Option<File> = None;
    let mut intervals: Vec<Interval> = Vec::new();
    while let Some(interval) = watch.next() {
        let interval = interval?;
        if let Some(path) = &args.output {
            if file.is_none() {
                file = Some(open_lines(path, watch.header())?);
            }
            if let Some(f) = &mut file {
                append(
                    f,
                    path,
                    &Tagged {
                        record: "interval",
                        inner: &interval,
                    },
                )?;
            }
        }
        intervals.push(interval);
        let recent = &intervals[intervals.len().saturating_sub(HISTORY)..];
        let line = show::live_line(watch.header(), recent, live);
        let mut out = std::io::stdout().lock();
        if live {
            let _ = write!(out, "\r\x1b[K{}", fit(&line, terminal_width()));
        } else {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
    if live {
        println!();
    }
    let interrupted = interrupt::interrupted();
    let summary = watch.summarise(&intervals, cpu_seconds(), interrupted);
    if let (Some(path), Some(f)) = (&args.output, &mut file) {
        append(
            f,
            path,
            &Tagged {
                record: "summary",
                inner: &summary,
            },
        )?;
        notice(&format!("written to {}", path.display()));
    }
    print!("{}", show::summary_table(&summary).text());
    if let Some(path) = &args.plot {
        let read = WatchFile {
            header: watch.header().clone(),
            intervals,
            summary: Some(summary.clone()),
        };
        crate::output::plot::watch::plot(&read, &summary, path)?;
        notice(&format!("plot written to {}", path.display()));
    }
    if interrupted {
        return Err(Interrupted(
            "memlat watch: interrupted; the summary above covers every interval measured".into(),
        )
        .into());
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

/// Creates the JSON-lines file holding its first line (the envelope and
/// header), replacing any file there atomically, and opens it to append.
fn open_lines(path: &Path, header: &crate::experiments::watch::WatchHeader) -> Result<File> {
    let line = crate::output::result_json_line(
        "watch",
        &Tagged {
            record: "header",
            inner: header,
        },
    )?;
    files::replace(path, &line)?;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("-o {}: reopening it to append", path.display()))
}

/// Appends one record as one line, written whole by one call.
fn append<T: serde::Serialize>(file: &mut File, path: &Path, record: &T) -> Result<()> {
    let line = serde_json::to_string(record)? + "\n";
    file.write_all(line.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
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
