//! `--plateaus`: the measured plateaus a command places its sizes in, from
//! a sweep file, the remembered sweep of this machine, or a probe now; and
//! remembering a complete sweep for the commands that follow it.

use anyhow::Result;

use crate::cli::args::PlateauArgs;
use crate::engine::{Engine, Point};
use crate::experiments::plateau_history::KEEP_SWEEPS;
use crate::experiments::plateaus::{self, MeasuredLevels, Source};
use crate::experiments::sweep::SweepResult;
use crate::platform;
use crate::platform::caches;
use crate::platform::host::Host;

impl PlateauArgs {
    /// The sweep file `--plateaus` names, for the same-path check.
    pub fn file(&self) -> Option<&std::path::Path> {
        match &self.plateaus {
            Source::File(path) => Some(path),
            _ => None,
        }
    }
}

/// The plateaus `args` names, measuring a probe on `engine` when needed;
/// the line saying where they came from is printed to stderr.
pub fn measured_levels(
    args: &PlateauArgs,
    engine: &mut Engine,
    template: &Point,
) -> Result<MeasuredLevels> {
    let levels = measured_plateaus(args, engine, template)?;
    super::common::notice(&levels.describe());
    Ok(levels)
}

/// [`measured_levels`] without the line saying where they came from (for a
/// command that places its sizes otherwise and says so itself).
pub fn measured_plateaus(
    args: &PlateauArgs,
    engine: &mut Engine,
    template: &Point,
) -> Result<MeasuredLevels> {
    let levels = match &args.plateaus {
        Source::File(path) => plateaus::from_file(path).map_err(|e| {
            crate::error::UsageError(format!("--plateaus {}: {e:#}", path.display()))
        })?,
        Source::Auto => match plateaus::remembered_combined(&Host::this()) {
            Some((levels, notes)) => {
                for note in notes {
                    super::common::notice(&note);
                }
                levels
            }
            None => probe(engine, template)?,
        },
        Source::Probe => probe(engine, template)?,
    };
    Ok(levels)
}

fn probe(engine: &mut Engine, template: &Point) -> Result<MeasuredLevels> {
    let spare = if plateaus::remembered_path(&Host::this()).is_some() {
        "a `memlat sweep` is remembered and spares it"
    } else {
        "nothing is remembered without HOME or XDG_CACHE_HOME: give --plateaus FILE to spare it"
    };
    eprintln!(
        "memlat: probing this machine's cache plateaus (a coarse random sweep, a few seconds; {spare})"
    );
    let cpu = engine.cpu();
    let plan = plateaus::probe_plan(
        template,
        cpu,
        &caches::data_caches(cpu),
        platform::mem_available_bytes(),
    );
    plateaus::probe(engine, &plan)
}

/// Keeps a complete, quiet sweep of this machine for `--plateaus auto`
/// beside the others of the last week; a failure to write it is a notice,
/// never an error (the sweep's own files are written).
pub fn remember(result: &SweepResult) {
    let host = Host::this();
    if !result.complete || result.detection_series().is_none() {
        return;
    }
    // The sweep's own noise verdict (steal above 2%, repeats' cv above 5%,
    // or the canary moved by more than 5%): plateaus are told apart by
    // latency bands a few percent wide, so a machine that moved more than
    // that under the sweep may have drawn them where they are not.
    if let Some(noise) = result.noise.filter(|n| n.noisy()) {
        super::common::notice(&format!(
            "not remembered as this machine's plateaus: the machine was noisy during the sweep ({})",
            noise.describe()
        ));
        return;
    }
    let Some(path) = plateaus::remembered_dir(&host) else {
        super::common::notice(
            "not remembered as this machine's plateaus: neither HOME nor XDG_CACHE_HOME is set, so memlat has no cache folder; set one, or give this sweep's JSON with --plateaus FILE",
        );
        return;
    };
    // Never through a link another user owns, at any component of the
    // folder (sudo -E with a HOME root does not own): crate::safe_fs.
    let written = crate::safe_fs::Dir::create_all(&path, 0o755)
        .map_err(anyhow::Error::from)
        .and_then(|dir| {
            let json = serde_json::to_string(result)?;
            // Two sweeps started in the same second take two names.
            let first = plateaus::remembered_name(&result.started);
            let stem = first.trim_end_matches(".json").to_string();
            let names = std::iter::once(first.into())
                .chain((2..100).map(|n| format!("{stem}-{n}.json").into()));
            let name = crate::safe_fs::create_unique(&dir, json.as_bytes(), names)?;
            Ok((dir, name))
        });
    match written {
        Ok((dir, name)) => {
            forget_old(&dir, &name);
            super::common::notice(&format!(
                "remembered with this machine's other sweeps of the last {} days, combined where they agree, for `memlat`, loaduse, levels, mlp (--plateaus auto): {}",
                plateaus::REMEMBER_DAYS,
                path.join(&name).display()
            ))
        }
        Err(e) => super::common::notice(&format!(
            "could not remember this sweep's plateaus in {}: {e:#}",
            path.display()
        )),
    }
}

/// Removes remembered sweeps in the store's folder `dir` past the week or
/// past the newest [`KEEP_SWEEPS`] by the time they were written (never
/// `kept`, the sweep just remembered), by name within the folder opened (a
/// link there is removed itself, never followed); a file that cannot be
/// removed stays (it is read and set aside by age).
fn forget_old(dir: &crate::safe_fs::Dir, kept: &std::ffi::OsStr) {
    let files: Vec<plateaus::Stored> = plateaus::stored(dir)
        .into_iter()
        .filter(|s| s.name != kept)
        .collect();
    let surplus = (files.len() + 1).saturating_sub(KEEP_SWEEPS);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let week = plateaus::REMEMBERED_FOR.as_secs() as i64;
    for (k, file) in files.iter().enumerate() {
        if k < surplus || now.saturating_sub(file.modified) > week {
            let _ = dir.remove_file(&file.name);
        }
    }
}
