//! The JSON-lines file of `memlat watch -o`: written line by line, each
//! whole, cut back to its last whole line when a write fails (a full disk),
//! so a reader always finds the header and every interval written whole.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::files;
use crate::error::{UsageError, usage};
use crate::experiments::watch::WatchHeader;
use crate::experiments::watch::record::Tagged;
use crate::units::HumanBytes;

/// The JSON-lines file being written: its whole lines, and why writing
/// stopped (a full disk) if it did.
pub(super) struct Lines {
    file: File,
    pub(super) path: PathBuf,
    /// Bytes of whole lines written.
    len: u64,
    /// Interval lines written whole.
    pub(super) intervals: usize,
    /// Why a write failed; nothing is written after it.
    pub(super) failed: Option<String>,
}

impl Lines {
    /// Creates the file holding its first line (the envelope and header),
    /// replacing any file there atomically, and opens it to append.
    pub(super) fn create(path: &Path, header: &WatchHeader) -> Result<Lines> {
        let line = crate::output::result_json_line(
            "watch",
            &Tagged {
                record: "header",
                inner: header,
            },
        )?;
        files::replace(path, &line).map_err(|e| {
            UsageError(format!(
                "-o {}: cannot write its first line ({e:#}); free space on its disk or name a file elsewhere",
                path.display()
            ))
        })?;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .with_context(|| format!("-o {}: reopening it to append", path.display()))?;
        Ok(Lines {
            file,
            path: path.to_path_buf(),
            len: line.len() as u64,
            intervals: 0,
            failed: None,
        })
    }

    /// Appends one record as one line, written whole by one call; `false`
    /// once a write has failed. A line written in part is cut off, so the
    /// file ends with whole lines a reader can use.
    pub(super) fn append<T: serde::Serialize>(&mut self, record: &Tagged<'_, T>) -> bool {
        if self.failed.is_some() {
            return false;
        }
        let written = serde_json::to_string(record)
            .map_err(std::io::Error::other)
            .and_then(|line| {
                let line = line + "\n";
                self.file.write_all(line.as_bytes())?;
                Ok(line.len() as u64)
            });
        match written {
            Ok(n) => {
                self.len += n;
                if record.record == "interval" {
                    self.intervals += 1;
                }
                true
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                self.failed = Some(e.to_string());
                false
            }
        }
    }
}

/// Refuses an `-o` whose disk has less than a few intervals' room left,
/// before anything is measured.
pub(super) fn check_free_space(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(c) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()))
    else {
        return Ok(());
    };
    // SAFETY: statvfs fills the struct it is given; all-zero is a valid one.
    let stat = unsafe {
        let mut stat: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c.as_ptr(), &mut stat) == 0).then_some(stat)
    };
    let Some(stat) = stat else {
        return Ok(());
    };
    // The fields' types differ between targets (u32 on 32-bit ones).
    #[allow(clippy::unnecessary_cast)]
    let free = (stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64);
    if free < 64 << 10 {
        return usage(format!(
            "-o {}: its disk has {} free; a watch writes a few hundred bytes an interval: free space or name a file elsewhere",
            path.display(),
            HumanBytes(free)
        ));
    }
    Ok(())
}
