//! `memlat linesize`: loads 8..256 bytes apart beyond L1, in a page-random
//! order (prefetchers cannot follow) and as seed 004's stride chain (they
//! can); the line size is where the latency stops growing (see [`crate::analysis::linesize`]).

use anyhow::Result;
use serde::Serialize;

use super::{notice, prepare, warn};
use crate::analysis::linesize::{self, LineEstimate, PairPoint, PairReading, StridePoint};
use crate::analysis::readings::Agreement;
use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::files::Output;
use crate::cli::{Format, LinesizeArgs};
use crate::error::usage;
use crate::experiments::linesize::{self as experiment, Curves};
use crate::output;
use crate::output::document::Document;
use crate::output::table::{Cell, Table};
use crate::platform::caches::Machine;
use crate::units::HumanBytes;

/// One pass's reading.
#[derive(Serialize, Clone, PartialEq)]
struct PassReading {
    /// The line this pass read (dependent pairs, else page-random spacing).
    line_bytes: Option<u64>,
    /// The unit a miss brought in, by this pass.
    fetch_bytes: Option<u64>,
    /// This pass's lone load, ns.
    lone_ns: f64,
    /// This pass's dependent pairs.
    pairs: Vec<PairPoint>,
}

/// What `memlat linesize --format json` prints.
#[derive(Serialize)]
struct LinesizeOutput<'a> {
    /// The line: the smallest distance at which a dependent second load no
    /// longer hits the first one's line (else the page-random estimate), when
    /// every pass read the same; null when they disagree or show none.
    line_bytes: Option<u64>,
    /// The unit a miss brings in: where the page-random spacing curve stops
    /// growing, when beyond the line (128 with an adjacent-line prefetch of
    /// 64-byte lines), else the line; null unless every pass agrees.
    fetch_bytes: Option<u64>,
    /// Each independent pass's reading (fresh chains each).
    readings: &'a [PassReading],
    /// Whether every pass read the same line.
    agree: bool,
    /// Whether every pass read the same fetch unit.
    fetch_agree: bool,
    /// The dependent pairs: distance, mean and second-load latency.
    pairs: &'a [PairPoint],
    /// A lone load at a random slot, the pairs' reference, ns.
    lone_ns: f64,
    /// The pairs' reading, with its notes.
    pair_reading: &'a PairReading,
    /// The line size sysfs or the profile claims.
    claimed_line_bytes: u64,
    /// Buffer size measured, bytes.
    size: u64,
    /// Latency per spacing, page-random order.
    points: &'a [StridePoint],
    /// The estimate from `points`, with its notes.
    estimate: &'a LineEstimate,
    /// Latency per stride, seed 004's stride chain (prefetchers follow it).
    stride_points: &'a [StridePoint],
    /// Where the stride chain's latency stops growing (often the prefetcher's reach).
    stride_estimate: &'a LineEstimate,
    /// Prefetcher state during the run.
    prefetchers: &'a str,
}

/// Runs `memlat linesize`.
pub fn run(args: &LinesizeArgs) -> Result<()> {
    if args.measure.pattern.is_some() {
        return usage("--pattern: memlat linesize measures both page-random and stride orders");
    }
    if args.measure.line.is_some() {
        return usage("--line: memlat linesize sets the node spacing itself (--strides)");
    }
    if let Some(bad) = args
        .strides
        .iter()
        .find(|&&s| s == 0 || !s.is_multiple_of(8) || s > 4096)
    {
        return usage(format!(
            "--strides {bad}: spacings must be multiples of 8 bytes, at most 4096"
        ));
    }
    if args.strides.len() < 3 {
        return usage("--strides: give at least three spacings, e.g. 8,16,32,64,128,256");
    }
    crate::cli::files::check_reads_output_and_plot(
        &[("--machine", args.machine.as_deref())],
        args.measure.output.as_deref(),
        None,
    )?;
    let output = Output::create(args.measure.output.as_deref())?;
    let profile = args.machine.as_deref().map(Machine::load).transpose()?;
    let mut prepared = prepare(&args.measure, Pattern::PageRandom, 3)?;
    for note in &prepared.notices {
        notice(note);
    }
    let machine = profile.unwrap_or_else(|| Machine::from_sysfs(prepared.engine.cpu()));
    let size = match args.size {
        Some(s) if s < 8192 => {
            return usage(format!("-n/--size {s}: give at least 8K, beyond the L1"));
        }
        Some(s) => s / 4096 * 4096,
        None => experiment::default_size(&machine),
    };
    if let Some(l1) = machine.caches.first()
        && size <= l1.size_bytes
    {
        warn(&format!(
            "-n/--size {} fits in the {} L1: every load will hit and no line size can show",
            HumanBytes(size),
            HumanBytes(l1.size_bytes)
        ));
    }
    eprintln!(
        "memlat linesize: {} at spacings {:?} bytes, page-random then stride order",
        HumanBytes(size),
        args.strides
    );
    let curves = experiment::run(
        &mut prepared.engine,
        &prepared.template,
        size,
        &args.strides,
        experiment::PASSES,
        &mut crate::experiments::Quiet,
    )?;
    report_cycle_source(&prepared.engine);
    let read: Vec<(PairReading, LineEstimate)> = curves
        .passes
        .iter()
        .map(|p| {
            (
                linesize::read_pairs(&p.pairs, p.lone_ns),
                linesize::estimate(&p.page_random),
            )
        })
        .collect();
    let readings: Vec<PassReading> = read
        .iter()
        .zip(&curves.passes)
        .map(|((r, e), pass)| PassReading {
            line_bytes: r.line_bytes.or(e.line_bytes),
            fetch_bytes: linesize::fetch_bytes(r.line_bytes, e.line_bytes),
            lone_ns: pass.lone_ns,
            pairs: pass.pairs.clone(),
        })
        .collect();
    let line = Agreement::of(readings.iter().map(|r| r.line_bytes).collect());
    let fetch = Agreement::of(readings.iter().map(|r| r.fetch_bytes).collect());
    // The tables show the first pass; the readings line shows them all.
    let first = &curves.passes[0];
    let (reading, estimate) = &read[0];
    let (points, stride_points) = (&first.page_random, &curves.stride);
    let stride_estimate = linesize::estimate(stride_points);
    let status = prepared.prefetch.status.clone();
    let content = match args.measure.format {
        Format::Json => output::result_json(
            "linesize",
            &LinesizeOutput {
                line_bytes: line.value,
                fetch_bytes: fetch.value,
                readings: &readings,
                agree: line.agree,
                fetch_agree: fetch.agree,
                pairs: &first.pairs,
                lone_ns: first.lone_ns,
                pair_reading: reading,
                claimed_line_bytes: machine.line_bytes,
                size,
                points,
                estimate,
                stride_points,
                stride_estimate: &stride_estimate,
                prefetchers: &status,
            },
        )?,
        Format::Csv => table(points, stride_points).csv(),
        Format::Text | Format::Markdown => {
            let d = document(
                size,
                &curves,
                (&line, &fetch),
                estimate,
                &stride_estimate,
                machine.line_bytes,
                &status,
            );
            if args.measure.format == Format::Text {
                d.text()
            } else {
                d.markdown()
            }
        }
    };
    output.write(&content)
}

/// Latency per spacing, in both orders.
fn table(points: &[StridePoint], stride_points: &[StridePoint]) -> Table {
    let mut t = Table::new(&["s", "page-random ns", "stride ns"]);
    for (p, q) in points.iter().zip(stride_points) {
        t.row(vec![
            p.stride.into(),
            Cell::float(p.ns, 3),
            Cell::float(q.ns, 3),
        ]);
    }
    t
}

/// The dependent pairs: each distance's mean and second-load latency.
fn pairs_table(curves: &Curves) -> Table {
    let first = &curves.passes[0];
    let mut t = Table::new(&["X to X+d", "pair ns", "second load ns"]);
    for p in &first.pairs {
        t.row(vec![
            format!("{} bytes", p.distance).into(),
            Cell::float(p.pair_ns, 2),
            Cell::float(p.second_ns, 2),
        ]);
    }
    t.note(format!(
        "a lone load at a random slot: {:.2} ns; the second load = 2 x pair - lone (first of {} passes)",
        first.lone_ns,
        curves.passes.len()
    ));
    t
}

/// `64-byte lines, fetched in 128-byte units`, or why there is no reading.
fn line_sentence(line: &Agreement<u64>, fetch: &Agreement<u64>) -> String {
    match (line.value, fetch.value) {
        (Some(l), Some(f)) if f > l => format!(
            "{l}-byte lines, fetched in {f}-byte units ({} lines a miss); {}",
            f / l,
            line.describe(" B")
        ),
        (Some(l), _) => format!("{l}-byte lines; {}", line.describe(" B")),
        (None, _) => line.describe(" B"),
    }
}

fn document(
    size: u64,
    curves: &Curves,
    (line, fetch): (&Agreement<u64>, &Agreement<u64>),
    estimate: &LineEstimate,
    stride_estimate: &LineEstimate,
    claimed: u64,
    prefetchers: &str,
) -> Document {
    let mut d = Document::new(format!(
        "memlat linesize: loads s bytes apart over {} (the latency grows with s up to the line size)",
        HumanBytes(size)
    ));
    d.table(table(&curves.passes[0].page_random, &curves.stride));
    d.table(pairs_table(curves));
    let show = |e: &LineEstimate| {
        e.line_bytes
            .map_or("not shown by the data".into(), |l| format!("{l} bytes"))
    };
    let mut lines = vec![format!(
        "line: {} (claimed: {claimed} bytes)",
        line_sentence(line, fetch)
    )];
    let first = &curves.passes[0];
    let reading = linesize::read_pairs(&first.pairs, first.lone_ns);
    lines.extend(reading.notes.iter().map(|n| format!("note: {n}")));
    lines.push(format!(
        "page-random spacing: latency stops growing at {} (beyond the line, lines closer than this arrive together: the unit fetched)",
        show(estimate)
    ));
    lines.extend(estimate.notes.iter().map(|n| format!("note: {n}")));
    lines.push(format!(
        "stride chain: latency stops growing at {} (prefetchers follow this order: their reach, not necessarily the line)",
        show(stride_estimate)
    ));
    lines.push(format!("prefetchers: {prefetchers}"));
    d.lines(lines);
    d
}
