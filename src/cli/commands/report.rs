//! `memlat report`: one self-contained HTML page (or Markdown) of result
//! files: the machine, the method, every table and plot, the warnings. No
//! network: plots are inline SVG, styles inline, no scripts or web fonts.

mod kinds;

use anyhow::Result;
use serde_json::Value;

use crate::analysis::compare;
use crate::cli::ReportArgs;
use crate::cli::files::Output;
use crate::cli::inputs::{self, Loaded};
use crate::experiments::doctor::{Facts, Report};
use crate::experiments::sweep::SweepResult;
use crate::output::plot::{self, Chart};
use crate::output::table::{Cell, Table, escape_html, escape_markdown};

/// How each kind of result was measured, in a few sentences.
fn method(kind: &str) -> &'static str {
    match kind {
        "sweep" => {
            "Pointer chasing at many working-set sizes (a geometric sequence of prime multiples of the line), with stride chains (which prefetchers follow) and random chains (which they cannot); every size's latency is the median of its repeats, each repeat timing A then 2A dependent loads and keeping the difference. Cache levels are found from the random curve alone: plateaus, and capacities where the latency leaves them, refined to 5%."
        }
        "run" | "quick" => {
            "Pointer chasing: every load's address is the value the previous load returned, so loads cannot overlap and the time per load is the latency; each repeat times A then 2A loads and keeps the difference, the median over repeats is reported."
        }
        "levels" => {
            "Seed 002's procedure: for each cache level a random walk over half of it, for memory 8x the last level, each iteration a fresh random chain."
        }
        "mlp" => {
            "N random chains walked side by side in one thread: the time per load falls as the core overlaps misses, until it runs out of miss buffers."
        }
        "bandwidth" => {
            "Each thread, pinned to its own CPU, streams through a buffer of its own (read, write, copy, non-temporal write) with the widest vectors the CPU has; all start together, and a figure is the median of its samples. GB/s is 10^9 bytes a second; a copy counts bytes read plus bytes written."
        }
        "loaded" => {
            "A chase while pinned threads load memory with swept delays: chase latency against the bandwidth they counted."
        }
        "tlb" => {
            "For N pages, a random chain through one line in each, against the same lines packed into few pages: the difference is translation alone; where it steps up, a TLB level's reach is exceeded."
        }
        "c2c" => {
            "Two pinned threads pass a cache line back and forth (compare-and-swap ping-pong, or a write answered on a second line); the one-way time is half a round trip, the median of 15 samples per pair."
        }
        "doctor" => {
            "What this machine lets memlat measure and how well: read from the system and CPUID, the core clock timed with dependent add and multiply chains."
        }
        "characterize" => {
            "memlat characterize: each stage ran as its own memlat command (characterize.json holds each command line); a stage that failed or was skipped says why."
        }
        "watch" => {
            "memlat watch: every interval, one short sample in the middle of each measured plateau and of memory, and probe sizes across the last cache level's edge, on chains built once; events are shifts of 10% or more beyond each series' own noise (PELT on log latency), lasting two intervals or more."
        }
        _ => "A memlat measurement; its JSON records how.",
    }
}

/// Runs `memlat report`.
pub fn run(args: &ReportArgs) -> Result<()> {
    crate::cli::files::check_inputs_and_outputs(&args.results, args.output.as_deref(), None)?;
    let output = Output::create(args.output.as_deref())?;
    let results = inputs::load(&args.results)?;
    let sections: Vec<Section> = results.iter().map(section).collect::<Result<_>>()?;
    let machine = machine(&results);
    let content = if args.format == "markdown" {
        markdown(&machine, &sections)
    } else {
        html(&machine, &sections)
    };
    output.write(&content)
}

/// The HTML report of every result in `paths` that reads back, for a
/// command that made them (`memlat characterize`): one that does not read
/// is left out, and said in the second value, rather than failing the rest.
pub(crate) fn html_of(paths: &[std::path::PathBuf]) -> (String, Vec<String>) {
    let mut results = Vec::new();
    let mut sections = Vec::new();
    let mut left_out = Vec::new();
    for path in paths {
        let read = inputs::load(std::slice::from_ref(path)).and_then(|loaded| {
            let built: Vec<Section> = loaded.iter().map(section).collect::<Result<_>>()?;
            Ok((loaded, built))
        });
        match read {
            Ok((loaded, built)) => {
                results.extend(loaded);
                sections.extend(built);
            }
            Err(e) => left_out.push(format!("{}: {e:#}", path.display())),
        }
    }
    (html(&machine(&results), &sections), left_out)
}

/// One result's part of the report.
struct Section {
    title: String,
    method: &'static str,
    tables: Vec<Table>,
    charts: Vec<Chart>,
    heatmaps: Vec<plot::heatmap::Heatmap>,
    warnings: Vec<String>,
}

/// The machine: the hosts the results name, and the doctor's findings when
/// the report is made on the host they were measured on.
fn machine(results: &[Loaded]) -> Table {
    let mut t = Table::new(&["<what", "<value", "<meaning"]);
    let mut hosts: Vec<String> = results
        .iter()
        .map(|r| {
            format!(
                "{} ({}, kernel {})",
                r.value["host"]["hostname"]
                    .as_str()
                    .unwrap_or("unknown host"),
                r.value["host"]["cpu_model"]
                    .as_str()
                    .unwrap_or("CPU not recorded"),
                r.value["host"]["kernel"].as_str().unwrap_or("?")
            )
        })
        .collect();
    hosts.dedup();
    for h in &hosts {
        t.row(vec![
            "measured on".into(),
            h.clone().into(),
            "as recorded in the results".into(),
        ]);
    }
    let here = crate::platform::host::Host::this();
    if results.iter().any(|r| r.kind == "doctor") {
        t.note(
            "the findings of `memlat doctor`, measured with the results, are in its section below",
        );
    } else if results
        .iter()
        .any(|r| r.value["host"]["machine_id"].as_str() == Some(here.machine_id.as_str()))
    {
        let cpu = crate::platform::current_cpu().unwrap_or(0);
        for f in Report::of(&Facts::gather(cpu)).findings {
            t.row(vec![f.what.into(), f.value.into(), f.meaning.into()]);
        }
        t.note("findings from `memlat doctor`, run now on the host the results were measured on");
    } else {
        t.note("made on another host than the results: run `memlat doctor` there for its findings");
    }
    t
}

/// The measurements of a result as a table: point, median, repeats.
fn points_table(value: &Value) -> Table {
    let mut t = Table::new(&["<point", "ns per load", "min", "max", "repeats"]);
    for p in compare::measurements(value) {
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

/// A curve chart of a result's measurements by size, one line per series.
fn curve_chart(title: &str, value: &Value) -> Option<Chart> {
    let found = compare::measurements(value);
    (found.len() >= 2).then(|| plot::measurements::chart(title, &[(None, &found)], None))
}

/// Every string in arrays named `warnings` or `notes`, anywhere in the result.
fn warnings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if (k == "warnings" || k == "notes")
                    && let Some(items) = v.as_array()
                {
                    out.extend(items.iter().filter_map(|i| i.as_str().map(String::from)));
                } else {
                    warnings(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| warnings(v, out)),
        _ => {}
    }
}

fn section(r: &Loaded) -> Result<Section> {
    let mut tables = Vec::new();
    let mut charts = Vec::new();
    let mut heatmaps = Vec::new();
    let mut w = Vec::new();
    if let Some(parts) = kinds::parts(&r.kind, &r.value) {
        tables = parts.tables;
        charts = parts.charts;
        heatmaps = parts.heatmaps;
        w = parts.problems;
    } else if r.kind == "sweep" {
        let sweep: SweepResult = serde_json::from_value(r.value.clone())?;
        if let Some(d) = sweep.detection.clone().or_else(|| sweep.detect()) {
            tables.push(crate::analysis::detect::levels_table(&d));
        }
        charts.extend(plot::sweep::charts(
            &sweep,
            &plot::sweep::Metric::defaults(&sweep),
            true,
        ));
    } else if r.kind == "bandwidth" {
        let points: Vec<crate::experiments::bandwidth::BandwidthPoint> =
            serde_json::from_value(r.value["points"].clone()).map_err(|e| {
                crate::error::UsageError(format!("{}: bandwidth points: {e}", r.path.display()))
            })?;
        let mut table = crate::experiments::bandwidth::table(&points);
        let kernel = r.value["isa_kernel"].as_str().unwrap_or("?");
        // A sweep's plateaus label its rows and shade its chart (older files have none).
        let sweep: Option<crate::experiments::bandwidth::SweepInfo> =
            serde_json::from_value(r.value["sweep"].clone()).ok();
        if let Some(s) = &sweep {
            table.note(s.describe());
        }
        tables.push(table);
        if !points.is_empty() {
            charts.push(plot::bandwidth::chart(
                &points,
                kernel,
                sweep.as_ref().map(|s| &s.plateaus),
            ));
        }
    } else if let Some(chart) = curve_chart(&format!("{}: ns per load", r.label), &r.value) {
        charts.push(chart);
    }
    if r.kind == "run" {
        let parts = kinds::distribution(&r.value);
        tables.extend(parts.tables);
        charts.extend(parts.charts);
        w.extend(parts.problems);
    }
    let points = points_table(&r.value);
    if !points.is_empty() {
        tables.push(points);
    }
    warnings(&r.value, &mut w);
    w.dedup();
    Ok(Section {
        title: format!("{} ({})", r.label, r.kind),
        method: method(&r.kind),
        tables,
        charts,
        heatmaps,
        warnings: w,
    })
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
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>memlat report</title><style>{STYLE}</style></head><body>\n<h1>memlat report</h1>\n<p>memlat {} &middot; {} result(s). Every figure below was measured; claims of the system (sysfs, CPUID) are marked as such.</p>\n<h2>The machine</h2>\n{}",
        env!("CARGO_PKG_VERSION"),
        sections.len(),
        machine.html()
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
        // Long tables (a sweep's every point) fold, so the plots stay in sight.
        for t in &s.tables {
            if t.rows.len() > LONG_TABLE {
                out += &format!(
                    "<details><summary>{} rows</summary>\n{}</details>\n",
                    t.rows.len(),
                    t.html()
                );
            } else {
                out += &t.html();
            }
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
    out += "</body></html>\n";
    out
}

fn markdown(machine: &Table, sections: &[Section]) -> String {
    let mut out = format!(
        "# memlat report\n\nmemlat {}, {} result(s).\n\n## The machine\n\n{}\n",
        env!("CARGO_PKG_VERSION"),
        sections.len(),
        machine.markdown()
    );
    for s in sections {
        out += &format!(
            "## {}\n\n{}\n\n",
            escape_markdown(&s.title),
            escape_markdown(s.method)
        );
        for t in &s.tables {
            out += &t.markdown();
            out.push('\n');
        }
        let plots = s.charts.len() + s.heatmaps.len();
        if plots > 0 {
            out += &format!("({plots} plot(s): see the HTML report)\n\n");
        }
        for w in &s.warnings {
            out += &format!("- warning: {}\n", escape_markdown(w));
        }
        out.push('\n');
    }
    out
}
