//! The checks every reader of a result file applies, so `compare`, `merge`,
//! `report`, `detect`, `plot`, `sweep --resume` and `--plateaus FILE` give
//! one verdict on one file: a memlat kind, a schema this memlat reads, the
//! kind's typed shape (`shapes` for the kinds whose structs only the command
//! line has), and values in range (sizes within [`crate::limits`], strides
//! and repeats positive, bandwidths possible).
//! A refusal names the file and the field; callers make it exit 2.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::UsageError;
use crate::limits;

mod shapes;
mod split;

pub use split::{Parsed, condition_view, measurements_of};

/// One result file's `text` (read from `path`), checked: a watch's JSON
/// lines read as one object, any other text as one JSON document; then
/// what every reader asks of it ([`check`]). A sweep's points are read
/// into their structs and a merged file's results one by one, each from
/// its slice of the text, never the whole file into one JSON tree
/// (`split` says why); the text is dropped once read. A refusal names the
/// file, and the field where there is one; strings from the file in it
/// are escaped and cut.
pub fn parse(text: String, path: &Path) -> Result<Parsed, UsageError> {
    // A refusal may quote the file (serde quotes a value of the wrong
    // type whole): escaped and cut here, once, for every reader.
    parse_unbounded(text, path).map_err(|e| {
        UsageError(crate::printable::printable(&e.0, crate::printable::MESSAGE_CHARS).into_owned())
    })
}

fn parse_unbounded(text: String, path: &Path) -> Result<Parsed, UsageError> {
    if !watch_header(&text) {
        return split::file(&text, path);
    }
    crate::input::admit_tree(&text, &path.display().to_string())
        .map_err(|e| UsageError(e.to_string()))?;
    let value = crate::experiments::watch::record::read_lines(&text)
        .transpose()
        .map_err(|e| UsageError(format!("{}: a damaged watch file: {e}", path.display())))?
        .unwrap_or(Value::Null);
    drop(text);
    result(&value, path)?;
    check(&kind_of(&value), &value, path)?;
    Ok(Parsed {
        value,
        sweep: None,
        results: Vec::new(),
    })
}

/// Whether `text` starts with a watch's header line, told without a tree
/// of that line (a sweep written on one line is all first line).
fn watch_header(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Header {
        kind: Option<String>,
        record: Option<String>,
    }
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    serde_json::from_str::<Header>(first)
        .is_ok_and(|h| h.kind.as_deref() == Some("watch") && h.record.as_deref() == Some("header"))
}

/// The most GB/s a figure may claim: a core's L1 serves at most about
/// three 64-byte loads a cycle (about 1.2 TB/s at 6 GHz), and no machine
/// has a thousand such cores, so 10^6 GB/s (1 PB/s) is past any real one.
pub const MAX_GB_PER_S: f64 = 1e6;

/// Checks the result `value` of `kind` read from `path` (a merged file's
/// results each by their own kind).
pub fn check(kind: &str, value: &Value, path: &Path) -> Result<(), UsageError> {
    let refuse =
        |field: &str, why: String| UsageError(format!("{}: {field}: {why}", path.display()));
    let Some(known) = Kind::parse(kind) else {
        if value.get("kind").is_none() {
            return Err(UsageError(format!(
                "{}: not a memlat result (no `kind`, and not the shape of a memlat 0.1.0 sweep, run or quick table); give files written with --format json, --json or memlat merge",
                path.display()
            )));
        }
        return Err(refuse(
            "kind",
            format!(
                "{} is not a memlat result kind ({}); give files written with --format json, --json or memlat merge",
                crate::printable::quoted(kind, 60),
                KINDS.join(", ")
            ),
        ));
    };
    envelope(value, path)?;
    match known {
        Kind::Sweep => {
            crate::experiments::sweep::SweepResult::check(value, path)
                .map_err(|e| UsageError(format!("{e:#}")))?;
        }
        Kind::Run => typed::<crate::engine::Measurement>(value, kind, path)?,
        Kind::Bandwidth => typed::<Vec<crate::experiments::bandwidth::BandwidthPoint>>(
            &value["points"],
            "bandwidth points",
            path,
        )?,
        Kind::Mlp => {
            typed::<Vec<crate::experiments::mlp::MlpLevel>>(&value["levels"], "mlp levels", path)?
        }
        Kind::Tlb => typed::<Vec<crate::experiments::tlb::TlbPageResult>>(
            &value["page_bytes"],
            "tlb page_bytes",
            path,
        )?,
        Kind::Loaded => typed::<crate::experiments::loaded::LoadedResult>(value, kind, path)?,
        Kind::C2c => typed::<Vec<crate::experiments::c2c::C2cMatrix>>(
            &value["methods"],
            "c2c methods",
            path,
        )?,
        Kind::Merged => {
            let Some(results) = value["results"].as_array() else {
                return Err(refuse(
                    "results",
                    "a merged file holds an array of results".into(),
                ));
            };
            for (k, r) in results.iter().enumerate() {
                let inner = r["kind"].as_str().unwrap_or("");
                if inner == "merged" || Kind::parse(inner).is_none() {
                    return Err(refuse(
                        &format!("results[{k}].kind"),
                        format!(
                            "{} is not a kind a merged file holds",
                            crate::printable::printable(&r["kind"].to_string(), 60)
                        ),
                    ));
                }
                check(inner, r, path)?;
            }
        }
        Kind::Compare => {
            if !value["rows"].is_array() || !value["results"].is_array() {
                return Err(refuse(
                    "rows",
                    "a compare result holds results and rows (arrays)".into(),
                ));
            }
            shapes::compare(value, path)?;
        }
        Kind::Detect => typed::<crate::analysis::detect::Detection>(value, "detect", path)?,
        Kind::Loaduse => {
            typed::<crate::experiments::loaduse::report::LoaduseResult>(value, "loaduse", path)?
        }
        Kind::Quick => {
            typed::<Vec<crate::engine::Measurement>>(&value["points"], "quick points", path)?
        }
        // JSON lines read back as one object (`watch::record::read_lines`).
        Kind::Watch => shapes::watch(value, path)?,
        Kind::Levels => shapes::levels(value, path)?,
        Kind::Assoc => shapes::assoc(value, path)?,
        Kind::Linesize => shapes::linesize(value, path)?,
        Kind::Numa => shapes::numa(value, path)?,
        Kind::Doctor => shapes::doctor(value, path)?,
        Kind::Characterize => shapes::characterize(value, path)?,
    }
    ranges(value, "", path)?;
    crate::limits::figures::check(value)
        .map_err(|(field, why)| UsageError(format!("{}: {field}: {why}", path.display())))
}

/// What every result holds, a merged file's results too: a known schema
/// (a whole number, this memlat's or older) and a host that is an object.
fn envelope(value: &Value, path: &Path) -> Result<(), UsageError> {
    let refuse =
        |field: &str, why: String| Err(UsageError(format!("{}: {field}: {why}", path.display())));
    if let Some(version) = value.get("schema_version") {
        let known = u64::from(crate::experiments::schema::OLDEST_SCHEMA)
            ..=u64::from(crate::experiments::schema::SCHEMA_VERSION);
        if !version.as_u64().is_some_and(|v| known.contains(&v)) {
            return refuse(
                "schema_version",
                format!(
                    "{} is not one this memlat reads ({} to {})",
                    crate::printable::printable(&version.to_string(), 40),
                    known.start(),
                    known.end()
                ),
            );
        }
    }
    match value.get("host") {
        None | Some(Value::Null | Value::Object(_)) => Ok(()),
        Some(other) => refuse(
            "host",
            format!(
                "{} is not a host (an object of hostname, cpu_model, kernel)",
                crate::printable::printable(&other.to_string(), 40)
            ),
        ),
    }
}

/// The kind a result records, or the one its shape shows (memlat 0.1.0's
/// files record none).
pub fn kind_of(value: &Value) -> String {
    if let Some(kind) = value["kind"].as_str() {
        return kind.to_string();
    }
    let has = |k: &str| value.get(k).is_some();
    if has("config") && has("points") {
        "sweep".into()
    } else if has("samples") && has("size") {
        "run".into()
    } else if has("points") && has("sysfs_caches") {
        "quick".into()
    } else if has("levels") {
        "levels".into()
    } else {
        "unknown".into()
    }
}

/// Refuses what is not a memlat result: not a JSON object, a kind memlat
/// does not write, a schema newer than this memlat's.
fn result(value: &Value, path: &Path) -> Result<(), UsageError> {
    let refuse = |why: String| -> Result<(), UsageError> {
        Err(UsageError(format!("{}: {why}", path.display())))
    };
    if !value.is_object() {
        return refuse("not a memlat result (a JSON object is expected); give files written with --format json, --json or memlat merge".into());
    }
    if let Some(kind) = value.get("kind") {
        match kind.as_str() {
            Some(k) if KINDS.contains(&k) => {}
            _ => {
                return refuse(format!(
                    "kind {} is not one memlat writes ({})",
                    crate::printable::printable(&kind.to_string(), 60),
                    KINDS.join(", ")
                ));
            }
        }
    }
    if let Some(version) = value.get("schema_version") {
        match version.as_u64() {
            Some(v)
                if (u64::from(crate::experiments::schema::OLDEST_SCHEMA)
                    ..=u64::from(crate::experiments::schema::SCHEMA_VERSION))
                    .contains(&v) => {}
            _ => {
                return refuse(format!(
                    "schema_version {} is not one this memlat reads ({} to {})",
                    crate::printable::printable(&version.to_string(), 60),
                    crate::experiments::schema::OLDEST_SCHEMA,
                    crate::experiments::schema::SCHEMA_VERSION
                ));
            }
        }
    }
    Ok(())
}

/// Every kind of result memlat writes, and so reads back. A `match` on it
/// (no wildcard) is how readers and the report's presentation say what
/// each kind needs: a new kind does not compile until both know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Kind {
    Run,
    Quick,
    Sweep,
    Levels,
    Detect,
    Assoc,
    Linesize,
    Loaduse,
    Mlp,
    Loaded,
    C2c,
    Numa,
    Tlb,
    Doctor,
    Bandwidth,
    Characterize,
    Merged,
    Compare,
    Watch,
}

impl Kind {
    /// Every kind, in the order memlat lists them.
    pub const ALL: [Kind; 19] = [
        Kind::Run,
        Kind::Quick,
        Kind::Sweep,
        Kind::Levels,
        Kind::Detect,
        Kind::Assoc,
        Kind::Linesize,
        Kind::Loaduse,
        Kind::Mlp,
        Kind::Loaded,
        Kind::C2c,
        Kind::Numa,
        Kind::Tlb,
        Kind::Doctor,
        Kind::Bandwidth,
        Kind::Characterize,
        Kind::Merged,
        Kind::Compare,
        Kind::Watch,
    ];

    /// The `kind` field's value.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Quick => "quick",
            Kind::Sweep => "sweep",
            Kind::Levels => "levels",
            Kind::Detect => "detect",
            Kind::Assoc => "assoc",
            Kind::Linesize => "linesize",
            Kind::Loaduse => "loaduse",
            Kind::Mlp => "mlp",
            Kind::Loaded => "loaded",
            Kind::C2c => "c2c",
            Kind::Numa => "numa",
            Kind::Tlb => "tlb",
            Kind::Doctor => "doctor",
            Kind::Bandwidth => "bandwidth",
            Kind::Characterize => "characterize",
            Kind::Merged => "merged",
            Kind::Compare => "compare",
            Kind::Watch => "watch",
        }
    }

    /// The kind named `name`, if memlat writes one.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The kinds' names, as [`Kind::ALL`].
pub const KINDS: [&str; 19] = {
    let mut names = [""; 19];
    let mut k = 0;
    while k < 19 {
        names[k] = Kind::ALL[k].name();
        k += 1;
    }
    names
};

/// `value` read as a `T`, or a refusal naming `what`.
fn typed<T: DeserializeOwned>(value: &Value, what: &str, path: &Path) -> Result<(), UsageError> {
    T::deserialize(value)
        .map(|_| ())
        .map_err(|e| UsageError(format!("{}: {what}: {e}", path.display())))
}

/// Every field named as a size, stride, repeat count or bandwidth, anywhere
/// in `value`, within its range (`at` is the path so far, for the message).
fn ranges(value: &Value, at: &str, path: &Path) -> Result<(), UsageError> {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let here = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                if let Value::Number(n) = v {
                    field(key, n, &here, path)?;
                } else {
                    ranges(v, &here, path)?;
                }
            }
        }
        Value::Array(items) => {
            for (k, v) in items.iter().enumerate() {
                ranges(v, &format!("{at}[{k}]"), path)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn field(key: &str, n: &serde_json::Number, here: &str, path: &Path) -> Result<(), UsageError> {
    let origin = || limits::Origin::Field {
        file: path.to_path_buf(),
        field: here.to_string(),
    };
    let whole = |what: &str| {
        n.as_u64().ok_or_else(|| {
            UsageError(format!(
                "{}: {here}: {n} is not a {what} (a whole number of at least 0 is expected)",
                path.display()
            ))
        })
    };
    match key {
        // Random chains record stride 0 (no stride); a stride chain's own
        // stride is checked as a flag is, by its kind's typed check.
        "size" | "size_bytes" | "page_bytes" | "from_bytes" | "to_bytes" | "stride" => {
            let (what, prefix) = if key == "stride" {
                ("stride in bytes", "a stride of ")
            } else {
                ("size in bytes", "")
            };
            let bytes = whole(what)?;
            if bytes > limits::MAX_SIZE {
                return Err(UsageError(format!(
                    "{}: {here}: {prefix}{bytes} bytes is more than memlat measures ({} at most)",
                    path.display(),
                    limits::MAX_SIZE
                )));
            }
        }
        "repeats" => {
            let count = whole("repeat count")?;
            let count = u32::try_from(count).unwrap_or(u32::MAX);
            limits::repeats(count, origin()).map_err(|e| UsageError(e.to_string()))?;
        }
        k if k.ends_with("_gb_per_s") => {
            let gb = n.as_f64().unwrap_or(f64::NAN);
            if !(0.0..=MAX_GB_PER_S).contains(&gb) {
                return Err(UsageError(format!(
                    "{}: {here}: {n} GB/s is not a bandwidth a machine reaches (0 to {MAX_GB_PER_S})",
                    path.display()
                )));
            }
        }
        _ => {}
    }
    Ok(())
}
