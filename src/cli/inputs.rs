//! Reading result files back (`compare`, `report`, `merge`): any memlat
//! result JSON, older ones included, and merged files expanded into the
//! results they hold.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

use crate::error::UsageError;

/// One result read back.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// How tables name it: the file name, and the host for a merged one.
    pub label: String,
    /// The file it came from.
    pub path: PathBuf,
    /// Its kind (`run`, `sweep`, ...), recorded or inferred.
    pub kind: String,
    /// The JSON.
    pub value: Value,
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

pub use crate::readback::KINDS;

/// Refuses what is not a memlat result: not a JSON object, a kind memlat
/// does not write, a schema newer than this memlat's.
fn check_result(value: &Value, path: &Path) -> Result<()> {
    let refuse = |why: String| -> Result<()> {
        Err(UsageError(format!("{}: {why}", path.display())).into())
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
                if (u64::from(crate::output::OLDEST_SCHEMA)
                    ..=u64::from(crate::output::SCHEMA_VERSION))
                    .contains(&v) => {}
            _ => {
                return refuse(format!(
                    "schema_version {} is not one this memlat reads ({} to {})",
                    crate::printable::printable(&version.to_string(), 60),
                    crate::output::OLDEST_SCHEMA,
                    crate::output::SCHEMA_VERSION
                ));
            }
        }
    }
    Ok(())
}

fn stem(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Reads `paths`, expanding merged files; says on stderr when a file is
/// older than this memlat's layout. Each file's JSON tree is counted
/// against the bound on what reading takes before it is built
/// ([`crate::input::admit_tree`]), its text dropped once parsed, and a
/// merged file's results moved out of it, not copied.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Loaded>> {
    let mut out = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        let text = crate::input::read_text(path).map_err(|e| UsageError(e.to_string()))?;
        crate::input::admit_tree(&text, &name).map_err(|e| UsageError(e.to_string()))?;
        // A watch is JSON lines (`memlat watch -o FILE.jsonl`): read as one object.
        let watch = crate::experiments::watch::record::read_lines(&text)
            .transpose()
            .map_err(|e| UsageError(format!("{name}: a damaged watch file: {e}")))?;
        let mut value: Value = match watch {
            Some(value) => value,
            None => serde_json::from_str(&text).map_err(|e| {
                UsageError(format!(
                    "{name} is not a memlat result (JSON: {e}); give files written with --format json, --json or memlat merge"
                ))
            })?,
        };
        drop(text);
        check_result(&value, path)?;
        crate::readback::check(&kind_of(&value), &value, path)?;
        if value["kind"] == "merged" {
            let results = match value.get_mut("results") {
                Some(Value::Array(results)) => std::mem::take(results),
                _ => Vec::new(),
            };
            for r in results {
                let host = r["host"]["hostname"].as_str().unwrap_or("?");
                let file = r["_file"].as_str().unwrap_or("?");
                let label = format!("{}:{}", label_part(host), label_part(file));
                out.push(Loaded {
                    label,
                    path: path.clone(),
                    kind: kind_of(&r),
                    value: r,
                });
            }
            continue;
        }
        if value.get("schema_version").is_none() {
            crate::cli::common::notice(&format!(
                "{} has no schema_version (memlat 0.1.0, or a hand-made file): read as schema 1, without host",
                path.display()
            ));
        }
        out.push(Loaded {
            label: label_part(&stem(path)),
            path: path.clone(),
            kind: kind_of(&value),
            value,
        });
    }
    unique_labels(&mut out);
    Ok(out)
}

/// A part of a label (a host name, a file name) as tables and charts show
/// it: control characters escaped, at most 60 characters.
fn label_part(text: &str) -> String {
    crate::printable::printable(text, 60).into_owned()
}

/// Labels name table columns and chart series, so two results of the same
/// name (`a/run.json b/run.json`, or one file given twice) get `#2`, `#3`...
/// after the first: a CSV header that names a column twice loses one of
/// them in pandas.
fn unique_labels(loaded: &mut [Loaded]) {
    for k in 1..loaded.len() {
        let (before, rest) = loaded.split_at_mut(k);
        let this = &mut rest[0];
        let same = before.iter().filter(|l| l.label == this.label).count();
        if same > 0 {
            this.label = format!("{} #{}", this.label, same + 1);
        }
    }
}

/// Every `.json` file under `inputs` (directories searched recursively, in
/// name order, symbolic links to directories not followed: a loop would
/// repeat files or never end), and the files named.
pub fn json_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("reading {}", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            entries.sort();
            for e in entries {
                let Ok(meta) = std::fs::symlink_metadata(&e) else {
                    continue;
                };
                if meta.is_dir() {
                    out.extend(json_files(&[e])?);
                } else if meta.is_file() && e.extension().is_some_and(|x| x == "json") {
                    out.push(e);
                }
            }
        } else if input.exists() {
            out.push(input.clone());
        } else {
            return Err(
                UsageError(format!("{}: no such file or directory", input.display())).into(),
            );
        }
    }
    Ok(out)
}
