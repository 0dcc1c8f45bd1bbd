//! Where each cache level's plateau lies on this machine, as measured: every
//! command that places a size inside a level (the quick table, `loaduse`,
//! `levels`, `mlp`, `bandwidth`) takes the middle, in log scale, of the
//! measured plateau, not a fraction of what sysfs claims. On a shared guest
//! the two differ: a Zen 3 guest's 512 KiB L2 serves at its latency only to
//! about 256 KiB, and its 32 MiB L3 only to 3-4 MiB, so sysfs fractions land
//! on the ramps between levels.
//!
//! The plateaus come from, in order of preference:
//! - a sweep of this machine given with `--plateaus FILE`;
//! - the complete, quiet default `memlat sweep`s of this machine of the
//!   last [`REMEMBER_DAYS`] days, remembered per machine id and combined
//!   where they agree ([`super::plateau_history`]; `--plateaus auto`, the default);
//! - a coarse probe: a random-chain sweep at ratio 1.3, two short repeats,
//!   up to [`PROBE_CAP`] at most (2-7 s; `--plateaus probe` forces one).
//!
//! Every result says which, so a reader knows what the sizes rest on.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};

use super::sweep::{self, Range, RangeEnd, SeriesKey, SweepPlan, SweepResult};
use crate::analysis::detect::Detection;
use crate::chain::Pattern;
use crate::engine::{Engine, Point};
use crate::platform::caches::CacheInfo;
use crate::platform::host::Host;
use crate::units::HumanBytes;

pub use super::plateau_levels::{LevelSize, MeasuredLevels, Plateau};

/// The coarse probe's largest size: enough to reach memory past any L3 share.
pub const PROBE_CAP: u64 = 256 << 20;

/// A remembered sweep is used for this many days.
pub const REMEMBER_DAYS: u64 = 7;

/// [`REMEMBER_DAYS`] as a duration.
pub const REMEMBERED_FOR: Duration = Duration::from_secs(REMEMBER_DAYS * 86_400);

/// Where `--plateaus` says to take the plateaus from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The remembered sweep of this machine if recent, else a probe.
    Auto,
    /// A coarse probe now.
    Probe,
    /// A sweep JSON of this machine.
    File(PathBuf),
}

/// Parses `--plateaus`: `auto`, `probe`, or a sweep JSON file.
pub fn parse_source(text: &str) -> Result<Source, String> {
    match text.trim() {
        "" => Err("give auto, probe, or a sweep JSON file of this machine".into()),
        "auto" => Ok(Source::Auto),
        "probe" => Ok(Source::Probe),
        path => Ok(Source::File(PathBuf::from(path))),
    }
}

/// The coarse probe's plan: random chains from 4 KiB, ratio 1.3, two
/// repeats of 2 ms, no refinement, ending at flat DRAM or at 4x the
/// largest cache sysfs lists (64 MiB..[`PROBE_CAP`]), a quarter of `available` at most.
pub fn probe_plan(
    template: &Point,
    cpu: usize,
    caches: &[CacheInfo],
    available: Option<u64>,
) -> SweepPlan {
    let largest = caches
        .iter()
        .map(|c| c.size_bytes)
        .max()
        .unwrap_or(32 << 20);
    let mut to = largest.saturating_mul(4).clamp(64 << 20, PROBE_CAP);
    if let Some(available) = available {
        to = to.min(available / 4).max(1 << 20);
    }
    let template = Point {
        pattern: Pattern::Random,
        repeats: 2,
        until_precise: false,
        sample_time: Duration::from_millis(2),
        ..template.clone()
    };
    let range = Range {
        from: 4 << 10,
        to,
        ratio: sweep::DEFAULT_RATIO,
        end: RangeEnd::FlatDram,
    };
    let series = vec![SeriesKey::pattern(Pattern::Random)];
    let mut plan = SweepPlan::new(template, cpu, range, series, Vec::new(), caches.to_vec());
    plan.config.refine = false;
    plan
}

/// Measures the coarse probe and reads its plateaus.
pub fn probe(engine: &mut Engine, plan: &SweepPlan) -> Result<MeasuredLevels> {
    probe_until(engine, plan, || false)
}

/// Stops a sweep after the point in progress once its function says so.
struct Until<F>(F);

impl<R, F: Fn() -> bool> super::Observer<R> for Until<F> {
    fn interrupted(&self) -> bool {
        (self.0)()
    }
}

/// [`probe`], stopped after the point in progress once `stop` says so
/// (Ctrl-C): the caller, who asked, then sets its plateaus aside.
pub fn probe_until(
    engine: &mut Engine,
    plan: &SweepPlan,
    stop: impl Fn() -> bool,
) -> Result<MeasuredLevels> {
    let result = sweep::run(engine, plan, &mut Until(stop)).context("the plateau probe")?;
    MeasuredLevels::from_sweep(&result, "probe").context(
        "the plateau probe found no cache level: give sizes, or a sweep of this machine with --plateaus FILE",
    )
}

/// `$XDG_CACHE_HOME/memlat/` (or `~/.cache/memlat/`) and this machine's id.
fn cache_base(host: &Host) -> Option<(PathBuf, String)> {
    // Only absolute paths (as the XDG spec asks): an empty or relative HOME
    // would put the store under the current directory.
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|v| v.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute())
                .map(|h| h.join(".cache"))
        })?;
    let id: String = host
        .machine_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    Some((base.join("memlat"), id))
}

/// The file memlat 0.1 remembered the last sweep of this machine in (still
/// read, as one of the sweeps, until it is [`REMEMBER_DAYS`] old).
pub fn remembered_path(host: &Host) -> Option<PathBuf> {
    let (base, id) = cache_base(host)?;
    Some(base.join(format!("sweep-{id}.json")))
}

/// The folder this machine's complete sweeps are remembered in, one file
/// each, named after the time the sweep started.
pub fn remembered_dir(host: &Host) -> Option<PathBuf> {
    let (base, id) = cache_base(host)?;
    Some(base.join(format!("sweeps-{id}")))
}

/// The file name a sweep that started at `started` is remembered under:
/// the digits of its UTC time, so names sort as the sweeps ran.
pub fn remembered_name(started: &str) -> String {
    let digits: String = started.chars().filter(|c| c.is_ascii_digit()).collect();
    format!("sweep-{digits}.json")
}

/// At most this many names are read from the store's folder (10^6 files
/// there would otherwise slow every command that reads it by seconds).
pub const STORE_SCAN: usize = 4096;

/// Whether `name` is one the store writes: `sweep-DIGITS.json`, or
/// `sweep-DIGITS-N.json` for a second sweep started in the same second.
pub fn is_store_name(name: &str) -> bool {
    let Some(middle) = name
        .strip_prefix("sweep-")
        .and_then(|n| n.strip_suffix(".json"))
    else {
        return false;
    };
    let (stamp, n) = middle.split_once('-').unwrap_or((middle, "1"));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    digits(stamp) && digits(n)
}

/// One remembered sweep in the store's folder.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Its file name.
    pub name: std::ffi::OsString,
    /// When it was written, seconds since the epoch.
    pub modified: i64,
}

/// The store's folder, opened without following a link another user owns
/// (`sudo -E` with a HOME root does not own: [`crate::safe_fs`]), when it exists.
pub fn store_dir(host: &Host) -> Option<crate::safe_fs::Dir> {
    crate::safe_fs::Dir::open(&remembered_dir(host)?).ok()
}

/// The sweep files in the store's folder `dir` (regular files of the
/// store's names, among the first [`STORE_SCAN`] names), oldest first by
/// the time they were written, not by name: a file dated in the future
/// counts as the oldest, so no name or date planted there outlives a new sweep.
pub fn stored(dir: &crate::safe_fs::Dir) -> Vec<Stored> {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let Ok((names, _)) = dir.names(STORE_SCAN) else {
        return Vec::new();
    };
    let mut kept: Vec<Stored> = names
        .into_iter()
        .filter(|n| n.to_str().is_some_and(is_store_name))
        .filter_map(|name| {
            let entry = dir.entry(&name).ok()??;
            matches!(entry.kind, crate::safe_fs::Kind::File(_)).then(|| Stored {
                modified: if entry.modified > now + 86_400 {
                    i64::MIN
                } else {
                    entry.modified
                },
                name,
            })
        })
        .collect();
    kept.sort_by(|a, b| (a.modified, &a.name).cmp(&(b.modified, &b.name)));
    kept
}

/// The remembered sweep files of this machine, oldest first: the 0.1 file
/// first of all, then the newest [`super::plateau_history::KEEP_SWEEPS`]
/// of the store's folder, by the time they were written.
pub fn remembered_files(host: &Host) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = remembered_path(host)
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .into_iter()
        .collect();
    if let (Some(path), Some(dir)) = (remembered_dir(host), store_dir(host)) {
        let all = stored(&dir);
        let newest = &all[all
            .len()
            .saturating_sub(super::plateau_history::KEEP_SWEEPS)..];
        files.extend(newest.iter().map(|s| path.join(&s.name)));
    }
    files
}

/// How long ago `path` was written.
pub fn written_ago(path: &Path) -> Option<Duration> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
}

/// One remembered sweep file, when it fits this machine: written within
/// the week, with a random series to detect levels from, and fit for this
/// machine (not another's, cut short, edited or corrupted); otherwise why
/// it is set aside.
fn remembered_sweep(path: &Path, host: &Host) -> Result<SweepResult, String> {
    let result = SweepResult::load(path).map_err(|e| format!("it cannot be read ({e:#})"))?;
    match written_ago(path) {
        Some(age) if age <= REMEMBERED_FOR => {}
        Some(age) => {
            return Err(format!(
                "it was written {} days ago, more than {REMEMBER_DAYS}",
                age.as_secs() / 86_400
            ));
        }
        None => return Err("its age cannot be read".into()),
    }
    if result.detection_series().is_none() {
        return Err("it has no random series to find the levels in".into());
    }
    let claimed = crate::platform::caches::data_caches(result.config.cpu);
    match unfit(
        &result,
        host,
        crate::platform::mem_available_bytes(),
        &claimed,
    ) {
        Some(why) => Err(why),
        None => Ok(result),
    }
}

/// The plateaus of one remembered sweep file, when it fits this machine
/// (otherwise why it is set aside).
fn remembered_one(path: &Path, host: &Host) -> Result<MeasuredLevels, String> {
    let result = remembered_sweep(path, host)?;
    let mut levels = MeasuredLevels::from_sweep(&result, "remembered")
        .ok_or("no cache level with a plateau in it")?;
    levels.file = Some(path.to_path_buf());
    Ok(levels)
}

/// The detections of this machine's remembered sweeps that fit, each from
/// its own curve, but the one that started at `except` (a sweep is not
/// pooled with itself): what a new sweep's capacity bounds are pooled with
/// ([`crate::analysis::detect::pool_bounds`]).
pub fn remembered_detections(host: &Host, except: &str) -> Vec<Detection> {
    remembered_files(host)
        .iter()
        .filter_map(|path| remembered_sweep(path, host).ok())
        .filter(|result| result.started != except)
        .filter_map(|result| result.detect())
        .collect()
}

/// The remembered sweeps of this machine that fit, combined where they
/// agree (`None` when none fits), with a note for each sweep set aside and
/// why, and for each level they do not agree on.
pub fn remembered_combined(host: &Host) -> (Option<MeasuredLevels>, Vec<String>) {
    let mut set_aside = Vec::new();
    let sweeps: Vec<MeasuredLevels> = remembered_files(host)
        .iter()
        .filter_map(|path| {
            remembered_one(path, host)
                .map_err(|why| {
                    set_aside.push(format!(
                        "the remembered sweep {} is set aside: {why}",
                        path.display()
                    ))
                })
                .ok()
        })
        .collect();
    let Some((mut levels, notes)) = super::plateau_history::combine(&sweeps) else {
        return (None, set_aside);
    };
    if sweeps.len() > 1 {
        levels.file = remembered_dir(host);
    }
    set_aside.extend(notes);
    ((!levels.levels.is_empty()).then_some(levels), set_aside)
}

/// The remembered sweeps of this machine, combined, when any fits.
pub fn remembered(host: &Host) -> Option<MeasuredLevels> {
    remembered_combined(host).0
}

/// The plateaus of a sweep file of this machine.
pub fn from_file(path: &Path) -> Result<MeasuredLevels> {
    let result = SweepResult::load(path)?;
    if let Some(why) = unfit(
        &result,
        &Host::this(),
        crate::platform::mem_available_bytes(),
        &crate::platform::caches::data_caches(result.config.cpu),
    ) {
        anyhow::bail!("{why}; measure this machine with `memlat sweep`, or give --plateaus probe");
    }
    let mut levels = MeasuredLevels::from_sweep(&result, "file").with_context(|| {
        format!(
            "{}: no cache level with a plateau in this sweep; give another file or --plateaus probe",
            path.display()
        )
    })?;
    levels.file = Some(path.to_path_buf());
    Ok(levels)
}

/// The largest cache plateau believed: no CPU's cache holds 1 GiB (the
/// largest L3 one core reaches, Xeon 6's 504 MB, is half of it), so a larger
/// plateau is a file edited or corrupted, not a measurement.
pub const MAX_PLATEAU_BYTES: u64 = 1 << 30;

/// How many times the size the system claims for a level a measured
/// plateau may reach before it is taken for a file scaled or edited, not a
/// measurement. A claim is a prior, not a fact: guests fabricate L3 sizes
/// (480 MiB listed where a 32 MiB share serves), and a share serves less
/// than its cache; so only what no reading of a real cache gives is refused.
pub const CLAIM_FACTOR: u64 = 8;

/// Why the plateaus `levels` cannot be this machine's, given the data
/// caches the system claims (`claimed`, one per level; sysfs): an L1 that
/// starts past twice the claimed L1d or holds more than [`CLAIM_FACTOR`]
/// times it (an L1d size is the core's own, read from CPUID, and guests
/// pass it on), or a deeper level that starts past [`CLAIM_FACTOR`] times
/// every cache claimed at its level or beyond. `None` when nothing is
/// claimed to compare with, or nothing is absurd.
pub fn implausible(levels: &MeasuredLevels, claimed: &[CacheInfo]) -> Option<String> {
    for (k, p) in levels.levels.iter().enumerate() {
        let Some(level) = p
            .name
            .strip_prefix('L')
            .and_then(|n| n.parse::<u32>().ok())
            .or(u32::try_from(k + 1).ok())
        else {
            continue;
        };
        let holds = p.capacity_bytes.unwrap_or(p.to_bytes).max(p.to_bytes);
        if level == 1 {
            let Some(l1) = claimed.iter().find(|c| c.level == 1).map(|c| c.size_bytes) else {
                continue;
            };
            if p.from_bytes > 2 * l1 || holds > CLAIM_FACTOR * l1 {
                return Some(format!(
                    "its L1 serves {}..{} (holding {}) where this CPU reports a {} L1d, {:.0} times it: a sweep scaled or edited, not this machine's",
                    HumanBytes(p.from_bytes),
                    HumanBytes(p.to_bytes),
                    HumanBytes(holds),
                    HumanBytes(l1),
                    holds as f64 / l1 as f64
                ));
            }
            continue;
        }
        let Some(largest) = claimed
            .iter()
            .filter(|c| c.level >= level)
            .map(|c| c.size_bytes)
            .max()
        else {
            continue;
        };
        if p.from_bytes > CLAIM_FACTOR * largest {
            return Some(format!(
                "its {} starts at {}, {:.0} times the largest cache this system reports at L{level} or beyond ({}): a sweep scaled or edited, not this machine's",
                p.name,
                HumanBytes(p.from_bytes),
                p.from_bytes as f64 / largest as f64,
                HumanBytes(largest)
            ));
        }
    }
    None
}

/// Why a sweep whose CPU listed `then` cannot stand for a CPU listing
/// `now`: a remembered sweep belongs to a kind of core, not only to a
/// machine. Hybrid parts (P and E cores, Apple's clusters) and parts with
/// two kinds of CCD (one with 3D V-Cache) share a machine id and a model
/// name, but their cores list other caches (a 1.25 MiB against a 2 MiB L2,
/// a 96 MiB against a 32 MiB L3): one core's plateaus are not another's.
/// Nothing is said where either list is empty (a profile, an old file).
fn another_core(then: &[CacheInfo], now: &[CacheInfo]) -> Option<String> {
    let list = |caches: &[CacheInfo]| {
        let mut v: Vec<(u32, u64)> = caches
            .iter()
            .filter(|c| c.holds_data())
            .map(|c| (c.level, c.size_bytes))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (a, b) = (list(then), list(now));
    if a.is_empty() || b.is_empty() || a == b {
        return None;
    }
    let show = |v: &[(u32, u64)]| {
        v.iter()
            .map(|(l, s)| format!("L{l} {}", HumanBytes(*s)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "it was measured on another kind of core (its CPU listed {}; this one lists {})",
        show(&a),
        show(&b)
    ))
}

/// Why a sweep measured on a core of kind `then` cannot stand for the core
/// this thread runs on, of kind `now` ([`crate::platform::core_kind`]): a
/// P core's plateaus are not an E core's. A sweep that recorded no kind
/// (one kind of core, or written before memlat recorded it) matches any.
pub fn another_kind(then: Option<&str>, now: Option<String>) -> Option<String> {
    let then = then?;
    match now {
        Some(now) if now == then => None,
        now => Some(format!(
            "it was measured on another kind of core ({then}; this one: {})",
            now.as_deref().unwrap_or("no kind named")
        )),
    }
}

/// Why the sweep `result` cannot stand for this machine's plateaus (`None`:
/// it can): another machine or CPU, incomplete, measured more than
/// [`REMEMBER_DAYS`] days ago (or in the future), plateaus that no cache
/// holds or that memory cannot, or plateaus absurd beside the caches the
/// system claims (`claimed`, see [`implausible`]).
pub fn unfit(
    result: &SweepResult,
    host: &Host,
    available: Option<u64>,
    claimed: &[CacheInfo],
) -> Option<String> {
    let started = result.started.as_str();
    match &result.host {
        None => return Some("it names no machine".into()),
        Some(h) if h.machine_id != host.machine_id || h.cpu_model != host.cpu_model => {
            return Some(format!(
                "it was measured on another machine ({}, {})",
                h.hostname, h.cpu_model
            ));
        }
        Some(_) => {}
    }
    if let Some(why) = another_core(&result.sysfs_caches, claimed) {
        return Some(why);
    }
    if let Some(why) = another_kind(
        result.config.core_kind.as_deref(),
        crate::platform::current_cpu().and_then(crate::platform::core_kind::core_kind),
    ) {
        return Some(why);
    }
    if !result.complete {
        return Some("the sweep is incomplete (cut short)".into());
    }
    let now = SystemTime::now();
    let oldest = sweep::utc_timestamp(now - REMEMBERED_FOR);
    // Timestamps of one format (YYYY-MM-DDTHH:MM:SSZ) order as text.
    if started < oldest.as_str()
        || started > sweep::utc_timestamp(now + Duration::from_secs(86_400)).as_str()
    {
        return Some(format!(
            "it was measured at {started}, not within the last {REMEMBER_DAYS} days"
        ));
    }
    let levels = MeasuredLevels::from_sweep(result, "file")?;
    let largest = levels
        .levels
        .iter()
        .map(|p| p.to_bytes.max(p.capacity_bytes.unwrap_or(0)))
        .max()?;
    if largest > MAX_PLATEAU_BYTES {
        return Some(format!(
            "a cache plateau reaches {}, more than any cache holds",
            HumanBytes(largest)
        ));
    }
    // Memory is measured at 4x the last capacity; it must fit beside the rest.
    if available.is_some_and(|a| largest > a / 4) {
        return Some(format!(
            "a cache plateau reaches {}, more than a quarter of the memory available",
            HumanBytes(largest)
        ));
    }
    implausible(&levels, claimed)
}

#[cfg(test)]
mod tests;
