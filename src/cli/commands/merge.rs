//! `memlat merge`: results of one kind from many hosts in one table (one
//! row per host and point; for bandwidth, per host, size and thread count).

use anyhow::Result;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::analysis::compare_bandwidth as bw;
use crate::cli::MergeArgs;
use crate::cli::files::Output;
use crate::cli::inputs::{self, Loaded};
use crate::error::usage;
use crate::output::table::{Cell, Table};

/// Runs `memlat merge`.
pub fn run(args: &MergeArgs) -> Result<()> {
    let files = inputs::json_files(&args.inputs)?;
    if files.is_empty() {
        return usage("no .json files in the inputs given");
    }
    crate::cli::files::check_inputs_and_outputs(&files, args.output.as_deref(), None)?;
    let mut results = inputs::load(&files)?;
    if let Some(kind) = &args.kind {
        results.retain(|r| &r.kind == kind);
    }
    let mut kinds: Vec<&str> = results.iter().map(|r| r.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    match kinds.as_slice() {
        [] => return usage("no results of that --kind in the inputs"),
        [_] => {}
        many => {
            return usage(format!(
                "the inputs hold results of several kinds ({}): choose one with --kind",
                many.join(", ")
            ));
        }
    }
    let kind = kinds[0].to_string();
    let json_out = args
        .output
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "json"));
    let output = Output::create(args.output.as_deref())?;
    let notice = format!(
        "merged {} {kind} result(s) from {} host(s)",
        results.len(),
        hosts(&results)
    );
    let content = if json_out {
        let merged = Merged {
            of_kind: &kind,
            results: results.iter().map(MergedResult).collect(),
        };
        // Pretty-printed, a compact sweep grows by about 1.7 times.
        let read: u64 = files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        let expected = usize::try_from(read.saturating_mul(2)).unwrap_or(usize::MAX);
        crate::output::result_json_of("merged", &merged, &["of_kind", "results"], expected)?
    } else if kind == "bandwidth" {
        bandwidth_table(&results).csv()
    } else {
        table(&results).csv()
    };
    crate::cli::common::notice(&notice);
    output.write(&content)
}

fn hosts(results: &[Loaded]) -> usize {
    let mut ids: Vec<String> = results
        .iter()
        .map(|r| host_field(r, "machine_id"))
        .collect();
    ids.sort();
    ids.dedup();
    ids.len()
}

fn host_field(r: &Loaded, field: &str) -> String {
    r.value["host"][field]
        .as_str()
        .unwrap_or("unknown")
        .to_string()
}

/// A merged file: every result as it was read, with the file it came
/// from; written from the results as they are held, never copied into one
/// JSON tree.
#[derive(Serialize)]
struct Merged<'a> {
    of_kind: &'a str,
    results: Vec<MergedResult<'a>>,
}

/// One result of a merged file: its JSON's fields in order, `_file` first,
/// a sweep's points from their structs.
struct MergedResult<'a>(&'a Loaded);

impl Serialize for MergedResult<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(fields) = &self.0.value else {
            return self.0.value.serialize(s);
        };
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("_file", &self.0.path.display().to_string())?;
        for (key, value) in fields {
            match (key.as_str(), &self.0.sweep) {
                ("_file", _) => {}
                ("points", Some(sweep)) => map.serialize_entry(key, &sweep.points)?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// One row per host and point.
fn table(results: &[Loaded]) -> Table {
    let mut t = Table::new(&[
        "hostname",
        "cpu_model",
        "kernel",
        "machine_id",
        "file",
        "kind",
        "point",
        "series",
        "size_bytes",
        "ns_median",
        "repeats",
    ]);
    for r in results {
        for p in r.measurements() {
            t.row(vec![
                host_field(r, "hostname").into(),
                host_field(r, "cpu_model").into(),
                host_field(r, "kernel").into(),
                host_field(r, "machine_id").into(),
                r.path.display().to_string().into(),
                r.kind.clone().into(),
                p.key.clone().into(),
                p.series.clone().into(),
                p.size.into(),
                Cell::float(p.median, 3),
                (p.samples.len() as u64).into(),
            ]);
        }
    }
    t
}

/// One row per host, size and thread count of bandwidth results.
fn bandwidth_table(results: &[Loaded]) -> Table {
    let mut header = vec![
        "hostname",
        "cpu_model",
        "kernel",
        "machine_id",
        "file",
        "kind",
        "isa_kernel",
        "level",
        "size_bytes",
        "threads",
    ];
    header.extend(bw::OPS.iter().map(|(field, _, _)| *field));
    let mut t = Table::new(&header);
    for r in results {
        for p in bw::points(&r.value) {
            let mut cells: Vec<Cell> = vec![
                host_field(r, "hostname").into(),
                host_field(r, "cpu_model").into(),
                host_field(r, "kernel").into(),
                host_field(r, "machine_id").into(),
                r.path.display().to_string().into(),
                r.kind.clone().into(),
                r.value["isa_kernel"]
                    .as_str()
                    .unwrap_or("-")
                    .to_string()
                    .into(),
                p.level.clone().into(),
                p.size.into(),
                (p.threads as u64).into(),
            ];
            cells.extend(p.figures.iter().map(|f| Cell::opt(f.map(|f| f.median), 2)));
            t.row(cells);
        }
    }
    t
}
