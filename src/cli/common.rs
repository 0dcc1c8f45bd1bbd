//! What several commands share: settling the flags every measuring command
//! has (`prepare`), and the one-line notices and warnings on stderr. Apart
//! from commands/mod.rs, so no import runs back through the dispatch.

use std::time::Duration;

use anyhow::Result;

use crate::chain::Pattern;
use crate::cli::MeasureArgs;
use crate::engine::{Engine, Point};
use crate::error::{UsageError, usage};
use crate::limits::{self, Origin};
use crate::platform;
use crate::platform::caches;
use crate::platform::counters::{EventSpec, parse_event_list};

/// Settles the flags every measuring command shares: validates them, pins and
/// opens the engine, and returns a point template to fill in.
pub(crate) struct Prepared {
    pub engine: Engine,
    pub template: Point,
    pub notices: Vec<String>,
    /// Prefetcher state (`--prefetchers`); restores any changed MSR when dropped.
    pub prefetch: crate::platform::prefetch::PrefetchGuard,
}

pub(crate) fn prepare(
    args: &MeasureArgs,
    default_pattern: Pattern,
    default_repeats: u32,
) -> Result<Prepared> {
    prepare_with_events(args, default_pattern, default_repeats, None)
}

/// [`prepare`], counting `default_events` when -e is not given; those that
/// this machine cannot count are summed up in one note rather than a warning each.
pub(crate) fn prepare_with_events(
    args: &MeasureArgs,
    default_pattern: Pattern,
    default_repeats: u32,
    default_events: Option<&str>,
) -> Result<Prepared> {
    let cpu = choose_cpu(args.cpu)?;
    if let Some(node) = args.node
        && !platform::node_exists(node)
    {
        return usage(format!(
            "--node {node}: no such NUMA node (see /sys/devices/system/node/)"
        ));
    }
    let defaulted = args.events.is_none() && default_events.is_some();
    let events: Vec<EventSpec> = match args.events.as_deref().or(default_events) {
        Some(list) => parse_event_list(list).map_err(|e| UsageError(e.to_string()))?,
        None => Vec::new(),
    };
    let template = Point {
        until_precise: false,
        distribution: None,
        size: 0,
        stride: 64,
        pattern: args.pattern.unwrap_or(default_pattern),
        offset: 0,
        pair: 0,
        skew: 0,
        chains: 1,
        kernel: args.kernel,
        line: match args.line {
            Some(line) => limits::line(line, Origin::Flag("--line"))?,
            None => caches::l1_line_bytes(cpu),
        },
        pages: args.pages,
        node: args.node,
        repeats: limits::repeats(
            args.repeats.unwrap_or(default_repeats),
            Origin::Flag("--repeats"),
        )?,
        seed: args.seed,
        accesses: None,
        sample_time: Duration::from_millis(limits::sample_ms(
            args.sample_ms,
            Origin::Flag("--sample-ms"),
        )?),
    };
    let ghz = args
        .ghz
        .map(|g| limits::ghz(g, Origin::Flag("--ghz")))
        .transpose()?;
    let mut notices = Vec::new();
    let prefetch =
        crate::platform::prefetch::PrefetchGuard::apply(args.prefetchers).map_err(UsageError)?;
    if args.prefetchers != crate::platform::prefetch::PrefetchMode::AsIs {
        notices.push(format!("prefetchers: {}", prefetch.status));
    }
    let mut builder = Engine::builder().cpu(cpu).events(&events).clock(args.clock);
    if let Some(ghz) = ghz {
        builder = builder.ghz(ghz);
    }
    let mut engine = builder.build()?;
    engine.set_prefetchers(&prefetch.status);
    notices.extend(event_notices(&engine, defaulted));
    Ok(Prepared {
        engine,
        template,
        notices,
        prefetch,
    })
}

/// `--cpu`, checked against the CPUs this process may run on; by default
/// the CPU it runs on now.
fn choose_cpu(asked: Option<usize>) -> Result<usize> {
    let allowed = platform::allowed_cpus();
    match asked {
        Some(cpu) if !allowed.contains(&cpu) => usage(format!(
            "--cpu {cpu}: no such CPU available to memlat (allowed: {})",
            cpu_list(&allowed)
        )),
        Some(cpu) => Ok(cpu),
        None => {
            Ok(platform::current_cpu().unwrap_or_else(|| allowed.first().copied().unwrap_or(0)))
        }
    }
}

/// A warning per event that cannot be counted; for events the user did not
/// ask for (`defaulted`, seed 004's defaults), one note for them all.
fn event_notices(engine: &Engine, defaulted: bool) -> Vec<String> {
    let warnings = engine.event_warnings();
    match warnings.first() {
        Some(first) if defaulted => vec![format!(
            "seed 004's default events {} are not counted here ({}{}); choose events with -e (`memlat events` lists what this machine counts)",
            warnings
                .iter()
                .map(|w| w.event.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            first.reason,
            if warnings.iter().any(|w| w.event == "cycles") {
                "; they print nan, except cycles, which print the estimate from the core clock (JSON: estimated_events)"
            } else {
                ""
            }
        )],
        _ => warnings.iter().map(|w| w.to_string()).collect(),
    }
}

pub(crate) fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Prints a warning line to stderr.
pub(crate) fn warn(message: &str) {
    eprintln!("warning: {message}");
}

/// Prints a notice line to stderr.
pub(crate) fn notice(message: &str) {
    eprintln!("note: {message}");
}
