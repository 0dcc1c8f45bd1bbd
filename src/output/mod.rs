//! Output: one [`table::Table`] type for text, CSV and Markdown, seed 004's
//! `key : value` text, JSON through serde, and plots (with the `cli` feature).

pub mod csv;
pub mod document;
#[cfg(feature = "cli")]
pub mod plot;
pub mod table;
pub mod text;
pub mod watch;

use anyhow::Result;
use serde::Serialize;

/// Pretty JSON with a trailing newline.
pub fn json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// The version of the result JSON layout: 2 adds `schema_version`, `kind`
/// and `host` to every result (memlat 0.1.0's files, without them, are 1).
pub const SCHEMA_VERSION: u32 = 2;

/// A result with what every result JSON starts with: its schema version,
/// its kind (`run`, `sweep`, `mlp`...) and the host it was measured on.
#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    schema_version: u32,
    kind: &'a str,
    host: crate::platform::host::Host,
    #[serde(flatten)]
    result: &'a T,
}

/// `value` (a JSON object) as a result of `kind` on this host, pretty-printed.
pub fn result_json<T: Serialize>(kind: &str, value: &T) -> Result<String> {
    json(&Envelope {
        schema_version: SCHEMA_VERSION,
        kind,
        host: crate::platform::host::Host::this(),
        result: value,
    })
}

/// [`result_json`] on one line, without a trailing newline (the first line
/// of a JSON-lines result such as `memlat watch -o FILE.jsonl`).
pub fn result_json_line<T: Serialize>(kind: &str, value: &T) -> Result<String> {
    Ok(serde_json::to_string(&Envelope {
        schema_version: SCHEMA_VERSION,
        kind,
        host: crate::platform::host::Host::this(),
        result: value,
    })?)
}
