//! `memlat loaded`: chase latency against the bandwidth of traffic threads
//! (see [`crate::experiments::loaded`]).

use anyhow::Result;

use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::interrupt::Interrupted;
use crate::cli::progress::until_ctrl_c;
use crate::cli::{Format, LoadedArgs};
use crate::error::{UsageError, usage};
use crate::experiments::loaded::{self, LoadedPlan, LoadedResult};
use crate::limits::{self, Origin};
use crate::output::document::Document;
use crate::output::present;
use crate::platform;
use crate::platform::topology::Topology;
use crate::readback::Kind;
use crate::units::HumanBytes;

/// Each traffic thread's buffer when nothing else sizes it (the memory
/// rule's floor, [`crate::experiments::memory::FLOOR`]).
pub const DEFAULT_TRAFFIC_SIZE: u64 = crate::experiments::memory::FLOOR;

/// Runs `memlat loaded`.
pub fn run(args: &LoadedArgs) -> Result<()> {
    if args.measure.pattern.is_some_and(|p| p != Pattern::Random) {
        return usage("--pattern: memlat loaded chases a random chain (prefetchers must not help)");
    }
    if args.delays.is_empty() {
        return usage("--delays: give at least one delay, e.g. 10000,1000,100,0");
    }
    crate::cli::files::check_reads_output_and_plot(
        &[("--plateaus", args.plateaus.file())],
        args.measure.output.as_deref(),
        args.plot.as_deref(),
    )?;
    let output = Output::create(args.measure.output.as_deref())?;
    // Before the chaser is pinned, while this thread may still run anywhere.
    let topology = Topology::read(&platform::allowed_cpus());
    let mut prepared = prepare(&args.measure, Pattern::Random, 3)?;
    for note in &prepared.notices {
        notice(note);
    }
    let chaser = prepared.engine.cpu();
    let threads = args
        .threads
        .unwrap_or(topology.cpus.len().saturating_sub(1));
    if threads == 0 {
        return usage(
            "--threads 0: no traffic thread, no load; give at least 1 (this process may use only the chaser's CPU: widen it with taskset)",
        );
    }
    let cpus = loaded::plan_cpus(&topology, chaser, threads).map_err(UsageError)?;
    let available = platform::mem_available_bytes();
    let memory_size = |prepared: &mut crate::cli::common::Prepared| -> Result<u64> {
        let measured = crate::cli::plateaus::measured_plateaus(
            &args.plateaus,
            &mut prepared.engine,
            &prepared.template,
        )?;
        let memory = measured.memory(available, prepared.template.line);
        notice(&format!(
            "memory: {} ({}), as every command's",
            HumanBytes(memory.size),
            memory.basis
        ));
        for note in &memory.notes {
            notice(note);
        }
        Ok(memory.size)
    };
    let chase_size = match args.size {
        Some(s) => limits::size(s, Origin::Flag("-n/--size")).map_err(UsageError::from)?,
        None => memory_size(&mut prepared)?,
    };
    // The traffic loads memory: each thread's buffer as large as the chase
    // (beyond the last level by the memory rule), a quarter of memory in all.
    let traffic_size = match args.traffic_size {
        Some(s) => limits::size(s, Origin::Flag("--traffic-size")).map_err(UsageError::from)?,
        None => {
            let wanted = if args.size.is_some() {
                DEFAULT_TRAFFIC_SIZE.max(chase_size)
            } else {
                chase_size
            };
            available.map_or(wanted, |a| wanted.min(a / 4 / threads as u64).max(16 << 20))
        }
    };
    if traffic_size < loaded::traffic::CHUNK as u64 {
        return usage("--traffic-size: give at least 4K per thread");
    }
    let total = chase_size.saturating_add(traffic_size.saturating_mul(threads as u64));
    crate::engine::ensure_memory(total, available).map_err(|e| {
        UsageError(format!(
            "the chase ({}) and {threads} x {} of traffic: {e}; give a smaller -n/--size, --traffic-size or --threads",
            HumanBytes(chase_size),
            HumanBytes(traffic_size)
        ))
    })?;
    let plan = LoadedPlan {
        chase: crate::engine::Point {
            size: chase_size,
            ..prepared.template.clone()
        },
        traffic: args.traffic,
        delays: args.delays.clone(),
        cpus,
        traffic_bytes: traffic_size,
    };
    eprintln!(
        "memlat loaded: chase {} on CPU {chaser}; {threads} {} thread(s) on CPU(s) {:?}, {} each",
        HumanBytes(chase_size),
        args.traffic.name(),
        plan.cpus.traffic,
        HumanBytes(traffic_size)
    );
    let result = until_ctrl_c(!args.no_progress, |observer| {
        loaded::run(&mut prepared.engine, &plan, observer)
    })?;
    report_cycle_source(&prepared.engine);
    if let Some(path) = &args.plot {
        crate::output::plot::loaded::plot(&result, path)?;
        notice(&format!("plot written to {}", path.display()));
    }
    // JSON is written from the result, text and markdown from its JSON value.
    let value = serde_json::to_value(&result)?;
    let content = match args.measure.format {
        Format::Json => crate::output::result_json("loaded", &result)?,
        Format::Csv => present::loaded_table(&result).csv(),
        Format::Text => document(&result, &value)?.text(),
        Format::Markdown => document(&result, &value)?.markdown(),
    };
    output.write(&content)?;
    if !result.complete {
        warn("interrupted: the points above were measured, the rest were not");
        return Err(Interrupted(format!(
            "memlat loaded: interrupted after {} of {} points",
            result.points.len(),
            plan.delays.len() + 1
        ))
        .into());
    }
    Ok(())
}

/// The headline (MLC's table), then the knee and the notes.
fn document(r: &LoadedResult, value: &serde_json::Value) -> Result<Document> {
    let mut d = Document::new(format!(
        "memlat loaded: chase latency ({} random chain, CPU {}) against the traffic threads' bandwidth (CPUs {:?}); delay = spin iterations after every 4 KiB",
        HumanBytes(r.chase_size_bytes),
        r.cpus.chaser,
        r.cpus.traffic
    ));
    for t in present::headline(Kind::Loaded, value)? {
        d.table(t);
    }
    let mut lines = vec![match r.knee {
        Some(k) => format!(
            "knee: latency reaches twice unloaded ({:.1} ns) at {:.0} MB/s",
            k.latency_ns,
            k.bandwidth_bytes_per_second / 1e6
        ),
        None => "knee: not reached (latency stayed below twice unloaded)".into(),
    }];
    lines.extend(r.notes.iter().map(|n| format!("note: {n}")));
    d.lines(lines);
    Ok(d)
}
