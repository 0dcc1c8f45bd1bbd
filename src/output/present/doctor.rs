//! doctor's findings and characterize's stages: tables of the objects the
//! JSON holds, one row each.

use serde_json::Value;

use crate::output::document::Document;
use crate::output::table::{Cell, Table};

/// doctor's findings: what, value, meaning.
pub(super) fn findings_of(findings: &Value) -> Table {
    rows_of(
        findings,
        &["<what", "<value", "<meaning"],
        &["what", "value", "meaning"],
    )
}

/// characterize's stages: name, status, seconds, file, why.
pub(super) fn stages_table(stages: &Value) -> Table {
    rows_of(
        stages,
        &["<stage", "<status", "seconds", "<file", "<why"],
        &["name", "status", "seconds", "file", "why"],
    )
}

fn title(report: &Value) -> String {
    format!(
        "memlat doctor: what this machine lets memlat measure (CPU {})",
        report["cpu"]
    )
}

/// `memlat doctor --format markdown`: the findings in one table.
pub fn document(report: &Value) -> Document {
    let mut d = Document::new(title(report));
    d.table(findings_of(&report["findings"]));
    d
}

/// `memlat doctor`'s text: each finding as `what  value`, its meaning
/// indented below (the headline's rows, laid out for a terminal).
pub fn text(report: &Value) -> String {
    let mut out = format!("{}\n\n", title(report));
    for f in report["findings"].as_array().into_iter().flatten() {
        let field = |k: &str| f[k].as_str().unwrap_or("-").to_string();
        out += &format!("{:<32} {}\n", field("what"), field("value"));
        out += &crate::output::text::wrap(&field("meaning"), 86, "    ");
    }
    out
}

/// One row per object of the array `items`, the `fields` as columns
/// (strings as they are, numbers rounded, null as `-`).
fn rows_of(items: &Value, columns: &[&str], fields: &[&str]) -> Table {
    let mut t = Table::new(columns);
    for item in items.as_array().into_iter().flatten() {
        t.row(
            fields
                .iter()
                .map(|f| match &item[*f] {
                    Value::String(s) => Cell::from(s.clone()),
                    Value::Number(n) => n.as_f64().map_or(Cell::from("-"), |x| Cell::float(x, 1)),
                    Value::Null => Cell::from("-"),
                    other => Cell::from(other.to_string()),
                })
                .collect(),
        );
    }
    t
}
