//! `memlat report`: one self-contained HTML page (or Markdown) of result
//! files: the machine, the method, every table and plot, the warnings. No
//! network: plots are inline SVG, styles inline, no scripts or web fonts.

use anyhow::Result;
use serde_json::Value;

use crate::cli::ReportArgs;
use crate::cli::files::Output;
use crate::cli::inputs::{self, Loaded};
use crate::output::plot::{self, Chart};
use crate::output::table::{Cell, Table, escape_html, escape_markdown};
use crate::readback::Kind;

/// How each kind of result was measured, in a few sentences.
fn method(kind: Kind) -> &'static str {
    match kind {
        Kind::Sweep => {
            "Pointer chasing at many working-set sizes (a geometric sequence of prime multiples of the line), with stride chains (which prefetchers follow) and random chains (which they cannot); every size's latency is the median of its repeats, each repeat timing A then 2A dependent loads and keeping the difference. Cache levels are found from the random curve alone: plateaus, and capacities where the latency leaves them, refined to 5%."
        }
        Kind::Run | Kind::Quick => {
            "Pointer chasing: every load's address is the value the previous load returned, so loads cannot overlap and the time per load is the latency; each repeat times A then 2A loads and keeps the difference, the median over repeats is reported."
        }
        Kind::Levels => {
            "Seed 002's procedure, sized on this machine: for each cache level a random walk in the middle of its measured plateau (half of the cache with --machine), for memory the size every memlat command measures it at (4x the last level's measured capacity, 256 MiB to 1 GiB; 8x the last level with --machine), each iteration a fresh random chain."
        }
        Kind::Detect => {
            "Levels found in a measured latency curve alone (plateaus, and capacities where the latency leaves them); sysfs and CPUID are shown beside, never used."
        }
        Kind::Assoc => {
            "N lines one stride apart (the level's size over its claimed ways) fall in one set; the largest N that still hits at the level's latency is its ways, read in three passes with chains of their own."
        }
        Kind::Linesize => {
            "Dependent pairs of loads a growing distance apart: the second load is a hit while it lies in the first's line, so the line is where its latency steps up; read in three passes."
        }
        Kind::Loaduse => {
            "Seed 003: a load, N NOPs, then an add of the loaded value into the next address; cycles per iteration against N show the load-to-use latency and how many instructions issue in its shadow."
        }
        Kind::Mlp => {
            "N random chains walked side by side in one thread: the time per load falls as the core overlaps misses, until it runs out of miss buffers."
        }
        Kind::Bandwidth => {
            "Each thread, pinned to its own CPU, streams through a buffer of its own (read, write, copy, non-temporal write) with the widest vectors the CPU has; all start together, and a figure is the median of its samples. GB/s is 10^9 bytes a second; a copy counts bytes read plus bytes written."
        }
        Kind::Loaded => {
            "A chase while pinned threads load memory with swept delays: chase latency against the bandwidth they counted."
        }
        Kind::Tlb => {
            "For N pages, a random chain through one line in each, against the same lines packed into few pages: the difference is translation alone; where it steps up, a TLB level's reach is exceeded."
        }
        Kind::C2c => {
            "Two pinned threads pass a cache line back and forth (compare-and-swap ping-pong, or a write answered on a second line); the one-way time is half a round trip, the median of 15 samples per pair."
        }
        Kind::Numa => {
            "A random chain in memory bound to each node (mbind), walked from a CPU of each node: the matrix of load latencies between nodes."
        }
        Kind::Doctor => {
            "What this machine lets memlat measure and how well: read from the system and CPUID, the core clock timed with dependent add and multiply chains."
        }
        Kind::Characterize => {
            "memlat characterize: each stage ran as its own memlat command (characterize.json holds each command line); a stage that failed or was skipped says why."
        }
        Kind::Watch => {
            "memlat watch: every interval, one short sample in the middle of each measured plateau and of memory, and probe sizes across the last cache level's edge, on chains built once; events are shifts of 10% or more beyond each series' own noise (PELT on log latency), lasting two intervals or more."
        }
        Kind::Compare => {
            "memlat compare: the points two or more results share, each the last result's median over the first's, with a bootstrap interval for latency and sample bounds for bandwidth."
        }
        Kind::Merged => "Results of many hosts merged into one file.",
    }
}

/// Runs `memlat report`.
pub fn run(args: &ReportArgs) -> Result<()> {
    crate::cli::files::check_inputs_and_outputs(&args.results, args.output.as_deref(), None)?;
    let output = Output::create(args.output.as_deref())?;
    let mut results = inputs::load(&args.results)?;
    pipeline_order(&mut results);
    let sections: Vec<Section> = results.iter().map(section).collect();
    let machine = machine(&results);
    let content = if args.format == "markdown" {
        markdown(&machine, &sections)
    } else {
        html(&machine, &sections)
    };
    output.write(&content)?;
    // Said on stderr (stdout may be the report itself).
    if let Some(path) = &args.output {
        crate::cli::common::notice(&format!(
            "report of {} result(s) written to {} ({})",
            sections.len(),
            path.display(),
            if args.format == "markdown" {
                "Markdown"
            } else {
                "HTML, self-contained"
            }
        ));
    }
    Ok(())
}

/// The HTML report of every result in `paths` that reads back, for a
/// command that made them (`memlat characterize`): one that does not read
/// is left out, and said in the second value, rather than failing the rest.
pub(crate) fn html_of(paths: &[std::path::PathBuf]) -> (String, Vec<String>) {
    let mut results = Vec::new();
    let mut sections = Vec::new();
    let mut left_out = Vec::new();
    for path in paths {
        match inputs::load(std::slice::from_ref(path)) {
            Ok(loaded) => results.extend(loaded),
            Err(e) => left_out.push(format!("{}: {e:#}", path.display())),
        }
    }
    pipeline_order(&mut results);
    sections.extend(results.iter().map(section));
    (html(&machine(&results), &sections), left_out)
}

/// One result's part of the report.
struct Section {
    title: String,
    method: &'static str,
    /// The kind's headline tables, shown first.
    headline: Vec<Table>,
    /// Detail tables, after the charts.
    tables: Vec<Table>,
    charts: Vec<Chart>,
    heatmaps: Vec<plot::heatmap::Heatmap>,
    warnings: Vec<String>,
}

/// A characterize run's summary first, then its stages in pipeline order
/// (the order of its `stages`); other results keep the order given.
fn pipeline_order(results: &mut [Loaded]) {
    let stages: Vec<String> = results
        .iter()
        .filter(|r| r.kind == "characterize")
        .flat_map(|r| r.value["stages"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["file"].as_str().map(String::from))
        .collect();
    let rank = |r: &Loaded| -> usize {
        if r.kind == "characterize" {
            return 0;
        }
        let name = r.path.file_name().map(|n| n.to_string_lossy().into_owned());
        stages
            .iter()
            .position(|f| Some(f.as_str()) == name.as_deref())
            .map_or(usize::MAX, |k| k + 1)
    };
    results.sort_by_key(rank);
}

/// The machines the results were measured on, as each result recorded
/// them (never this machine now: a report is often made elsewhere).
fn machine(results: &[Loaded]) -> Table {
    let mut t = Table::new(&["<host", "<CPU", "<kernel", "<machine id", "<results"]);
    let mut hosts: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for r in results {
        let host = &r.value["host"];
        let field = |k: &str| host[k].as_str().unwrap_or("not recorded").to_string();
        let key = vec![
            field("hostname"),
            field("cpu_model"),
            field("kernel"),
            field("machine_id"),
        ];
        match hosts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, labels)) => labels.push(r.label.clone()),
            None => hosts.push((key, vec![r.label.clone()])),
        }
    }
    for (key, labels) in hosts {
        let mut cells: Vec<Cell> = key.into_iter().map(Cell::from).collect();
        cells.push(labels.join(", ").into());
        t.row(cells);
    }
    t.note("as recorded in each result when it was measured");
    t
}

/// The measurements of a result as a table: point, median, repeats.
fn points_table(r: &Loaded) -> Table {
    let mut t = Table::new(&["<point", "ns per load", "min", "max", "repeats"]);
    for p in r.measurements() {
        let lo = p.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = p.samples.iter().copied().fold(0.0, f64::max);
        t.row(vec![
            p.key.into(),
            Cell::float(p.median, 2),
            Cell::float(lo, 2),
            Cell::float(hi, 2),
            (p.samples.len() as u64).into(),
        ]);
    }
    t
}

/// Every string in arrays named `warnings` or `notes`, anywhere in the
/// result, in the order of its JSON: a sweep's points from their structs,
/// each made a JSON tree in turn (never all at once).
fn warnings_of(r: &Loaded, out: &mut Vec<String>) {
    match (&r.value, &r.sweep) {
        (Value::Object(map), Some(sweep)) => {
            for (k, v) in map {
                if k == "points" {
                    for point in &sweep.points {
                        warnings(&serde_json::to_value(point).unwrap_or_default(), out);
                    }
                } else {
                    warnings_in(k, v, out);
                }
            }
        }
        _ => warnings(&r.value, out),
    }
}

/// Every string in arrays named `warnings` or `notes`, anywhere in `value`.
fn warnings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| warnings_in(k, v, out)),
        Value::Array(items) => items.iter().for_each(|v| warnings(v, out)),
        _ => {}
    }
}

/// [`warnings`] of the field `key` holding `value`.
fn warnings_in(key: &str, value: &Value, out: &mut Vec<String>) {
    if (key == "warnings" || key == "notes")
        && let Some(items) = value.as_array()
    {
        out.extend(items.iter().filter_map(|i| i.as_str().map(String::from)));
    } else {
        warnings(value, out);
    }
}

fn section(r: &Loaded) -> Section {
    // Loaded results were checked by crate::readback, whose kinds are Kind's.
    let kind = Kind::parse(&r.kind).unwrap_or(Kind::Merged);
    let shown = crate::output::present::present_read(kind, &r.label, &r.value, r.sweep.as_deref());
    let mut tables = shown.parts.tables;
    let points = points_table(r);
    if !points.is_empty() {
        tables.push(points);
    }
    let mut w = shown.parts.problems;
    warnings_of(r, &mut w);
    w.dedup();
    // A note the headline shows under its table is not repeated below.
    w.retain(|x| {
        !shown
            .headline
            .iter()
            .any(|t| t.notes.iter().any(|n| n.contains(x.as_str())))
    });
    Section {
        title: format!("{} ({})", r.label, r.kind),
        method: method(kind),
        headline: shown.headline,
        tables,
        charts: shown.parts.charts,
        heatmaps: shown.parts.heatmaps,
        warnings: w,
    }
}

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1150px;margin:2em auto;color:#222;line-height:1.45}\
h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em}\
th{background:#f0f3f8}td.r,th.r{text-align:right}td.l,th.l{text-align:left}\
ul.notes{font-size:.85em;color:#444}.warn{background:#fff6e0;border-left:4px solid #e69f00;padding:.5em 1em;font-size:.9em}\
.plot svg{max-width:100%;height:auto;border:1px solid #eee}.method{color:#444}\
summary{cursor:pointer;color:#245}.toc{font-size:.9em}";

/// Tables with more rows than this are folded (`<details>`) in the HTML.
const LONG_TABLE: usize = 20;
/// Warning lists longer than this are folded.
const LONG_WARNINGS: usize = 8;

fn html(machine: &Table, sections: &[Section]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>memlat report</title><style>{STYLE}</style></head><body>\n<h1>memlat report</h1>\n<p>memlat {} &middot; {} result(s). Every figure below was measured; claims of the system (sysfs, CPUID) are marked as such.</p>\n",
        env!("CARGO_PKG_VERSION"),
        sections.len(),
    );
    if sections.len() > 1 {
        let links: Vec<String> = sections
            .iter()
            .enumerate()
            .map(|(k, s)| format!("<a href=\"#r{}\">{}</a>", k + 1, escape_html(&s.title)))
            .collect();
        out += &format!("<p class=\"toc\">{}</p>\n", links.join(" &middot; "));
    }
    for (k, s) in sections.iter().enumerate() {
        out += &format!(
            "<h2 id=\"r{}\">{}</h2>\n<p class=\"method\">{}</p>\n",
            k + 1,
            escape_html(&s.title),
            escape_html(s.method)
        );
        for t in &s.headline {
            out += &fold(t, LONG_TABLE);
        }
        let drawn = s
            .charts
            .iter()
            .map(|c| plot::svg_string(std::slice::from_ref(c)))
            .chain(s.heatmaps.iter().map(plot::heatmap::svg_string));
        for svg in drawn {
            match svg {
                Ok(svg) => {
                    let body = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
                    out += &format!("<div class=\"plot\">{body}</div>\n");
                }
                Err(e) => {
                    out += &format!(
                        "<p class=\"warn\">plot not drawn: {}</p>\n",
                        escape_html(&e.to_string())
                    )
                }
            }
        }
        // Detail tables (a sweep's every point) fold, so the next result stays in sight.
        for t in &s.tables {
            out += &fold(t, 0);
        }
        if !s.warnings.is_empty() {
            let items: String = s
                .warnings
                .iter()
                .map(|w| format!("<li>{}</li>\n", escape_html(w)))
                .collect();
            out += &if s.warnings.len() > LONG_WARNINGS {
                format!(
                    "<div class=\"warn\"><details><summary><b>Warnings and notes</b> ({})</summary><ul>\n{items}</ul></details></div>\n",
                    s.warnings.len()
                )
            } else {
                format!("<div class=\"warn\"><b>Warnings and notes</b><ul>\n{items}</ul></div>\n")
            };
        }
    }
    out += &format!(
        "<h2>The machine</h2>\n<details><summary>{} host(s), as the results recorded them</summary>\n{}</details>\n",
        machine.rows.len(),
        machine.html()
    );
    out += "</body></html>\n";
    out
}

/// `t` as HTML, folded (`<details>`) when it has more than `rows` rows.
fn fold(t: &Table, rows: usize) -> String {
    if t.rows.len() > rows {
        format!(
            "<details><summary>{} rows</summary>\n{}</details>\n",
            t.rows.len(),
            t.html()
        )
    } else {
        t.html()
    }
}

fn markdown(machine: &Table, sections: &[Section]) -> String {
    let mut out = format!(
        "# memlat report\n\nmemlat {}, {} result(s).\n\n",
        env!("CARGO_PKG_VERSION"),
        sections.len(),
    );
    for s in sections {
        out += &format!(
            "## {}\n\n{}\n\n",
            escape_markdown(&s.title),
            escape_markdown(s.method)
        );
        for t in &s.headline {
            out += &t.markdown();
            out.push('\n');
        }
        let plots = s.charts.len() + s.heatmaps.len();
        if plots > 0 {
            out += &format!("({plots} plot(s): see the HTML report)\n\n");
        }
        for t in &s.tables {
            out += &t.markdown();
            out.push('\n');
        }
        for w in &s.warnings {
            out += &format!("- warning: {}\n", escape_markdown(w));
        }
        out.push('\n');
    }
    out += &format!("## The machine\n\n{}\n", machine.markdown());
    out
}
