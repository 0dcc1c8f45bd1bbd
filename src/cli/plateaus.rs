//! `--plateaus`: the measured plateaus a command places its sizes in, from
//! a sweep file, the remembered sweep of this machine, or a probe now; and
//! remembering a complete sweep for the commands that follow it.

use anyhow::Result;

use crate::cli::args::PlateauArgs;
use crate::engine::{Engine, Point};
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
    super::commands::notice(&levels.describe());
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
        Source::Auto => match plateaus::remembered(&Host::this()) {
            Some(levels) => levels,
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

/// Keeps a complete sweep of this machine for `--plateaus auto`; a failure
/// to write it is a notice, never an error (the sweep's own files are written).
pub fn remember(result: &SweepResult) {
    let host = Host::this();
    if !result.complete || result.detection_series().is_none() {
        return;
    }
    let Some(path) = plateaus::remembered_path(&host) else {
        return;
    };
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .map_err(anyhow::Error::from)
        .and_then(|()| {
            let json = serde_json::to_string(result)?;
            crate::cli::files::replace(&path, &json)
        });
    match written {
        Ok(()) => super::commands::notice(&format!(
            "remembered as this machine's plateaus for `memlat`, loaduse, levels, mlp (--plateaus auto): {}",
            path.display()
        )),
        Err(e) => super::commands::notice(&format!(
            "could not remember this sweep's plateaus in {}: {e:#}",
            path.display()
        )),
    }
}
