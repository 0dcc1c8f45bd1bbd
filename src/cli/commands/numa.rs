//! `memlat numa`: the node x node latency matrix (see [`crate::experiments::numa`]).

use anyhow::Result;

use crate::chain::Pattern;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::interrupt::Interrupted;
use crate::cli::progress::until_ctrl_c;
use crate::cli::{Format, NumaArgs};
use crate::engine::{Engine, Point};
use crate::error::{UsageError, usage};
use crate::experiments::numa::{self, NumaResult};
use crate::limits::{self, Origin};
use crate::output::document::Document;
use crate::output::plot::heatmap::{self, Heatmap};
use crate::output::present;
use crate::platform;
use crate::platform::caches;
use crate::platform::system::{NumaNode, numa_nodes};
use crate::readback::Kind;
use crate::units::HumanBytes;

/// Runs `memlat numa`.
pub fn run(args: &NumaArgs) -> Result<()> {
    if args.measure.cpu.is_some() || args.measure.node.is_some() {
        return usage(
            "--cpu/--node: memlat numa measures from a CPU of every node to every node's memory; leave them out",
        );
    }
    if args.measure.pattern.is_some_and(|p| p != Pattern::Random) {
        return usage("--pattern: memlat numa chases a random chain");
    }
    crate::cli::files::check_output_and_plot(args.measure.output.as_deref(), args.plot.as_deref())?;
    let output = Output::create(args.measure.output.as_deref())?;
    let allowed = platform::allowed_cpus();
    let mut nodes = numa_nodes();
    let mut notes = Vec::new();
    if nodes.is_empty() {
        notes.push("the kernel lists no NUMA nodes (/sys/devices/system/node): measured as one node, memory not bound".to_string());
        nodes.push(NumaNode {
            node: 0,
            cpus: allowed.clone(),
            memory_bytes: None,
        });
    }
    let mut plan = numa::plan(&nodes, &allowed);
    plan.bind = notes.is_empty();
    if plan.from.is_empty() {
        return usage("no NUMA node has a CPU this process may use: widen its CPUs (taskset)");
    }
    let prepared = prepare(&args.measure, Pattern::Random, 3)?;
    for note in &prepared.notices {
        notice(note);
    }
    let size = match args.size {
        Some(s) => limits::size(s, Origin::Flag("-n/--size")).map_err(UsageError::from)?,
        None => crate::experiments::quick::memory_size(&caches::data_caches(prepared.engine.cpu())),
    };
    crate::engine::ensure_memory(size, platform::mem_available_bytes()).map_err(|e| {
        UsageError(format!(
            "-n/--size {}: {e}; give a smaller size",
            HumanBytes(size)
        ))
    })?;
    let template = Point {
        size,
        ..prepared.template.clone()
    };
    eprintln!(
        "memlat numa: {} row(s) x {} column(s), a {} random chain each",
        plan.from.len(),
        plan.to.len(),
        HumanBytes(size)
    );
    let (ghz, clock) = (args.measure.ghz, args.measure.clock);
    let mut first = Some(prepared.engine);
    let mut engine_for = |cpu: usize| -> Result<Engine> {
        if let Some(e) = first.take_if(|e| e.cpu() == cpu) {
            return Ok(e);
        }
        let mut builder = Engine::builder().cpu(cpu).clock(clock);
        if let Some(g) = ghz {
            builder = builder.ghz(g);
        }
        Ok(builder.build()?)
    };
    let mut result = until_ctrl_c(!args.no_progress, |observer| {
        numa::run(&plan, &template, &mut engine_for, observer)
    })?;
    result.notes.extend(notes);
    if let Some(path) = &args.plot {
        heatmap::draw(path, &heatmap_of(&result))?;
        notice(&format!("heatmap written to {}", path.display()));
    }
    let complete = result.matrix_ns.iter().flatten().all(Option::is_some);
    // JSON is written from the result, text and markdown from its JSON value.
    let value = serde_json::to_value(&result)?;
    let content = match args.measure.format {
        Format::Json => crate::output::result_json("numa", &result)?,
        Format::Csv => present::headline(Kind::Numa, &value)?.remove(0).csv(),
        Format::Text => document(&result, &value)?.text(),
        Format::Markdown => document(&result, &value)?.markdown(),
    };
    output.write(&content)?;
    if !complete {
        warn("interrupted: the cells above were measured, the rest are null");
        return Err(Interrupted("memlat numa: interrupted".into()).into());
    }
    Ok(())
}

fn heatmap_of(r: &NumaResult) -> Heatmap {
    Heatmap {
        title: "NUMA: idle memory latency from each node's CPU to each node's memory, ns".into(),
        labels: r.nodes.iter().map(|n| format!("node {n}")).collect(),
        row_name: "from node (CPU)".into(),
        column_name: "memory on node".into(),
        values: r.matrix_ns.clone(),
        footnote: format!(
            "memlat numa: {} random chain, median of the repeats",
            HumanBytes(r.size_bytes)
        ),
    }
}

fn document(r: &NumaResult, value: &serde_json::Value) -> Result<Document> {
    let mut d = Document::new(format!(
        "memlat numa: idle latency, ns per load ({} random chain, memory bound to the column's node)",
        HumanBytes(r.size_bytes)
    ));
    for t in present::headline(Kind::Numa, value)? {
        d.table(t);
    }
    d.lines(r.notes.iter().map(|n| format!("note: {n}")).collect());
    Ok(d)
}
