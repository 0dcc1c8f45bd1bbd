//! Output: one [`table::Table`] type for text, CSV and Markdown, seed 004's
//! `key : value` text, JSON through serde, and plots (with the `cli` feature).

pub mod csv;
pub mod detect;
pub mod document;
#[cfg(feature = "cli")]
pub mod plot;
#[cfg(feature = "cli")]
pub mod present;
pub mod table;
pub mod text;
pub mod watch;

use anyhow::Result;
use serde::Serialize;

pub use crate::experiments::schema::{OLDEST_SCHEMA, SCHEMA_VERSION, command_line};

/// Pretty JSON with a trailing newline.
pub fn json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

static STARTED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Records now as the time this command started (the envelope's
/// `started`); the first call wins.
pub fn mark_started() -> String {
    STARTED
        .get_or_init(|| crate::units::utc_timestamp(std::time::SystemTime::now()))
        .clone()
}

/// What every result JSON starts with: its schema version, its kind (`run`,
/// `sweep`, `mlp`...), the memlat and command that made it, the host it was
/// measured on, when, and how noisy the machine was (`null` where the kind
/// does not measure it). A field the result holds itself (a sweep's
/// `started`, a run's `noise`) is the result's and left out here.
#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    schema_version: u32,
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    memlat_version: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<crate::platform::host::Host>,
    #[serde(skip_serializing_if = "Option::is_none")]
    started: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finished: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    noise: Option<serde_json::Value>,
    #[serde(flatten)]
    result: &'a T,
}

fn envelope<'a, T: Serialize>(kind: &'a str, value: &'a T) -> Result<Envelope<'a, T>> {
    let shape = serde_json::to_value(value)?;
    let Some(fields) = shape.as_object() else {
        anyhow::bail!("a {kind} result must serialize to a JSON object");
    };
    Ok(envelope_of(kind, value, |k| fields.contains_key(k)))
}

/// [`result_json`] of a result whose own top-level fields are `own`, told
/// without the JSON tree [`result_json`] makes of it to find them (a
/// merged file of large sweeps would take four times its text), written
/// into room for `expected` bytes: grown by doubling, the text would be
/// copied on its way, both copies held at once.
pub fn result_json_of<T: Serialize>(
    kind: &str,
    value: &T,
    own: &[&str],
    expected: usize,
) -> Result<String> {
    let mut out = Vec::with_capacity(expected);
    serde_json::to_writer_pretty(&mut out, &envelope_of(kind, value, |k| own.contains(&k)))?;
    out.push(b'\n');
    Ok(String::from_utf8(out)?)
}

fn envelope_of<'a, T: Serialize>(
    kind: &'a str,
    value: &'a T,
    own: impl Fn(&str) -> bool,
) -> Envelope<'a, T> {
    let started = mark_started();
    Envelope {
        schema_version: SCHEMA_VERSION,
        kind,
        memlat_version: (!own("memlat_version")).then_some(env!("CARGO_PKG_VERSION")),
        command: (!own("command")).then(command_line),
        host: (!own("host")).then(crate::platform::host::Host::this),
        started: (!own("started")).then_some(started),
        finished: (!own("finished"))
            .then(|| crate::units::utc_timestamp(std::time::SystemTime::now())),
        noise: (!own("noise")).then_some(serde_json::Value::Null),
        result: value,
    }
}

/// `value` (a JSON object) as a result of `kind` on this host, pretty-printed.
pub fn result_json<T: Serialize>(kind: &str, value: &T) -> Result<String> {
    json(&envelope(kind, value)?)
}

/// The same envelope on one line (JSON lines: one result a line, for a
/// command that writes results as it goes).
pub fn result_json_line<T: Serialize>(kind: &str, value: &T) -> Result<String> {
    Ok(serde_json::to_string(&envelope(kind, value)?)? + "\n")
}
