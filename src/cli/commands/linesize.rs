//! `memlat linesize`: the line from what the cache tags as one (X + d after
//! X's line is dropped: [`crate::kernels::line_tag`]), how a line arrives
//! from dependent pairs X, X + d, and the unit a miss fetches from loads
//! 8..256 bytes apart in a page-random order (see [`crate::analysis::linesize`]).

use anyhow::Result;
use serde::Serialize;

use crate::analysis::linesize::{
    self, FillReading, HitReference, LineEstimate, PairPoint, StridePoint, TagPoint, TagReferences,
};
use crate::analysis::readings::Agreement;
use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::{Format, LinesizeArgs};
use crate::error::usage;
use crate::experiments::linesize::{self as experiment, Curves};
use crate::kernels::line_tag::Drop;
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
    /// The line this pass read: the first distance X + d whose load survived
    /// dropping X's line (a page-random spacing that disagrees is a note).
    line_bytes: Option<u64>,
    /// How a line arrives, read from this pass's pairs within its line.
    fill: Option<FillReading>,
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
    /// This pass's line-tag test: X + d after X's line was dropped.
    tags: Vec<TagPoint>,
    /// Its references: X dropped, X kept.
    tag_refs: TagReferences,
}

/// What `memlat linesize --format json` prints.
#[derive(Serialize)]
struct LinesizeOutput<'a> {
    /// The line: what the cache tags, evicts and flushes as one (the
    /// smallest distance X + d whose load survived dropping X's line), when
    /// every pass read the same; null otherwise.
    line_bytes: Option<u64>,
    /// How X's line was dropped: `flush (clflush)`, `flush (dc civac)` or conflict eviction.
    line_method: String,
    /// The part of a line that arrives first (the line itself when it
    /// arrives whole), when every pass read the same; null otherwise.
    fill_chunk_bytes: Option<u64>,
    /// Whether every pass read the same fill chunk.
    fill_agree: bool,
    /// How a line arrives, in words (the first pass's reading).
    fill: String,
    /// Where the measured line and the system's claim disagree, said so.
    line_disagreement: Option<String>,
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
    /// The first pass's fill reading, with its notes.
    fill_reading: Option<&'a FillReading>,
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
    let drop = args.drop.unwrap_or_else(Drop::best);
    if drop == Drop::Flush && crate::kernels::line_tag::flush_instruction().is_none() {
        return usage(
            "--drop flush: this ISA has no flush instruction memlat may use; give --drop evict",
        );
    }
    let l1_bytes = machine.caches.first().map_or(64 << 10, |c| c.size_bytes);
    let curves = experiment::run(
        &mut prepared.engine,
        &prepared.template,
        (size, hit_size),
        (drop, l1_bytes),
        &args.strides,
        experiment::PASSES,
        &mut crate::experiments::Quiet,
    )?;
    report_cycle_source(&prepared.engine);
    let tag_readings: Vec<_> = curves
        .passes
        .iter()
        .map(|p| linesize::read_tags(&p.tags, p.tag_refs))
        .collect();
    // The fetch unit from the passes' page-random curves together (each
    // spacing's median): one pass's curve alone is too noisy on a shared
    // machine to overrule a line.
    let points = pooled(&curves);
    let estimate = linesize::estimate(&points);
    // Nothing the core sees arrives less than a cycle apart.
    let cycle_ns = 1.0 / prepared.engine.clock_ghz();
    // A pass's line is its tag test's, never the spacing curve's in its
    // place: an answer the tags do not give is not a reading.
    let readings: Vec<PassReading> = tag_readings
        .iter()
        .zip(&curves.passes)
        .map(|(r, pass)| {
            let (line_bytes, why) =
                linesize::cross_check(r.line_bytes, &points, estimate.line_bytes);
            PassReading {
                line_bytes,
                fill: line_bytes
                    .map(|l| linesize::read_fill(&pass.pairs, l, pass.lone_ns, cycle_ns)),
                fetch_bytes: linesize::fetch_bytes(line_bytes, estimate.line_bytes),
                hit: pass.hit,
                lone_ns: pass.lone_ns,
                notes: r.notes.iter().cloned().chain(why).collect(),
                pairs: pass.pairs.clone(),
                tags: pass.tags.clone(),
                tag_refs: pass.tag_refs,
            }
        })
        .collect();
    let line = Agreement::of(readings.iter().map(|r| r.line_bytes).collect());
    let fetch = Agreement::of(readings.iter().map(|r| r.fetch_bytes).collect());
    let chunk = Agreement::of(
        readings
            .iter()
            .map(|r| r.fill.as_ref().and_then(|f| f.chunk_bytes))
            .collect(),
    );
    // Where the passes disagree, the headline leads with the chunk most of
    // them read (a 0.5 ns "rest of the line" in one pass of a Zen 4 guest,
    // whole lines in the other two), the first pass's on a tie, the
    // disagreement said beside it.
    let most_read = chunk.most_read();
    let fill_reading = readings
        .iter()
        .filter_map(|r| r.fill.as_ref())
        .find(|f| most_read.is_none() || f.chunk_bytes == most_read);
    let fill = match (fill_reading, chunk.agree) {
        (Some(f), true) => f.sentence.clone(),
        (Some(f), false) => format!("{} ({})", f.sentence, chunk.describe(" B")),
        (None, _) => "not read: no line to read it within".into(),
    };
    let line_disagreement = disagreement(line.value, machine.line_bytes);
    if let Some(d) = &line_disagreement {
        warn(d);
    }
    // The tables show the first pass; the readings line shows them all.
    let first = &curves.passes[0];
    let (points, stride_points) = (&points, &curves.stride);
    let stride_estimate = linesize::estimate(stride_points);
    let status = prepared.prefetch.status.clone();
    // JSON is written from the result, text and markdown from its JSON value.
    let out = LinesizeOutput {
        line_bytes: line.value,
        line_method: drop.describe(),
        fill_chunk_bytes: chunk.value,
        fill_agree: chunk.agree,
        fill,
        line_disagreement,
        fetch_bytes: fetch.value,
        readings: &readings,
        agree: line.agree,
        fetch_agree: fetch.agree,
        pairs: &first.pairs,
        lone_ns: first.lone_ns,
        fill_reading,
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
                (&out.line_method, &out.fill, &status),
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

/// The measured line against the system's claim, both ways: a claim
/// larger or smaller than the line the tags gave is a disagreement, said so.
fn disagreement(measured: Option<u64>, claimed: u64) -> Option<String> {
    match measured {
        Some(m) if claimed != 0 && m != claimed => Some(format!(
            "the system claims {claimed}-byte lines; the tags measured {m}: they disagree (the claim is shown beside the measurement, not used in its place)"
        )),
        _ => None,
    }
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
    let mut t = Table::new(&[
        "X then X+d (how a line arrives)",
        "pair ns",
        "second load ns",
    ]);
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

/// The line-tag test: X + d after X's line was dropped, against the two references.
fn tags_table(curves: &Curves, method: &str) -> Table {
    let first = &curves.passes[0];
    let refs = first.tag_refs;
    let mut t = Table::new(&[
        "X + d after X's line dropped",
        "ns per load",
        "shares X's line",
    ]);
    for p in &first.tags {
        let shares = refs.shares_x_line(p.ns);
        t.row(vec![
            format!("{} bytes", p.distance).into(),
            Cell::float(p.ns, 2),
            if shares { "yes" } else { "no" }.into(),
        ]);
    }
    t.note(format!(
        "dropped by {method}; X itself dropped: {:.2} ns, X kept: {:.2} ns (first of {} passes, median of {} rounds)",
        refs.dropped_ns,
        refs.kept_ns,
        curves.passes.len(),
        experiment::TAG_ROUNDS
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
    (method, fill, prefetchers): (&str, &str, &str),
) -> Document {
    let mut d = Document::new(format!(
        "memlat linesize: loads s bytes apart over {} (the latency grows with s up to the line size)",
        HumanBytes(size)
    ));
    d.table(table(&pooled(curves), &curves.stride));
    d.table(tags_table(curves, method));
    d.table(pairs_table(curves));
    let show = |e: &LineEstimate| {
        e.line_bytes
            .map_or("not shown by the data".into(), |l| format!("{l} bytes"))
    };
    let mut lines = vec![
        format!(
            "line: {} (claimed: {claimed} bytes; from what the cache tags as one: {method})",
            line_sentence(line, fetch)
        ),
        format!("fill: {fill}"),
    ];
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
