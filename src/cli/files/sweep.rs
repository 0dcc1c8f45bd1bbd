//! A sweep's own files: the CSV, JSON and plots it rewrites after every
//! point, the observer that rewrites them, and the fresh results directory.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Result;

use super::{Existing, claim, parent_of, replace};
use crate::error::UsageError;
use crate::experiments::sweep::{SweepResult, utc_timestamp};
use crate::output;
use crate::output::plot::sweep::{self as views, Metric};
use crate::output::plot::{self, ImageFormat};
use crate::safe_fs::{Dir, Lock};

/// Where the default results directories go, under the current directory.
pub const RESULTS_DIR: &str = "memlat-results";

/// The files a sweep writes; each is optional.
#[derive(Debug, Clone, Default)]
pub struct SweepFiles {
    /// One row per repeat of every point (`--csv`).
    pub csv: Option<PathBuf>,
    /// The whole [`SweepResult`] (`--json`).
    pub json: Option<PathBuf>,
    /// Plots drawn at the end, SVG or PNG by extension (`--plot`).
    pub plots: Vec<PathBuf>,
}

impl SweepFiles {
    /// `sweep.csv`, `sweep.json`, `sweep.svg` and `sweep.png` in `dir`.
    pub fn in_dir(dir: &Path) -> SweepFiles {
        SweepFiles {
            csv: Some(dir.join("sweep.csv")),
            json: Some(dir.join("sweep.json")),
            plots: vec![dir.join("sweep.svg"), dir.join("sweep.png")],
        }
    }

    /// Whether no file is asked for.
    pub fn is_empty(&self) -> bool {
        self.csv.is_none() && self.json.is_none() && self.plots.is_empty()
    }

    /// Checks every path before anything is measured: plot extensions, and that
    /// the CSV and JSON can be created (they are, holding `result`, each
    /// written whole under a temporary name and renamed: a full disk, Ctrl-C
    /// or SIGKILL leaves either no file or a valid one, never 0 bytes).
    /// The CSV's and JSON's locks are returned, to hold while the sweep runs:
    /// a second sweep naming one of them is refused.
    pub fn create(&self, result: &SweepResult) -> Result<Vec<Lock>> {
        for plot in &self.plots {
            ImageFormat::of(plot, "--plot")?;
            let parent = parent_of(plot);
            if !parent.is_dir() {
                return Err(UsageError(format!(
                    "--plot {}: the directory {} does not exist",
                    plot.display(),
                    parent.display()
                ))
                .into());
            }
        }
        let mut locks = Vec::new();
        for (flag, path) in [("--csv", &self.csv), ("--json", &self.json)] {
            if let Some(path) = path {
                locks.push(claim(path, flag, Existing::Replace)?);
            }
        }
        self.write(result)?;
        Ok(locks)
    }

    /// Replaces the CSV, then the JSON, with `result` (a process killed between
    /// the two leaves a CSV one point ahead of the JSON, never behind).
    pub fn write(&self, result: &SweepResult) -> Result<()> {
        if let Some(path) = &self.csv {
            replace(path, &output::csv::samples(&result.points))?;
        }
        if let Some(path) = &self.json {
            replace(path, &output::json(result)?)?;
        }
        Ok(())
    }

    /// Draws the plots (latency, bandwidth and counted events) with level bands.
    pub fn draw(&self, result: &SweepResult) -> Result<()> {
        if result.points.is_empty() {
            return Ok(());
        }
        let charts = views::charts(result, &Metric::defaults(result), true);
        for path in &self.plots {
            plot::figure(path, &charts)?;
        }
        Ok(())
    }

    /// Every file with the flag that named it.
    pub fn flagged(&self) -> Vec<(&'static str, &Path)> {
        let mut out: Vec<(&'static str, &Path)> = Vec::new();
        out.extend(self.csv.as_deref().map(|p| ("--csv", p)));
        out.extend(self.json.as_deref().map(|p| ("--json", p)));
        out.extend(self.plots.iter().map(|p| ("--plot", p.as_path())));
        out
    }

    /// Every file, for telling the user where they are.
    pub fn paths(&self) -> Vec<&Path> {
        self.csv
            .iter()
            .chain(&self.json)
            .chain(&self.plots)
            .map(PathBuf::as_path)
            .collect()
    }
}

/// What a sweep run tells the command line: a progress bar, Ctrl-C, and
/// the files rewritten after every point.
pub struct SweepObserver<'a> {
    progress: crate::cli::progress::Progress,
    files: &'a SweepFiles,
    _interrupt: crate::cli::interrupt::Guard,
}

impl<'a> SweepObserver<'a> {
    /// Catches Ctrl-C while alive; draws a progress bar when `progress`.
    pub fn new(files: &'a SweepFiles, progress: bool) -> SweepObserver<'a> {
        SweepObserver {
            progress: crate::cli::progress::Progress::new(progress),
            files,
            _interrupt: crate::cli::interrupt::Guard::install(),
        }
    }
}

impl crate::experiments::Observer<SweepResult> for SweepObserver<'_> {
    fn planned(&mut self, steps: &[(String, u64)]) {
        crate::experiments::Observer::<SweepResult>::planned(&mut self.progress, steps);
    }

    fn begin(&mut self, step: &crate::experiments::Step) {
        crate::experiments::Observer::<SweepResult>::begin(&mut self.progress, step);
    }

    fn end(&mut self, step: &crate::experiments::Step) {
        crate::experiments::Observer::<SweepResult>::end(&mut self.progress, step);
    }

    fn interrupted(&self) -> bool {
        crate::cli::interrupt::interrupted()
    }

    fn checkpoint(&mut self, partial: &SweepResult) -> Result<()> {
        self.files.write(partial)
    }
}

/// Creates a fresh `memlat-results/sweep-YYYYMMDD-HHMMSS` under `base`
/// (with `-2`, `-3`... when one of that second exists), never through a
/// link another user owns (a `memlat-results` planted in a shared working
/// directory, or any directory above it: [`crate::safe_fs`]).
pub fn results_dir(base: &Path) -> Result<PathBuf> {
    let root = base.join(RESULTS_DIR);
    // A usage error, as for a named file: the fix is a flag or a directory.
    let refuse = |dir: &Path, e: std::io::Error| {
        UsageError(format!(
            "cannot create {}: {e}; name the files with --json FILE (or --csv, --plot), or run where you can write",
            dir.display()
        ))
    };
    let made = Dir::create_all(&root, 0o755).map_err(|e| refuse(&root, e))?;
    let stamp = utc_timestamp(SystemTime::now())
        .replace(['-', ':'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string();
    for n in 1.. {
        let name = match n {
            1 => format!("sweep-{stamp}"),
            n => format!("sweep-{stamp}-{n}"),
        };
        let dir = root.join(&name);
        match made.create_dir(name.as_ref(), 0o755) {
            Ok(_) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(refuse(&dir, e).into()),
        }
    }
    unreachable!("some suffix is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_dirs_are_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let a = results_dir(dir.path()).unwrap();
        let b = results_dir(dir.path()).unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(dir.path().join(RESULTS_DIR)));
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("sweep-") && name.len() >= "sweep-20240101-000000".len());
    }
}
