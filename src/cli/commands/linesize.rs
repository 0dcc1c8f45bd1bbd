//! `memlat linesize`: loads 8..256 bytes apart beyond L1, in a page-random
//! order (prefetchers cannot follow) and as seed 004's stride chain (they
//! can); the line size is where the latency stops growing (see [`crate::analysis::linesize`]).

use anyhow::Result;
use serde::Serialize;

use crate::analysis::linesize::{
    self, HitReference, LineEstimate, PairPoint, PairReading, StridePoint,
};
use crate::analysis::readings::Agreement;
use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::{Format, LinesizeArgs};
use crate::error::usage;
use crate::experiments::linesize::{self as experiment, Curves};
use crate::output;
use crate::output::document::Document;
use crate::output::present;
use crate::output::table::{Cell, Table};
use crate::platform::caches::Machine;
use crate::readback::Kind;
use crate::units::HumanBytes;

/// One pass's reading.
#[derive(Serialize, Clone, PartialEq)]
struct PassReading {
    /// The line this pass read: the first distance at which a dependent
    /// second load is no longer an L1 hit, unless the page-random spacing
    /// contradicts it (then null).
    line_bytes: Option<u64>,
    /// The unit a miss brought in, by this pass.
    fetch_bytes: Option<u64>,
    /// This pass's L1 hit (a random chain within the L1).
    hit: HitReference,
    /// This pass's lone load, ns.
    lone_ns: f64,
    /// Why this pass reads no line, or what to keep in mind.
    notes: Vec<String>,
    /// This pass's dependent pairs.
    pairs: Vec<PairPoint>,
}

/// What `memlat linesize --format json` prints.
#[derive(Serialize)]
struct LinesizeOutput<'a> {
    /// The line: the smallest distance at which a dependent second load is
    /// no longer an L1 hit (above the L1 hit measured in the same pass by
    /// more than the repeats' spread), when every pass read the same and the
    /// page-random spacing contradicts none; null otherwise.
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
    /// Latency per spacing, page-random order: each spacing's median over the passes.
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
    let hit_size = experiment::hit_size(&machine);
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
        (size, hit_size),
        &args.strides,
        experiment::PASSES,
        &mut crate::experiments::Quiet,
    )?;
    report_cycle_source(&prepared.engine);
    let read: Vec<PairReading> = curves
        .passes
        .iter()
        .map(|p| linesize::read_pairs(&p.pairs, p.hit, p.lone_ns))
        .collect();
    // The fetch unit from the passes' page-random curves together (each
    // spacing's median): one pass's curve alone is too noisy on a shared
    // machine to overrule a line.
    let points = pooled(&curves);
    let estimate = linesize::estimate(&points);
    // A pass's line is its hit test's, never the spacing curve's in its
    // place: an answer the hit test does not give is not a reading.
    let readings: Vec<PassReading> = read
        .iter()
        .zip(&curves.passes)
        .map(|(r, pass)| {
            let (line_bytes, why) =
                linesize::cross_check(r.line_bytes, &points, estimate.line_bytes);
            PassReading {
                line_bytes,
                fetch_bytes: linesize::fetch_bytes(line_bytes, estimate.line_bytes),
                hit: pass.hit,
                lone_ns: pass.lone_ns,
                notes: r.notes.iter().cloned().chain(why).collect(),
                pairs: pass.pairs.clone(),
            }
        })
        .collect();
    let line = Agreement::of(readings.iter().map(|r| r.line_bytes).collect());
    let fetch = Agreement::of(readings.iter().map(|r| r.fetch_bytes).collect());
    // The tables show the first pass; the readings line shows them all.
    let first = &curves.passes[0];
    let reading = &read[0];
    let (points, stride_points) = (&points, &curves.stride);
    let stride_estimate = linesize::estimate(stride_points);
    let status = prepared.prefetch.status.clone();
    // JSON is written from the result, text and markdown from its JSON value.
    let out = LinesizeOutput {
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
        estimate: &estimate,
        stride_points,
        stride_estimate: &stride_estimate,
        prefetchers: &status,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.measure.format {
        Format::Json => output::result_json("linesize", &out)?,
        Format::Csv => table(points, stride_points).csv(),
        Format::Text | Format::Markdown => {
            let mut d = document(
                size,
                &curves,
                &readings,
                (&line, &fetch),
                (&estimate, &stride_estimate),
                machine.line_bytes,
                &status,
            );
            d.lead(present::headline(Kind::Linesize, &value)?);
            if args.measure.format == Format::Text {
                d.text()
            } else {
                d.markdown()
            }
        }
    };
    output.write(&content)
}

/// Each spacing's page-random latency, the median over the passes.
fn pooled(curves: &Curves) -> Vec<StridePoint> {
    let Some(first) = curves.passes.first() else {
        return Vec::new();
    };
    (0..first.page_random.len())
        .map(|i| StridePoint {
            stride: first.page_random[i].stride,
            ns: crate::analysis::stats::median(
                &curves
                    .passes
                    .iter()
                    .filter_map(|p| p.page_random.get(i).map(|q| q.ns))
                    .collect::<Vec<_>>(),
            ),
        })
        .collect()
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
        "an L1 hit: {:.2} ns; a lone load at a random slot: {:.2} ns; the second load = 2 x pair - lone (first of {} passes)",
        first.hit.ns,
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
    readings: &[PassReading],
    (line, fetch): (&Agreement<u64>, &Agreement<u64>),
    (estimate, stride_estimate): (&LineEstimate, &LineEstimate),
    claimed: u64,
    prefetchers: &str,
) -> Document {
    let mut d = Document::new(format!(
        "memlat linesize: loads s bytes apart over {} (the latency grows with s up to the line size)",
        HumanBytes(size)
    ));
    d.table(table(&pooled(curves), &curves.stride));
    d.table(pairs_table(curves));
    let show = |e: &LineEstimate| {
        e.line_bytes
            .map_or("not shown by the data".into(), |l| format!("{l} bytes"))
    };
    let mut lines = vec![format!(
        "line: {} (claimed: {claimed} bytes)",
        line_sentence(line, fetch)
    )];
    // The first pass's notes, and why any pass read no line.
    for (k, r) in readings.iter().enumerate() {
        if k == 0 || r.line_bytes.is_none() {
            let who = if readings.len() > 1 {
                format!("pass {}: ", k + 1)
            } else {
                String::new()
            };
            lines.extend(r.notes.iter().map(|n| format!("note: {who}{n}")));
        }
    }
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
