//! The stages of `memlat characterize` as a table: one row per stage, its
//! command line in each mode, how long it takes, and what it needs. Adding a
//! stage is adding a row. Pure: no measuring, no files.

use std::ffi::OsString;
use std::path::PathBuf;

/// How much each stage measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Each command's defaults (several minutes).
    Full,
    /// `--quick`: fewer sizes, repeats and points (a minute on 2 CPUs).
    Quick,
    /// `--tiny` (hidden, for tests): a few seconds a stage.
    Tiny,
}

impl Mode {
    /// `full`, `quick` or `tiny`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Full => "full",
            Mode::Quick => "quick",
            Mode::Tiny => "tiny",
        }
    }
}

/// What a stage's command line depends on; the run fills it in as it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// Where every file goes.
    pub dir: PathBuf,
    /// How much to measure.
    pub mode: Mode,
    /// CPUs memlat may use.
    pub cpus: usize,
    /// This run's sweep, once it is done and shows plateaus.
    pub plateaus: Option<PathBuf>,
    /// A buffer beyond every cache level: from the sweep's plateaus when
    /// known, else from sysfs.
    pub dram_bytes: u64,
    /// The quick sweep's largest size ([`sweep_to`]).
    pub sweep_to: u64,
}

impl Context {
    /// `DIR/<stage>.json`.
    pub fn file(&self, stage: &str) -> PathBuf {
        self.dir.join(format!("{stage}.json"))
    }
}

/// One row of the table.
#[derive(Debug)]
pub struct Stage {
    /// Its name: the file `DIR/<name>.json` and the word `--stages` takes.
    pub name: &'static str,
    /// CPUs it needs (a line moves between two; traffic runs beside a chase).
    pub needs_cpus: usize,
    /// A flag this memlat must have, (command, long flag), for stages that
    /// arrive with a newer memlat.
    pub needs_flag: Option<(&'static str, &'static str)>,
    /// Seconds it takes on a 2-CPU guest, by mode and CPUs.
    pub seconds: fn(Mode, usize) -> f64,
    /// The memlat command line (without the program).
    pub args: fn(&Context) -> Vec<OsString>,
}

/// Every stage, in the order they run: the sweep before every stage that
/// places sizes in cache levels, since they take its plateaus.
pub const STAGES: &[Stage] = &[
    Stage {
        name: "doctor",
        needs_cpus: 1,
        needs_flag: None,
        seconds: |_, _| 1.0,
        args: |c| with_file(&["doctor", "--format", "json", "-o"], c.file("doctor"), &[]),
    },
    Stage {
        name: "sweep",
        needs_cpus: 1,
        needs_flag: None,
        seconds: |m, _| by_mode(m, 35.0, 6.0),
        args: sweep_args,
    },
    Stage {
        name: "bandwidth",
        needs_cpus: 1,
        needs_flag: None,
        seconds: |m, _| by_mode(m, 15.0, 6.0),
        args: |c| {
            let settings: &[&str] = match c.mode {
                Mode::Full => &[],
                Mode::Quick => &["--repeats", "3", "--sample-ms", "10"],
                Mode::Tiny => &["--threads", "1", "--repeats", "1", "--sample-ms", "2"],
            };
            let mut a = json_stage("bandwidth", c, settings);
            a.extend(sizes(c));
            a
        },
    },
    Stage {
        name: "mlp",
        needs_cpus: 1,
        needs_flag: None,
        seconds: |m, _| by_mode(m, 50.0, 4.0),
        args: |c| {
            let settings: &[&str] = match c.mode {
                Mode::Full => &[],
                Mode::Quick => &[
                    "--chains",
                    "1,2,4,8,12,16",
                    "--repeats",
                    "2",
                    "--sample-ms",
                    "10",
                ],
                Mode::Tiny => &["--chains", "1,2", "--repeats", "1", "--sample-ms", "2"],
            };
            let mut a = json_stage("mlp", c, settings);
            a.extend(sizes(c));
            a
        },
    },
    Stage {
        name: "tlb",
        needs_cpus: 1,
        needs_flag: None,
        seconds: |m, _| by_mode(m, 25.0, 5.0),
        args: |c| {
            let settings: &[&str] = match c.mode {
                Mode::Full => &[],
                Mode::Quick => &["--page-sizes", "4k", "--repeats", "1"],
                Mode::Tiny => &["--page-sizes", "4k", "--max-pages", "64", "--repeats", "1"],
            };
            json_stage("tlb", c, settings)
        },
    },
    Stage {
        name: "c2c",
        needs_cpus: 2,
        needs_flag: None,
        seconds: |m, cpus| {
            let pairs = (cpus * cpus.saturating_sub(1) / 2) as f64;
            match m {
                Mode::Full => 1.3 + pairs * 0.02,
                Mode::Quick => 1.3 + pairs.min(QUICK_PAIRS as f64) * 0.01,
                Mode::Tiny => 1.0,
            }
        },
        args: |c| {
            let sample = format!("sample:{QUICK_PAIRS}");
            let settings: Vec<&str> = match c.mode {
                Mode::Full => vec![],
                Mode::Quick if c.cpus * (c.cpus - 1) / 2 > QUICK_PAIRS => {
                    vec!["--method", "cas", "--pairs", &sample]
                }
                Mode::Quick => vec!["--method", "cas"],
                Mode::Tiny => vec!["--method", "cas", "--pairs", "sample:1"],
            };
            let mut a = json_stage("c2c", c, &settings);
            // The sharing check reads the sweep's last plateau; the tiny
            // sweep places none worth reading.
            match (&c.plateaus, c.mode) {
                (_, Mode::Tiny) => a.push("--no-sharing".into()),
                (Some(sweep), _) => a.extend(["--plateaus".into(), sweep.clone().into_os_string()]),
                (None, _) => {}
            }
            a
        },
    },
    Stage {
        name: "loaded",
        needs_cpus: 2,
        needs_flag: None,
        seconds: |m, _| by_mode(m, 25.0, 5.0),
        args: |c| {
            let settings: &[&str] = match c.mode {
                Mode::Full => &[],
                Mode::Quick => &[
                    "--delays",
                    "10000,1000,100,0",
                    "--repeats",
                    "2",
                    "--sample-ms",
                    "20",
                ],
                Mode::Tiny => &[
                    "--delays",
                    "0",
                    "--threads",
                    "1",
                    "--traffic-size",
                    "4M",
                    "--repeats",
                    "1",
                    "--sample-ms",
                    "2",
                ],
            };
            let mut a = json_stage("loaded", c, settings);
            a.extend(["-n".into(), chase_size(c).into()]);
            // The traffic loads memory (as large as the chase, beyond the
            // last level): 64 MiB buffers could sit in a large L3.
            if c.mode == Mode::Quick {
                a.extend(["--traffic-size".into(), chase_size(c).into()]);
            }
            a
        },
    },
    // The latency distribution of one DRAM-sized random chase (`memlat run
    // --distribution`): percentiles, modes and periodic stalls such as DRAM
    // refresh. A binary without the flag skips the stage and says so.
    Stage {
        name: "distribution",
        needs_cpus: 1,
        needs_flag: Some(("run", "distribution")),
        seconds: |m, _| by_mode(m, 10.0, 5.0),
        args: |c| {
            let mut a = json_stage("distribution", c, &[]);
            a.extend(words(&[
                "-n",
                &chase_size(c),
                "--pattern",
                "random",
                "--distribution",
            ]));
            if c.mode == Mode::Tiny {
                a.extend(words(&[
                    "--repeats",
                    "1",
                    "--sample-ms",
                    "2",
                    "--distribution-ms",
                    "20",
                ]));
            }
            a
        },
    },
];

/// Pairs the quick c2c samples on a machine with more.
const QUICK_PAIRS: usize = 120;

fn by_mode(mode: Mode, full: f64, quick: f64) -> f64 {
    match mode {
        Mode::Full => full,
        Mode::Quick => quick,
        Mode::Tiny => 2.0,
    }
}

fn words(items: &[&str]) -> Vec<OsString> {
    items.iter().map(OsString::from).collect()
}

/// `head`, the file, then `tail`.
fn with_file(head: &[&str], file: PathBuf, tail: &[&str]) -> Vec<OsString> {
    let mut a = words(head);
    a.push(file.into_os_string());
    a.extend(words(tail));
    a
}

/// `<command> --no-progress --format json -o DIR/<name>.json <settings>`
/// (the stage's name is the command's).
fn json_stage(name: &str, c: &Context, settings: &[&str]) -> Vec<OsString> {
    let command = if name == "distribution" { "run" } else { name };
    let mut a = words(&[command]);
    if command == "run" {
        // run has no progress to hide, and refuses to replace an earlier
        // result without --force: the directory was checked (or --force
        // given) before any stage, as for the sweep.
        a.push("--force".into());
    } else {
        a.push("--no-progress".into());
    }
    a.extend(with_file(
        &["--format", "json", "-o"],
        c.file(name),
        settings,
    ));
    a
}

fn sweep_args(c: &Context) -> Vec<OsString> {
    let to = c.sweep_to.to_string();
    let settings: Vec<&str> = match c.mode {
        Mode::Full => vec![],
        // The full sweep's grid (ratio 1.3), fewer repeats: a coarser grid
        // (1.5) left an L3 share of 9-13 MiB two points between the L2 and
        // memory, and the quick run missed it in 1 of 3 runs where every
        // full sweep found it. Coarser in repeats, never blind to a level.
        Mode::Quick => vec!["--pattern", "random", "--repeats", "2", "--to", &to],
        Mode::Tiny => vec![
            "--pattern",
            "random",
            "--from",
            "4K",
            "--to",
            "256K",
            "--ratio",
            "2",
            "--repeats",
            "1",
            "--sample-ms",
            "1",
            "--no-refine",
        ],
    };
    // --force: the directory was checked (or --force given) before any stage.
    let mut a = words(&["sweep", "--no-progress", "--force"]);
    a.extend(words(&settings));
    a.extend(with_file(&["--json"], c.file("sweep"), &[]));
    a
}

/// Where bandwidth and mlp take their sizes: this run's sweep when it shows
/// plateaus, else their own default (the remembered sweep, or a probe).
fn sizes(c: &Context) -> Vec<OsString> {
    match (&c.plateaus, c.mode) {
        (_, Mode::Tiny) => words(&["--sizes", "64K"]),
        (Some(sweep), _) => vec!["--plateaus".into(), sweep.clone().into_os_string()],
        (None, _) => Vec::new(),
    }
}

/// The chase's buffer beyond every cache, in bytes.
fn chase_size(c: &Context) -> String {
    match c.mode {
        Mode::Tiny => "4M".into(),
        _ => c.dram_bytes.to_string(),
    }
}

/// The quick sweep's largest size: 4x the largest cache sysfs lists, from
/// 256 MiB to 512 MiB (the default sweep's sizes past that, to 4 GiB, cost
/// most of its time; a guest's share of a large L3 is far smaller than the
/// L3), at most a quarter of the memory available.
pub fn sweep_to(largest_cache: Option<u64>, available: Option<u64>) -> u64 {
    let to = largest_cache
        .unwrap_or(64 << 20)
        .saturating_mul(4)
        .clamp(256 << 20, 512 << 20);
    available.map_or(to, |a| to.min(a / 4).max(1 << 20))
}

/// A stage of this run: the row, why it does not run here (if so), and its
/// estimated seconds.
#[derive(Debug)]
pub struct Planned {
    /// The row.
    pub stage: &'static Stage,
    /// Why it is skipped here, said in the summary.
    pub skip: Option<String>,
    /// Seconds it should take here.
    pub estimate: f64,
}

/// The stages to run: all, or those `only` names (in table order); those
/// this machine or this memlat cannot run are kept with the reason.
/// `has_flag(command, flag)` says whether this memlat's command has a flag.
pub fn plan(
    mode: Mode,
    cpus: usize,
    only: &[String],
    has_flag: &dyn Fn(&str, &str) -> bool,
) -> Result<Vec<Planned>, String> {
    let names: Vec<&str> = STAGES.iter().map(|s| s.name).collect();
    if let Some(bad) = only.iter().find(|o| !names.contains(&o.trim())) {
        return Err(format!(
            "--stages {bad}: no such stage; give some of {}",
            names.join(",")
        ));
    }
    Ok(STAGES
        .iter()
        .filter(|s| only.is_empty() || only.iter().any(|o| o.trim() == s.name))
        .map(|stage| {
            let skip = if cpus < stage.needs_cpus {
                Some(format!(
                    "needs {} CPUs and memlat may use {cpus} here (a wider affinity, e.g. taskset -c 0-1, or a larger machine)",
                    stage.needs_cpus
                ))
            } else {
                stage.needs_flag.and_then(|(command, flag)| {
                    (!has_flag(command, flag)).then(|| {
                        format!("this memlat has no `memlat {command} --{flag}` yet (a later one has)")
                    })
                })
            };
            Planned {
                stage,
                estimate: if skip.is_some() {
                    0.0
                } else {
                    (stage.seconds)(mode, cpus)
                },
                skip,
            }
        })
        .collect())
}

/// Seconds left: the estimates of the stages still to run, scaled by how
/// the finished ones compared with theirs. The pace starts from 10 s as
/// estimated, so a stage of a second does not swing the rest, and stays
/// within 0.5x to 3x.
pub fn time_left(remaining: &[f64], done_actual: f64, done_estimated: f64) -> f64 {
    const PRIOR: f64 = 10.0;
    let pace = ((done_actual + PRIOR) / (done_estimated + PRIOR)).clamp(0.5, 3.0);
    remaining.iter().sum::<f64>() * pace
}
