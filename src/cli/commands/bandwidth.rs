//! `memlat bandwidth`: sizes (measured plateaus or --sizes) x thread counts
//! -> GB/s per operation -> text, JSON, CSV.

use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use crate::chain::Pattern;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::{Output, Role, check_files};
use crate::cli::interrupt::Interrupted;
use crate::cli::progress::until_ctrl_c;
use crate::cli::{BandwidthArgs, Format};
use crate::error::{UsageError, usage};
use crate::experiments::bandwidth::{self as experiment, BandwidthPoint, Plan, SweepInfo};
use crate::experiments::plateaus::LevelSize;
use crate::experiments::quick::MIN_DRAM_SIZE;
use crate::kernels::KernelKind;
use crate::kernels::bandwidth::{self, Features};
use crate::limits::{self, Origin};
use crate::output::document::Document;
use crate::output::present;
use crate::platform;
use crate::readback::Kind;
use crate::units::HumanBytes;

/// What `memlat bandwidth --format json` prints (beside schema_version, kind, host).
#[derive(Serialize)]
struct BandwidthOutput<'a> {
    /// The kernels used: `avx512`, `avx2`, `sse2` or `portable`.
    isa_kernel: &'static str,
    /// One per size and thread count.
    points: &'a [BandwidthPoint],
    /// The CPUs threads were pinned to, in order.
    cpus: &'a [usize],
    /// Core clock used for bytes per cycle, GHz.
    clock_ghz: f64,
    /// What the core's documentation says its L1 loads at the kernels'
    /// vector width, bytes a cycle: the hardware's figure beside the
    /// measured one, never a measurement (null where memlat's table does
    /// not know the core).
    documented_peak: Option<bandwidth::peak::DocumentedPeak>,
    /// How bytes are counted.
    bytes_counted: &'static str,
    /// Samples per figure.
    repeats: u32,
    /// Target length of one sample, ms.
    sample_ms: u64,
    /// The sweep's bounds and the plateaus its levels come from (null
    /// without --sweep).
    sweep: Option<&'a SweepInfo>,
    /// Whether Ctrl-C cut the run short.
    complete: bool,
}

const BYTES_COUNTED: &str = "read and write: the buffer once a pass; copy: bytes read plus bytes written; per thread, summed over threads";

/// Runs `memlat bandwidth`.
pub fn run(args: &BandwidthArgs) -> Result<()> {
    check_files(&[
        ("-o/--output", args.measure.output.as_deref(), Role::Writes),
        ("--plot", args.plot.as_deref(), Role::Plot),
        ("--plateaus", args.plateaus.file(), Role::Reads),
    ])?;
    if args.measure.pattern.is_some() {
        return usage("--pattern: memlat bandwidth streams through its buffers in order");
    }
    check_sweep_flags(args)?;
    // Chosen before anything is measured: a name this CPU cannot run fails at once.
    let features = Features::detect();
    let kernels = match &args.vectors {
        Some(name) => {
            if args.measure.kernel == KernelKind::Portable && name != "portable" {
                return usage(format!(
                    "--vectors {name} with --kernel portable: give one of them"
                ));
            }
            bandwidth::by_name(name, &features).map_err(|runnable| {
                UsageError(format!(
                    "--vectors {name}: this CPU runs {}; give one of them",
                    runnable.join(", ")
                ))
            })?
        }
        None => bandwidth::select(&features, args.measure.kernel == KernelKind::Portable),
    };
    let from = sweep_bound(args.from, SWEEP_FROM, "--from")?;
    if let Some(to) = args
        .to
        .map(|to| sweep_bound(Some(to), 0, "--to"))
        .transpose()?
        && to <= from
    {
        return usage(format!(
            "--to {}: give a size above --from {}",
            HumanBytes(to),
            HumanBytes(from)
        ));
    }
    let output = Output::create(args.measure.output.as_deref())?;
    // Read before `prepare` pins this thread to one of them.
    let allowed = platform::allowed_cpus();
    let default_repeats = if args.sweep { SWEEP_REPEATS } else { 5 };
    let mut prepared = prepare(&args.measure, Pattern::Random, default_repeats)?;
    for note in &prepared.notices {
        notice(note);
    }
    let cpus = cpus_in_order(prepared.engine.cpu(), &allowed);
    let threads = thread_counts(&args.threads, cpus.len())?;
    let available = platform::mem_available_bytes();
    let mut sweep = None;
    let sizes: Vec<LevelSize> = if args.sweep {
        let levels = crate::cli::plateaus::measured_plateaus(
            &args.plateaus,
            &mut prepared.engine,
            &prepared.template,
        )?;
        let memory = levels
            .sizes(bandwidth::BLOCK as u64, available)
            .last()
            .map_or(MIN_DRAM_SIZE, |l| l.size);
        let to = sweep_bound(args.to, memory, "--to")?;
        if to <= from {
            return usage(format!(
                "--from {}: give a size below --to (here the memory size {})",
                HumanBytes(from),
                HumanBytes(to)
            ));
        }
        let per_octave = args.per_octave.unwrap_or(SWEEP_PER_OCTAVE);
        let sizes = experiment::sweep_plan(from, to, per_octave, &levels);
        sweep = Some(SweepInfo {
            from_bytes: from,
            to_bytes: to,
            per_octave,
            memory_from_bytes: experiment::memory_from(&levels),
            plateaus: levels,
        });
        if let Some(s) = &sweep {
            notice(&s.describe());
        }
        sizes
    } else if args.sizes.is_empty() {
        crate::cli::plateaus::measured_levels(
            &args.plateaus,
            &mut prepared.engine,
            &prepared.template,
        )?
        .sizes(bandwidth::BLOCK as u64, available)
    } else {
        // Labelled by the size measured (a block at least), and each once,
        // as --threads 1,1 is.
        let mut sizes: Vec<LevelSize> = Vec::new();
        for &s in &args.sizes {
            let size = limits::size(s, Origin::Flag("--sizes"))
                .map_err(UsageError::from)?
                .max(bandwidth::BLOCK as u64);
            if sizes.iter().all(|l| l.size != size) {
                sizes.push(LevelSize {
                    name: HumanBytes(size).to_string(),
                    size,
                });
            }
        }
        sizes
    };
    let most = threads.iter().copied().max().unwrap_or(1) as u64;
    for s in &sizes {
        crate::engine::ensure_memory(s.size.saturating_mul(most), available).map_err(|e| {
            let flag = if args.sweep {
                "--to"
            } else if args.sizes.is_empty() {
                "--plateaus"
            } else {
                "--sizes"
            };
            UsageError(format!(
                "{flag} {} x {most} threads: {e}; give smaller sizes or fewer --threads",
                HumanBytes(s.size)
            ))
        })?;
    }

    let plan = Plan {
        sizes,
        threads,
        cpus: cpus.clone(),
        kernels,
        repeats: prepared.template.repeats,
        sample_time: Duration::from_millis(args.measure.sample_ms),
        pages: prepared.template.pages,
        ghz: prepared.engine.clock_ghz(),
    };
    eprintln!(
        "memlat bandwidth: {} kernels, {} size(s) x threads {:?}, {} samples of {} ms per figure{}",
        kernels.name,
        plan.sizes.len(),
        plan.threads,
        plan.repeats,
        args.measure.sample_ms,
        if sweep.is_some() {
            " (a sweep; the level table takes 5 of 20 ms)"
        } else {
            ""
        }
    );
    let points = until_ctrl_c(!args.no_progress, |observer| {
        experiment::run(&plan, observer)
    })?;
    let complete = points.len() == plan.sizes.len() * plan.threads.len();
    if let Some(path) = &args.plot
        && !points.is_empty()
    {
        crate::output::plot::bandwidth::plot(
            &points,
            kernels.name,
            sweep.as_ref().map(|s| &s.plateaus),
            path,
        )?;
        notice(&format!("plot written to {}", path.display()));
    }
    // JSON is written from the result, text and markdown from its JSON value.
    let out = BandwidthOutput {
        isa_kernel: kernels.name,
        points: &points,
        cpus: &cpus,
        clock_ghz: plan.ghz,
        documented_peak: bandwidth::peak::this_cpu(kernels.vector_bytes),
        bytes_counted: BYTES_COUNTED,
        repeats: plan.repeats,
        sample_ms: args.measure.sample_ms,
        sweep: sweep.as_ref(),
        complete,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.measure.format {
        Format::Json => crate::output::result_json("bandwidth", &out)?,
        Format::Csv => present::bandwidth_table(&points).csv(),
        Format::Text => document(&value, sweep.is_some())?.text(),
        Format::Markdown => document(&value, sweep.is_some())?.markdown(),
    };
    output.write(&content)?;
    if !complete {
        warn("interrupted: the rows above are complete, the rest were not measured");
        return Err(Interrupted("memlat bandwidth: interrupted".into()).into());
    }
    Ok(())
}

/// The measuring CPU first, then every other CPU memlat may use.
fn cpus_in_order(first: usize, allowed: &[usize]) -> Vec<usize> {
    let mut cpus = vec![first];
    cpus.extend(allowed.iter().copied().filter(|&c| c != first));
    cpus
}

/// --threads checked (1 to the CPUs available, each once), or 1 and all.
fn thread_counts(given: &[usize], available: usize) -> Result<Vec<usize>> {
    let mut counts: Vec<usize> = if given.is_empty() {
        vec![1, available]
    } else {
        given.to_vec()
    };
    if let Some(bad) = counts.iter().find(|&&n| n == 0 || n > available) {
        return usage(format!(
            "--threads {bad}: give 1 to {available} (one thread per CPU memlat may use)"
        ));
    }
    counts.sort_unstable();
    counts.dedup();
    Ok(counts)
}

/// The headline (the table and how its figures were made) under a title.
fn document(value: &serde_json::Value, sweep: bool) -> Result<Document> {
    let mut d = Document::new(if sweep {
        "memlat bandwidth --sweep: bytes a second by working-set size"
    } else {
        "memlat bandwidth: bytes a second each level delivers"
    });
    for t in present::headline(Kind::Bandwidth, value)? {
        d.table(t);
    }
    Ok(d)
}

/// The smallest size a sweep starts at by default.
const SWEEP_FROM: u64 = 4 << 10;
/// Sizes a doubling by default.
const SWEEP_PER_OCTAVE: u32 = 4;
/// Samples per figure in a sweep by default (the level table takes 5).
const SWEEP_REPEATS: u32 = 3;

/// --sweep's companions only with it, and --sizes never with it.
fn check_sweep_flags(args: &BandwidthArgs) -> Result<()> {
    if args.sweep && !args.sizes.is_empty() {
        return usage(
            "--sizes: a sweep (--sweep) chooses its own sizes; give one of them (bound a sweep with --from and --to)",
        );
    }
    if !args.sweep {
        let given = [
            ("--from", args.from.is_some()),
            ("--to", args.to.is_some()),
            ("--per-octave", args.per_octave.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return usage(format!("{flag}: only with --sweep (add --sweep)"));
        }
    }
    if let Some(n) = args.per_octave.filter(|n| !(1..=16).contains(n)) {
        return usage(format!("--per-octave {n}: give 1 to 16 sizes a doubling"));
    }
    Ok(())
}

/// A sweep's bound: given (checked, at least two blocks) or the default.
fn sweep_bound(given: Option<u64>, default: u64, flag: &'static str) -> Result<u64> {
    let Some(bytes) = given else {
        return Ok(default);
    };
    let size = limits::size(bytes, Origin::Flag(flag)).map_err(UsageError::from)?;
    if size < 2 * bandwidth::BLOCK as u64 {
        return usage(format!(
            "{flag} {}: give at least {} (two 256-byte blocks)",
            HumanBytes(bytes),
            HumanBytes(2 * bandwidth::BLOCK as u64)
        ));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(extra: &[&str]) -> BandwidthArgs {
        let cli =
            crate::cli::Cli::try_parse_from(["memlat", "bandwidth"].iter().chain(extra)).unwrap();
        match cli.command {
            Some(crate::cli::Command::Bandwidth(args)) => args,
            _ => panic!("expected bandwidth"),
        }
    }

    #[test]
    fn a_sweep_samples_shorter_unless_told_and_its_flags_go_with_it() {
        assert_eq!(parse(&[]).measure.sample_ms, 20);
        assert_eq!(parse(&["--sweep"]).measure.sample_ms, 5);
        assert_eq!(parse(&["--sweep", "--sample-ms", "7"]).measure.sample_ms, 7);
        assert!(
            check_sweep_flags(&parse(&["--sweep", "--from", "8K", "--per-octave", "3"])).is_ok()
        );
        let refused = |extra: &[&str]| {
            check_sweep_flags(&parse(extra))
                .unwrap_err()
                .downcast::<UsageError>()
                .unwrap()
                .0
        };
        assert!(refused(&["--sweep", "--sizes", "16K"]).starts_with("--sizes:"));
        assert!(refused(&["--to", "1M"]).starts_with("--to: only with --sweep"));
        assert!(refused(&["--sweep", "--per-octave", "17"]).starts_with("--per-octave 17"));
        assert_eq!(sweep_bound(None, 4096, "--from").unwrap(), 4096);
        assert_eq!(sweep_bound(Some(8192), 4096, "--from").unwrap(), 8192);
        assert!(sweep_bound(Some(100), 4096, "--from").is_err());
    }

    #[test]
    fn thread_counts_default_to_one_and_all() {
        assert_eq!(thread_counts(&[], 2).unwrap(), vec![1, 2]);
        assert_eq!(thread_counts(&[], 1).unwrap(), vec![1]);
        assert_eq!(thread_counts(&[2, 1, 2], 4).unwrap(), vec![1, 2]);
        assert!(thread_counts(&[0], 4).is_err());
        assert!(thread_counts(&[5], 4).is_err());
    }
}
