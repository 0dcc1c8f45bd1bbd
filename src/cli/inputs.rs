//! Reading result files back (`compare`, `report`, `merge`): any memlat
//! result JSON, older ones included, and merged files expanded into the
//! results they hold.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

use crate::analysis::compare;
use crate::error::UsageError;

/// One result read back.
#[derive(Debug)]
pub struct Loaded {
    /// How tables name it: the file name, and the host for a merged one.
    pub label: String,
    /// The file it came from.
    pub path: PathBuf,
    /// Its kind (`run`, `sweep`, ...), recorded or inferred.
    pub kind: String,
    /// The JSON; a sweep's without its points (an empty array), which are
    /// in `sweep` ([`crate::readback::Parsed`]).
    pub value: Value,
    /// A sweep, read into its struct.
    pub sweep: Option<Box<crate::experiments::sweep::SweepResult>>,
}

impl Loaded {
    /// Its measurements to compare ([`crate::readback::measurements_of`]).
    pub fn measurements(&self) -> Vec<compare::Found> {
        crate::readback::measurements_of(&self.value, self.sweep.as_deref())
    }
}

pub use crate::readback::{KINDS, kind_of};

fn stem(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Reads `paths`, expanding merged files; says on stderr when a file is
/// older than this memlat's layout. What reading a file builds is
/// counted against the bound on what reading takes before it is built,
/// its text dropped once read ([`crate::readback::parse`]).
pub fn load(paths: &[PathBuf]) -> Result<Vec<Loaded>> {
    let mut out = Vec::new();
    for path in paths {
        let text = crate::input::read_text(path).map_err(|e| UsageError(e.to_string()))?;
        let parsed = crate::readback::parse(text, path)?;
        if parsed.value["kind"] == "merged" {
            for r in parsed.results {
                let host = r.value["host"]["hostname"].as_str().unwrap_or("?");
                let file = r.value["_file"].as_str().unwrap_or("?");
                let label = format!("{}:{}", label_part(host), label_part(file));
                out.push(Loaded {
                    label,
                    path: path.clone(),
                    kind: kind_of(&r.value),
                    value: r.value,
                    sweep: r.sweep,
                });
            }
            continue;
        }
        if parsed.value.get("schema_version").is_none() {
            crate::cli::common::notice(&format!(
                "{} has no schema_version (memlat 0.1.0, or a hand-made file): read as schema 1, without host",
                path.display()
            ));
        }
        out.push(Loaded {
            label: label_part(&stem(path)),
            path: path.clone(),
            kind: kind_of(&parsed.value),
            value: parsed.value,
            sweep: parsed.sweep,
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
