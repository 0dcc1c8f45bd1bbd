//! Typed checks for levels, assoc, linesize, numa, compare, doctor and
//! characterize:
//! each read into its result struct where the library has one (the others'
//! structs live in the command line, so the fields the presentation reads
//! are mirrored here), then the facts a number must obey checked field by
//! field. Sizes, strides and repeats are checked for range by
//! [`super::check`] for every kind.

use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::UsageError;

fn refuse(path: &Path, field: &str, why: &str) -> UsageError {
    UsageError(format!(
        "{}: {field}: {why}; give files written with --format json",
        path.display()
    ))
}

fn read<T: DeserializeOwned>(value: &Value, what: &str, path: &Path) -> Result<T, UsageError> {
    T::deserialize(value).map_err(|e| UsageError(format!("{}: {what}: {e}", path.display())))
}

/// The array `value[field]`, each item read as a `T`: a refusal names the
/// item (`levels[2]: missing field ...`).
fn read_each<T: DeserializeOwned>(
    value: &Value,
    field: &str,
    path: &Path,
) -> Result<Vec<T>, UsageError> {
    let items = value[field]
        .as_array()
        .ok_or_else(|| refuse(path, field, "not the array memlat writes there"))?;
    items
        .iter()
        .enumerate()
        .map(|(k, v)| read(v, &format!("{field}[{k}]"), path))
        .collect()
}

/// A load takes time: a latency at or below 0 ns is no measurement.
fn latency(ns: f64, path: &Path, field: &str) -> Result<(), UsageError> {
    if ns > 0.0 {
        Ok(())
    } else {
        Err(refuse(
            path,
            field,
            &format!("{ns} ns is not a latency (a load takes more than 0 ns)"),
        ))
    }
}

/// `memlat levels`: each level's summary over at least one iteration.
pub(super) fn levels(value: &Value, path: &Path) -> Result<(), UsageError> {
    let levels: Vec<crate::experiments::fixed_levels::LevelSummary> =
        read_each(value, "levels", path)?;
    for (k, l) in levels.iter().enumerate() {
        if l.iterations == 0 {
            return Err(refuse(
                path,
                &format!("levels[{k}].iterations"),
                "0: a summary is over at least one iteration",
            ));
        }
        latency(l.ns.min, path, &format!("levels[{k}].ns.min"))?;
    }
    Ok(())
}

/// `memlat assoc`: each level's lines one stride apart, its hit and miss.
pub(super) fn assoc(value: &Value, path: &Path) -> Result<(), UsageError> {
    let levels: Vec<crate::experiments::assoc::AssocLevel> = read_each(value, "levels", path)?;
    for (k, l) in levels.iter().enumerate() {
        // Lines 0 bytes apart are one line, in one set of any cache.
        if l.stride == 0 {
            return Err(refuse(
                path,
                &format!("levels[{k}].stride"),
                "0: the lines of a set lie a stride of at least one line apart",
            ));
        }
        // A set holds at least one line.
        if l.ways == Some(0) {
            return Err(refuse(
                path,
                &format!("levels[{k}].ways"),
                "0: a set holds at least one line",
            ));
        }
        latency(l.hit_ns, path, &format!("levels[{k}].hit_ns"))?;
        latency(l.miss_ns, path, &format!("levels[{k}].miss_ns"))?;
    }
    Ok(())
}

/// The fields of `memlat linesize --format json` that its headline reads.
#[derive(Deserialize)]
struct Linesize {
    line_bytes: Option<u64>,
    fetch_bytes: Option<u64>,
    agree: bool,
    claimed_line_bytes: u64,
}

#[derive(Deserialize)]
struct LinesizeReading {
    line_bytes: Option<u64>,
    fetch_bytes: Option<u64>,
    lone_ns: f64,
}

/// `memlat linesize`: the line and the unit fetched, at least one pass.
pub(super) fn linesize(value: &Value, path: &Path) -> Result<(), UsageError> {
    let r: Linesize = read(value, "linesize", path)?;
    let readings: Vec<LinesizeReading> = read_each(value, "readings", path)?;
    if readings.is_empty() {
        return Err(refuse(
            path,
            "readings",
            "empty: a result holds each pass's reading, at least one",
        ));
    }
    let mut lines = vec![
        ("line_bytes".to_string(), r.line_bytes),
        ("fetch_bytes".to_string(), r.fetch_bytes),
        ("claimed_line_bytes".to_string(), Some(r.claimed_line_bytes)),
    ];
    for (k, p) in readings.iter().enumerate() {
        lines.push((format!("readings[{k}].line_bytes"), p.line_bytes));
        lines.push((format!("readings[{k}].fetch_bytes"), p.fetch_bytes));
        latency(p.lone_ns, path, &format!("readings[{k}].lone_ns"))?;
    }
    // A line of 0 bytes holds nothing: a reading is at least one byte.
    if let Some((field, _)) = lines.iter().find(|(_, b)| *b == Some(0)) {
        return Err(refuse(path, field, "0 bytes is no line"));
    }
    // Passes that agree read one line, the file's.
    if r.agree && r.line_bytes.is_none() {
        return Err(refuse(
            path,
            "line_bytes",
            "null while `agree` says every pass read the same line",
        ));
    }
    Ok(())
}

/// `memlat numa`: a square of rows (one per CPU's node) by columns (one per
/// memory node), each cell a latency or null.
pub(super) fn numa(value: &Value, path: &Path) -> Result<(), UsageError> {
    // Field by field, so that a refusal names the field.
    for field in ["nodes", "from_nodes", "cpus"] {
        read::<Vec<usize>>(&value[field], field, path)?;
    }
    read_each::<Vec<Option<f64>>>(value, "matrix_ns", path)?;
    let r: crate::experiments::numa::NumaResult = read(value, "numa", path)?;
    if r.from_nodes.len() != r.matrix_ns.len() || r.cpus.len() != r.matrix_ns.len() {
        return Err(refuse(
            path,
            "matrix_ns",
            &format!(
                "{} rows for {} from_nodes and {} cpus: one row per node a thread ran on",
                r.matrix_ns.len(),
                r.from_nodes.len(),
                r.cpus.len()
            ),
        ));
    }
    for (i, row) in r.matrix_ns.iter().enumerate() {
        if row.len() != r.nodes.len() {
            return Err(refuse(
                path,
                &format!("matrix_ns[{i}]"),
                &format!(
                    "{} cells for {} nodes: one per memory node",
                    row.len(),
                    r.nodes.len()
                ),
            ));
        }
        for (j, ns) in row.iter().enumerate() {
            if let Some(ns) = ns {
                latency(*ns, path, &format!("matrix_ns[{i}][{j}]"))?;
            }
        }
    }
    Ok(())
}

/// `memlat compare --format json`: the labels, the conditions and the
/// rows, of latency or (with `matched_by`) of bandwidth; two watches'
/// summaries where it compared watches.
pub(super) fn compare(value: &Value, path: &Path) -> Result<(), UsageError> {
    read::<Vec<String>>(&value["results"], "results", path)?;
    if value.get("summaries").is_some() {
        read::<Vec<crate::experiments::watch::WatchSummary>>(
            &value["summaries"],
            "summaries",
            path,
        )?;
    }
    read_each::<crate::analysis::compare::Condition>(value, "conditions", path)?;
    if value["matched_by"].is_null() {
        read_each::<crate::analysis::compare::Row>(value, "rows", path)?;
    } else {
        read::<crate::analysis::compare_bandwidth::MatchBy>(
            &value["matched_by"],
            "matched_by",
            path,
        )?;
        read_each::<crate::analysis::compare_bandwidth::BandwidthRow>(value, "rows", path)?;
    }
    Ok(())
}

/// `memlat doctor`: a whole CPU number and findings of three strings each.
pub(super) fn doctor(value: &Value, path: &Path) -> Result<(), UsageError> {
    read::<u64>(&value["cpu"], "cpu", path)?;
    read_each::<crate::experiments::doctor::findings::Finding>(value, "findings", path)?;
    Ok(())
}

/// How a characterize stage ended (its command's `Status`, lowercase):
/// read to refuse any other word.
#[derive(Deserialize)]
#[allow(dead_code)]
#[serde(rename_all = "lowercase")]
enum Status {
    Done,
    Failed,
    Skipped,
    Interrupted,
}

/// The fields of a characterize stage that its table shows.
#[derive(Deserialize)]
struct Stage {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    status: Status,
    seconds: f64,
    file: Option<String>,
    #[allow(dead_code)]
    why: Option<String>,
}

/// `memlat characterize`: each stage's name, status, time and file.
pub(super) fn characterize(value: &Value, path: &Path) -> Result<(), UsageError> {
    let stages: Vec<Stage> = read_each(value, "stages", path)?;
    for (k, s) in stages.iter().enumerate() {
        // Wall time runs forward: a stage takes 0 seconds or more.
        if s.seconds < 0.0 {
            return Err(refuse(
                path,
                &format!("stages[{k}].seconds"),
                &format!("{} is not a duration (0 or more seconds)", s.seconds),
            ));
        }
        // A stage's file lies in the characterize directory, by a relative name.
        if let Some(file) = &s.file
            && (file.is_empty()
                || Path::new(file).is_absolute()
                || Path::new(file)
                    .components()
                    .any(|c| c == std::path::Component::ParentDir))
        {
            return Err(refuse(
                path,
                &format!("stages[{k}].file"),
                &format!("\"{file}\" is not a file name within the directory"),
            ));
        }
    }
    Ok(())
}

/// `memlat watch`: its header, intervals and summary; a summary, where one
/// was written, the one its intervals give (a summary edited to say 12345
/// ns where every interval says 1.7 is refused, not shown).
pub(super) fn watch(value: &Value, path: &Path) -> Result<(), UsageError> {
    let file: crate::experiments::watch::WatchFile = read(value, "watch", path)?;
    let Some(written) = &file.summary else {
        return Ok(());
    };
    if written.intervals != file.intervals.len() {
        return Err(refuse(
            path,
            "summary.intervals",
            &format!(
                "{} while the file holds {} intervals",
                written.intervals,
                file.intervals.len()
            ),
        ));
    }
    let given = crate::experiments::watch::record::summarise(
        &file.header,
        &file.intervals,
        written.wall_s,
        written.cpu_s,
        written.interrupted,
    );
    if written.series.len() != given.series.len() {
        return Err(refuse(
            path,
            "summary.series",
            &format!(
                "{} series while its plan and intervals give {}",
                written.series.len(),
                given.series.len()
            ),
        ));
    }
    // Both are the same function of the same figures (written exactly):
    // they agree to rounding.
    let same =
        |a: f64, b: f64| (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    for (k, (w, g)) in written.series.iter().zip(&given.series).enumerate() {
        for (name, a, b) in [
            ("median", w.median, g.median),
            ("p5", w.p5, g.p5),
            ("p95", w.p95, g.p95),
            ("readings", w.readings as f64, g.readings as f64),
        ] {
            if !same(a, b) {
                return Err(refuse(
                    path,
                    &format!("summary.series[{k}].{name}"),
                    &format!("{a} {} while its intervals give {b}", w.unit),
                ));
            }
        }
    }
    Ok(())
}
