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
        Source::Auto => {
            let (levels, notes) = plateaus::remembered_combined(&Host::this());
            for note in notes {
                super::common::notice(&note);
            }
            match levels {
                Some(levels) => levels,
                None => probe(engine, template)?,
            }
        }
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
    // Ctrl-C (or SIGTERM) during the probe stops it after its point in
    // progress; the command, which measured nothing yet, then ends.
    let levels = plateaus::probe_until(engine, &plan, super::interrupt::interrupted);
    if super::interrupt::interrupted() {
        return Err(super::interrupt::Interrupted(
            "memlat: interrupted during the plateau probe; nothing was measured".into(),
        )
        .into());
    }
    levels
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
    let Some(dir) = plateaus::remembered_dir(&host) else {
        return;
    };
    let path = dir.join(plateaus::remembered_name(&result.started));
    let written = std::fs::create_dir_all(&dir)
        .map_err(anyhow::Error::from)
        .and_then(|()| {
            let json = serde_json::to_string(result)?;
            crate::cli::files::replace(&path, &json)
        });
    match written {
        Ok(()) => {
            forget_old(&plateaus::remembered_files(&host));
            super::common::notice(&format!(
                "remembered with this machine's other sweeps of the last {} days, combined where they agree, for `memlat`, loaduse, levels, mlp (--plateaus auto): {}",
                plateaus::REMEMBER_DAYS,
                path.display()
            ))
        }
        Err(e) => super::common::notice(&format!(
            "could not remember this sweep's plateaus in {}: {e:#}",
            path.display()
        )),
    }
}

/// Removes remembered sweeps (`files`, oldest first) past the week or past
/// the newest [`KEEP_SWEEPS`]; a file that cannot be removed stays (it is
/// read and set aside by age).
fn forget_old(files: &[std::path::PathBuf]) {
    let surplus = files.len().saturating_sub(KEEP_SWEEPS);
    for (k, path) in files.iter().enumerate() {
        let old = plateaus::written_ago(path).is_some_and(|age| age > plateaus::REMEMBERED_FOR);
        if k < surplus || old {
            let _ = std::fs::remove_file(path);
        }
    }
}
