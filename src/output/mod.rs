//! Output: one [`table::Table`] type for text, CSV and Markdown, seed 004's
//! `key : value` text, JSON through serde, and plots (with the `cli` feature).

pub mod csv;
pub mod document;
#[cfg(feature = "cli")]
pub mod plot;
pub mod table;
pub mod text;

use anyhow::Result;
use serde::Serialize;

/// Pretty JSON with a trailing newline.
pub fn json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}
