//! `DIR/characterize.json`: what ran, how long each stage took, where its
//! file is, and why a stage failed or was skipped. Rewritten after every
//! stage, so even a killed run leaves a summary of what it did.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub use super::child::Status;

/// One stage's line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage (`sweep`, `c2c`...).
    pub name: String,
    /// done, failed, skipped or interrupted.
    pub status: Status,
    /// Wall time, seconds (0 when skipped).
    pub seconds: f64,
    /// What it was expected to take, seconds.
    pub estimated_seconds: f64,
    /// Its result, relative to DIR; null when it wrote none.
    pub file: Option<String>,
    /// Why it failed, was skipped or interrupted; null when done.
    pub why: Option<String>,
    /// The memlat command it ran, to repeat it alone (empty when skipped).
    pub command: Vec<String>,
    /// The last lines of its stderr, when it did not finish.
    pub stderr_tail: Vec<String>,
}

/// The whole file (beside schema_version, kind and host).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// `full`, `quick` (or `tiny`, for tests).
    pub mode: String,
    /// Whether every stage planned ran to its end (skipped ones count as run).
    pub complete: bool,
    /// Wall time so far, seconds.
    pub seconds: f64,
    /// Every stage planned, in order.
    pub stages: Vec<StageRecord>,
    /// The HTML report, relative to DIR, once written.
    pub report: Option<String>,
    /// Results the report could not read, with the reason.
    pub report_left_out: Vec<String>,
}

impl Summary {
    /// Replaces `path` with this summary.
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::cli::files::replace(path, &crate::output::result_json("characterize", self)?)
    }

    /// The summary an earlier run left in `path`, when it reads as one:
    /// through the readers' one gate ([`crate::readback::check`]), so a
    /// stage file that is absolute or climbs out with `..` is refused here
    /// as `memlat report` refuses it.
    pub fn load(path: &Path) -> Result<Option<Summary>, crate::error::UsageError> {
        let Ok(text) = crate::input::read_text(path) else {
            return Ok(None);
        };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
            return Ok(None);
        };
        crate::readback::check("characterize", &value, path)?;
        Ok(serde_json::from_value(value).ok())
    }

    /// The stages with the status given.
    pub fn with(&self, status: Status) -> Vec<&StageRecord> {
        self.stages.iter().filter(|s| s.status == status).collect()
    }
}
