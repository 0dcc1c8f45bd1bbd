//! A result's text read without a JSON tree of its bulk. A tree
//! (`serde_json::Value`) takes about four times its text: a 234 MiB sweep
//! held as one took 1.9 GB, and readers that copied it 3.4 GB. So a
//! sweep's points, nearly all of a large sweep's bytes, are read straight
//! into their structs (about as much as their text, a quarter of a tree:
//! a 231 MiB sweep held 221 MiB of them), and its other fields, a few
//! KiB, into a tree; a merged file's results are read one by one from
//! slices of its text, each the same way. Every other kind is a tree whose
//! cost is counted against the bound before it is built
//! ([`crate::input::admit_tree`]), so a file too costly for one is refused
//! naming `--max-input`, not read into all the memory there is.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::analysis::compare;
use crate::chain::Pattern;
use crate::engine::Measurement;
use crate::error::UsageError;
use crate::experiments::sweep::{SeriesKey, SweepResult};

/// One result read back.
#[derive(Debug)]
pub struct Parsed {
    /// The result's JSON, all of it but: for a sweep, its points (an empty
    /// array in their place, the points are in `sweep`); for a merged
    /// file, its results (an empty array, the results are in `results`).
    pub value: Value,
    /// A sweep, read into its struct, every point in it.
    pub sweep: Option<Box<SweepResult>>,
    /// A merged file's results, in order.
    pub results: Vec<Parsed>,
}

/// `text`, a whole file (`path`) that is not JSON lines, read and checked
/// as [`super::parse`] says.
pub(super) fn file(text: &str, path: &Path) -> Result<Parsed, UsageError> {
    let Some(fields) = fields(text, path)? else {
        return Err(UsageError(format!(
            "{}: not a memlat result (a JSON object is expected); give files written with --format json, --json or memlat merge",
            path.display()
        )));
    };
    match kind(&fields)? {
        Some(Shape::Sweep) => sweep(text, &fields, path),
        Some(Shape::Merged) => merged(&fields, path),
        None => {
            drop(fields);
            tree(text, path)
        }
    }
}

/// Which results are not read as one tree.
enum Shape {
    Sweep,
    Merged,
}

/// The object's fields as slices of `text`, or `None` when the text is
/// JSON but not an object (a refusal when it is not JSON).
fn fields<'a>(
    text: &'a str,
    path: &Path,
) -> Result<Option<BTreeMap<String, &'a RawValue>>, UsageError> {
    match serde_json::from_str(text) {
        Ok(fields) => Ok(Some(fields)),
        Err(e) if e.is_data() => Ok(None),
        Err(e) => Err(UsageError(format!(
            "{} is not a memlat result (JSON: {e}); give files written with --format json, --json or memlat merge",
            path.display()
        ))),
    }
}

/// A sweep (its `kind`, or for memlat 0.1.0's files its shape, as
/// [`super::kind_of`] tells it) or a merged file; `None` for the rest.
fn kind(fields: &BTreeMap<String, &RawValue>) -> Result<Option<Shape>, UsageError> {
    let kind: Option<String> = fields
        .get("kind")
        .and_then(|raw| serde_json::from_str(raw.get()).ok());
    Ok(match kind.as_deref() {
        Some("sweep") => Some(Shape::Sweep),
        Some("merged") => Some(Shape::Merged),
        None if !fields.contains_key("kind")
            && fields.contains_key("config")
            && fields.contains_key("points") =>
        {
            Some(Shape::Sweep)
        }
        _ => None,
    })
}

/// A JSON tree of `text`, its cost counted first; checked.
fn tree(text: &str, path: &Path) -> Result<Parsed, UsageError> {
    crate::input::admit_tree(text, &path.display().to_string())
        .map_err(|e| UsageError(e.to_string()))?;
    let value: Value = serde_json::from_str(text).map_err(|e| {
        UsageError(format!(
            "{} is not a memlat result (JSON: {e}); give files written with --format json, --json or memlat merge",
            path.display()
        ))
    })?;
    super::result(&value, path)?;
    super::check(&super::kind_of(&value), &value, path)?;
    Ok(Parsed {
        value,
        sweep: None,
        results: Vec::new(),
    })
}

/// The fields but `skip` as one tree (their cost counted), `skip` an empty array.
fn small_fields(
    fields: &BTreeMap<String, &RawValue>,
    skip: &str,
    path: &Path,
) -> Result<Value, UsageError> {
    let mut map = serde_json::Map::new();
    for (key, raw) in fields {
        if key == skip {
            map.insert(key.clone(), Value::Array(Vec::new()));
            continue;
        }
        crate::input::admit_tree(raw.get(), &path.display().to_string())
            .map_err(|e| UsageError(e.to_string()))?;
        // Slices of text that parsed as JSON parse again.
        let value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
        map.insert(key.clone(), value);
    }
    Ok(Value::Object(map))
}

/// A sweep: its points into their structs, streamed from the text with
/// every figure checked ([`SweepResult::parse`]); the rest into a tree,
/// checked as any result is, then each point's tree, one at a time, for
/// the ranges every reader applies.
fn sweep(
    text: &str,
    fields: &BTreeMap<String, &RawValue>,
    path: &Path,
) -> Result<Parsed, UsageError> {
    let value = small_fields(fields, "points", path)?;
    super::result(&value, path)?;
    let sweep = SweepResult::parse(text, path).map_err(|e| UsageError(format!("{e:#}")))?;
    super::check("sweep", &value, path)?;
    if let Some(raw) = fields.get("points") {
        // The typed read above took them as an array.
        let points: Vec<&RawValue> = serde_json::from_str(raw.get()).unwrap_or_default();
        for (k, point) in points.iter().enumerate() {
            let point: Value = serde_json::from_str(point.get()).unwrap_or(Value::Null);
            super::ranges(&point, &format!("points[{k}]"), path)?;
        }
    }
    Ok(Parsed {
        value,
        sweep: Some(Box::new(sweep)),
        results: Vec::new(),
    })
}

/// A merged file: its own fields checked as a merged result with no
/// results, then each result from its slice of the text, as a file is.
fn merged(fields: &BTreeMap<String, &RawValue>, path: &Path) -> Result<Parsed, UsageError> {
    let value = small_fields(fields, "results", path)?;
    super::result(&value, path)?;
    let refuse =
        |field: &str, why: String| UsageError(format!("{}: {field}: {why}", path.display()));
    let items: Vec<&RawValue> = fields
        .get("results")
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .ok_or_else(|| refuse("results", "a merged file holds an array of results".into()))?;
    super::check("merged", &value, path)?;
    let mut results = Vec::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        let inner: Option<BTreeMap<String, &RawValue>> = serde_json::from_str(item.get()).ok();
        let kind: Option<String> = inner
            .as_ref()
            .and_then(|f| f.get("kind"))
            .and_then(|raw| serde_json::from_str(raw.get()).ok());
        let known = kind
            .as_deref()
            .and_then(super::Kind::parse)
            .is_some_and(|k| k != super::Kind::Merged);
        if !known {
            let shown = inner
                .as_ref()
                .and_then(|f| f.get("kind"))
                .map_or("null", |raw| raw.get());
            return Err(refuse(
                &format!("results[{k}].kind"),
                format!(
                    "{} is not a kind a merged file holds",
                    crate::printable::printable(shown, 60)
                ),
            ));
        }
        drop(inner);
        results.push(file(item.get(), path)?);
    }
    Ok(Parsed {
        value,
        sweep: None,
        results,
    })
}

/// [`compare::measurements`] of a result that may be a sweep read into its
/// struct (`value` then holds its other fields, [`Parsed`]): the same
/// measurements in the same order, the points read from their structs.
pub fn measurements_of(value: &Value, sweep: Option<&SweepResult>) -> Vec<compare::Found> {
    let Some(sweep) = sweep else {
        return compare::measurements(value);
    };
    let samples = |m: &Measurement| m.samples.iter().map(|s| s.ns_per_load).collect();
    let random: Vec<(u64, Vec<f64>)> = sweep
        .points
        .iter()
        .filter(|m| m.pattern == Pattern::Random)
        .map(|m| (m.size, samples(m)))
        .collect();
    let mut out = compare::pooled(&value["detection"]["levels"], &random);
    drop(random);
    let Value::Object(map) = value else {
        return out;
    };
    // A name at the top labels every measurement under it, as in the tree.
    let label = map.get("name").and_then(Value::as_str);
    let prefix = label.map_or(String::new(), |l| format!("{l} "));
    for (key, child) in map {
        if key == "points" {
            out.extend(sweep.points.iter().map(|m| {
                let line = format!("{prefix}{}", SeriesKey::of(m).label());
                compare::point(line, m.size, samples(m), m.ns_per_load.median)
            }));
        } else if key != "detection" && key != "sysfs_caches" {
            compare::collect(child, label, &mut out);
        }
    }
    out
}

/// `value` as [`compare::conditions`] reads it: a sweep read into its
/// struct gets its first point back (conditions stated per point are read
/// from the first), the rest of its points left out.
pub fn condition_view<'a>(value: &'a Value, sweep: Option<&SweepResult>) -> Cow<'a, Value> {
    match (sweep.and_then(|s| s.points.first()), value) {
        (Some(first), Value::Object(map)) => {
            let mut map = map.clone();
            let first = serde_json::to_value(first).unwrap_or(Value::Null);
            map.insert("points".into(), Value::Array(vec![first]));
            Cow::Owned(Value::Object(map))
        }
        _ => Cow::Borrowed(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sweep_read_into_its_struct_gives_what_its_tree_gives() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let tree: Value = serde_json::from_str(&text).unwrap();
        let read = super::super::parse(text, &path).unwrap();
        let sweep = read.sweep.as_deref();
        assert_eq!(read.value["points"], json!([]));
        let found = measurements_of(&read.value, sweep);
        assert!(found.len() > 80 && found[0].key.starts_with("level "));
        assert_eq!(found, compare::measurements(&tree));
        let view = condition_view(&read.value, sweep);
        assert_eq!(compare::conditions(&[view]), compare::conditions(&[&tree]));
    }
}
