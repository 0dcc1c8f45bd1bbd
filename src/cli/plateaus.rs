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
    plateaus_or_probe(args, || probe(engine, template))
}

/// [`measured_levels`] for a command that times with no engine of its own
/// (`c2c`): one is made on `cpu` only where a probe is needed.
pub fn measured_levels_on(args: &PlateauArgs, cpu: usize) -> Result<MeasuredLevels> {
    let levels = plateaus_or_probe(args, || {
        let mut engine = Engine::builder().cpu(cpu).build()?;
        probe(&mut engine, &Point::default())
    })?;
    super::common::notice(&levels.describe());
    Ok(levels)
}

/// The plateaus `args` names, calling `probe_now` where they must be measured.
fn plateaus_or_probe(
    args: &PlateauArgs,
    probe_now: impl FnOnce() -> Result<MeasuredLevels>,
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
                None => probe_now()?,
            }
        }
        Source::Probe => probe_now()?,
    };
    Ok(levels)
}

fn probe(engine: &mut Engine, template: &Point) -> Result<MeasuredLevels> {
    let spare = if plateaus::remembered_path(&Host::this()).is_some() {
        "no sweep of this machine is remembered: a `memlat sweep` is, and spares it next time"
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
    if let Some(said) = remember_at(plateaus::remembered_dir(&Host::this()).as_deref(), result) {
        super::common::notice(&said);
    }
}

/// [`remember`] into the store's folder `store` (`None`: there is none,
/// HOME and XDG_CACHE_HOME unset); what to tell the user is returned.
fn remember_at(store: Option<&std::path::Path>, result: &SweepResult) -> Option<String> {
    if !result.complete || result.detection_series().is_none() {
        return None;
    }
    // The sweep's own noise verdict (steal above 2%, repeats' cv above 5%,
    // or the canary moved by more than 5%): plateaus are told apart by
    // latency bands a few percent wide, so a machine that moved more than
    // that under the sweep may have drawn them where they are not.
    if let Some(noise) = result.noise.filter(|n| n.noisy()) {
        return Some(format!(
            "not remembered as this machine's plateaus: the machine was noisy during the sweep ({})",
            noise.describe()
        ));
    }
    let Some(path) = store else {
        return Some(
            "not remembered as this machine's plateaus: neither HOME nor XDG_CACHE_HOME is set, so memlat has no cache folder; set one, or give this sweep's JSON with --plateaus FILE".into(),
        );
    };
    // Never through a link another user owns, at any component of the
    // folder (sudo -E with a HOME root does not own): crate::safe_fs.
    let written = crate::safe_fs::Dir::create_all(path, 0o755)
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
    Some(match written {
        Ok((dir, name)) => {
            forget_old(&dir, &name);
            format!(
                "remembered with this machine's other sweeps of the last {} days, combined where they agree, for `memlat`, loaduse, levels, mlp (--plateaus auto): {}",
                plateaus::REMEMBER_DAYS,
                path.join(&name).display()
            )
        }
        Err(e) => format!(
            "could not remember this sweep's plateaus in {}: {e:#}",
            path.display()
        ),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// A complete, quiet sweep of this machine, started now.
    fn sweep() -> SweepResult {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json");
        let mut r = SweepResult::load(&fixture).unwrap();
        r.host = Some(Host::this());
        // The fixture machine's caches: emptied, so the core check has nothing to compare.
        r.sysfs_caches = Vec::new();
        r.complete = true;
        r.noise = None;
        r.started = crate::experiments::sweep::utc_timestamp(std::time::SystemTime::now());
        r
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Sets `path`'s modification time `secs` from now.
    fn age(path: &Path, secs: i64) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let t = libc::timespec {
            tv_sec: now + secs,
            tv_nsec: 0,
        };
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid path and two valid timespecs.
        assert_eq!(
            unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), [t, t].as_ptr(), 0) },
            0
        );
    }

    #[test]
    fn two_sweeps_of_one_second_are_both_remembered() {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("memlat/sweeps-x");
        let r = sweep();
        let a = remember_at(Some(&store), &r).unwrap();
        let b = remember_at(Some(&store), &r).unwrap();
        assert!(
            a.contains("remembered") && b.contains("remembered"),
            "{a}\n{b}"
        );
        assert_ne!(a, b);
        assert_eq!(names(&store).len(), 2, "{:?}", names(&store));
    }

    #[test]
    fn junk_named_to_sort_last_or_dated_ahead_never_evicts_a_new_sweep() {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("sweeps-x");
        std::fs::create_dir_all(&store).unwrap();
        let mut junk: Vec<PathBuf> = Vec::new();
        for k in 0..KEEP_SWEEPS {
            let p = store.join(format!("sweep-9999999999999{k:02}.json"));
            std::fs::write(&p, "junk").unwrap();
            // Half an hour old, or a year ahead.
            age(&p, if k % 2 == 0 { -1800 } else { 365 * 86_400 });
            junk.push(p);
        }
        let said = remember_at(Some(&store), &sweep()).unwrap();
        assert!(said.contains("remembered"), "{said}");
        let kept = names(&store);
        assert!(kept.iter().any(|n| n.starts_with("sweep-20")), "{kept:?}");
        // The ones dated ahead count as the oldest and went; the others stay.
        assert_eq!(kept.len(), KEEP_SWEEPS / 2 + 1, "{kept:?}");
        assert!(junk.iter().step_by(2).all(|p| p.exists()));
    }

    #[test]
    fn without_home_a_sweep_says_it_is_not_remembered() {
        let said = remember_at(None, &sweep()).unwrap();
        assert!(said.contains("HOME"), "{said}");
    }

    #[test]
    fn a_store_reached_through_another_users_link_is_left_alone() {
        if crate::safe_fs::euid() != 0 {
            eprintln!("skipped: not root, so no link can be given to another user");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        let old = victim.join("sweep-20200101000000.json");
        std::fs::write(&old, "{}").unwrap();
        age(&old, -30 * 86_400);
        let base = tmp.path().join("cache/memlat");
        std::fs::create_dir_all(&base).unwrap();
        let link = base.join("sweeps-x");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let c = std::ffi::CString::new(link.to_str().unwrap()).unwrap();
        // SAFETY: a valid path; lchown changes the link's own owner.
        assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
        for store in [link.clone(), tmp.path().join("cache/memlat/sweeps-x/sub")] {
            let said = remember_at(Some(&store), &sweep()).unwrap();
            assert!(
                said.contains("could not remember") && said.contains("nobody"),
                "{said}"
            );
        }
        assert_eq!(names(&victim), vec!["sweep-20200101000000.json"]);
    }
}
