//! Output: text (`key : value` lines), JSON and CSV from the same result structs.
//!
//! A file given with `-o` is created before anything is measured, so a bad path
//! fails at once rather than after minutes of measuring.

pub mod csv;
pub mod plot;
pub mod table;
pub mod text;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::error::UsageError;

/// Where a command's output goes.
pub struct Output {
    path: Option<PathBuf>,
}

impl Output {
    /// Standard output, or `path`, created (and truncated) now.
    pub fn create(path: Option<&Path>) -> Result<Output> {
        if let Some(path) = path {
            File::create(path).map_err(|e| {
                UsageError(format!(
                    "-o/--output {}: cannot create it: {e}",
                    path.display()
                ))
            })?;
        }
        Ok(Output {
            path: path.map(Path::to_path_buf),
        })
    }

    /// Writes `content` whole (replacing what the file held).
    pub fn write(&self, content: &str) -> Result<()> {
        match &self.path {
            Some(path) => {
                let mut file =
                    File::create(path).with_context(|| format!("writing {}", path.display()))?;
                file.write_all(content.as_bytes())
                    .with_context(|| format!("writing {}", path.display()))
            }
            None => {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(content.as_bytes())?;
                stdout.flush()?;
                Ok(())
            }
        }
    }
}

/// Pretty JSON with a trailing newline.
pub fn json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}
