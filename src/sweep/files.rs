//! A sweep's files: CSV and JSON created before the first point and replaced
//! after every point (write a temporary file, then rename it over the old
//! one), so Ctrl-C, a crash or SIGKILL leaves a valid file of every finished
//! point; plots drawn at the end.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use super::result::SweepResult;
use super::views::{self, Metric};
use crate::error::UsageError;
use crate::output;
use crate::output::plot::{self, ImageFormat};

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
    /// the CSV and JSON can be created (they are, holding `result`).
    pub fn create(&self, result: &SweepResult) -> Result<()> {
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
        for (flag, path) in [("--csv", &self.csv), ("--json", &self.json)] {
            if let Some(path) = path {
                fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| {
                        UsageError(format!("{flag} {}: cannot create it: {e}", path.display()))
                    })?;
            }
        }
        self.write(result)
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

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes `content` to `path` so a reader never sees a half-written file:
/// into a temporary file beside it, then renamed over it. Paths that are not
/// regular files (a pipe, /dev/stdout) are written directly.
pub fn replace(path: &Path, content: &str) -> Result<()> {
    let context = || format!("writing {}", path.display());
    let regular = fs::metadata(path).map_or(true, |m| m.is_file());
    if !regular {
        return fs::write(path, content).with_context(context);
    }
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let temporary = parent_of(path).join(format!(".{name}.{}.tmp", std::process::id()));
    fs::write(&temporary, content).with_context(context)?;
    fs::rename(&temporary, path).with_context(context)
}

/// Creates a fresh `memlat-results/sweep-YYYYMMDD-HHMMSS` under `base`
/// (with `-2`, `-3`... when one of that second exists).
pub fn results_dir(base: &Path) -> Result<PathBuf> {
    let root = base.join(RESULTS_DIR);
    fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
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
        let dir = root.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
        }
    }
    unreachable!("some suffix is free")
}

/// `2024-03-01T12:34:56Z` for `time` (UTC, seconds).
pub fn utc_timestamp(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Year, month, day of the `days`th day after 1970-01-01 (proleptic Gregorian;
/// Howard Hinnant's `civil_from_days` algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_dates() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661);
        assert_eq!(utc_timestamp(t), "2000-02-29T01:01:01Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599);
        assert_eq!(utc_timestamp(t), "2024-12-31T23:59:59Z");
    }

    #[test]
    fn replace_leaves_only_the_new_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        replace(&path, "old").unwrap();
        replace(&path, "new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

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
