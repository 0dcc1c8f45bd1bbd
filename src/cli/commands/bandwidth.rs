//! `memlat bandwidth`: sizes (measured plateaus or --sizes) x thread counts
//! -> GB/s per operation -> text, JSON, CSV.

use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use super::{notice, prepare, warn};
use crate::chain::Pattern;
use crate::cli::files::{Output, Role, check_files};
use crate::cli::interrupt::Interrupted;
use crate::cli::progress::until_ctrl_c;
use crate::cli::{BandwidthArgs, Format};
use crate::error::{UsageError, usage};
use crate::experiments::bandwidth::{self as experiment, BandwidthPoint, Plan};
use crate::experiments::plateaus::LevelSize;
use crate::kernels::KernelKind;
use crate::kernels::bandwidth::{self, Features};
use crate::limits::{self, Origin};
use crate::output::document::Document;
use crate::platform;
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
    /// How bytes are counted.
    bytes_counted: &'static str,
    /// Whether Ctrl-C cut the run short.
    complete: bool,
}

const BYTES_COUNTED: &str = "read and write: the buffer once a pass; copy: bytes read plus bytes written; per thread, summed over threads";

/// Runs `memlat bandwidth`.
pub fn run(args: &BandwidthArgs) -> Result<()> {
    check_files(&[
        ("-o/--output", args.measure.output.as_deref(), Role::Writes),
        ("--plot", args.plot.as_deref(), Role::Plot),
    ])?;
    if args.measure.pattern.is_some() {
        return usage("--pattern: memlat bandwidth streams through its buffers in order");
    }
    let output = Output::create(args.measure.output.as_deref())?;
    // Read before `prepare` pins this thread to one of them.
    let allowed = platform::allowed_cpus();
    let mut prepared = prepare(&args.measure, Pattern::Random, 5)?;
    for note in &prepared.notices {
        notice(note);
    }
    let cpus = cpus_in_order(prepared.engine.cpu(), &allowed);
    let threads = thread_counts(&args.threads, cpus.len())?;
    let available = platform::mem_available_bytes();
    let sizes: Vec<LevelSize> = if args.sizes.is_empty() {
        crate::cli::plateaus::measured_levels(
            &args.plateaus,
            &mut prepared.engine,
            &prepared.template,
        )?
        .sizes(bandwidth::BLOCK as u64, available)
    } else {
        args.sizes
            .iter()
            .map(|&s| {
                let size = limits::size(s, Origin::Flag("--sizes")).map_err(UsageError::from)?;
                Ok(LevelSize {
                    name: HumanBytes(size).to_string(),
                    size: size.max(bandwidth::BLOCK as u64),
                })
            })
            .collect::<Result<_>>()?
    };
    let most = threads.iter().copied().max().unwrap_or(1) as u64;
    for s in &sizes {
        crate::engine::ensure_memory(s.size.saturating_mul(most), available).map_err(|e| {
            UsageError(format!(
                "--sizes {} x {most} threads: {e}; give smaller sizes or fewer --threads",
                HumanBytes(s.size)
            ))
        })?;
    }
    let kernels = bandwidth::select(
        &Features::detect(),
        prepared.template.kernel == KernelKind::Portable,
    );
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
        "memlat bandwidth: {} kernels, {} size(s) x threads {:?}, {} samples of {} ms per figure",
        kernels.name,
        plan.sizes.len(),
        plan.threads,
        plan.repeats,
        args.measure.sample_ms
    );
    let points = until_ctrl_c(!args.no_progress, |observer| {
        experiment::run(&plan, observer)
    })?;
    let complete = points.len() == plan.sizes.len() * plan.threads.len();
    if let Some(path) = &args.plot
        && !points.is_empty()
    {
        crate::output::plot::bandwidth::plot(&points, kernels.name, path)?;
        notice(&format!("plot written to {}", path.display()));
    }
    let content = match args.measure.format {
        Format::Json => crate::output::result_json(
            "bandwidth",
            &BandwidthOutput {
                isa_kernel: kernels.name,
                points: &points,
                cpus: &cpus,
                clock_ghz: plan.ghz,
                bytes_counted: BYTES_COUNTED,
                complete,
            },
        )?,
        Format::Csv => experiment::table(&points).csv(),
        Format::Text => document(&points, kernels.name, plan.ghz).text(),
        Format::Markdown => document(&points, kernels.name, plan.ghz).markdown(),
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

fn document(points: &[BandwidthPoint], kernel: &str, ghz: f64) -> Document {
    let mut t = experiment::table(points);
    t.note(format!(
        "{kernel} kernels; GB/s = 10^9 bytes a second, the median of the samples (each figure's min and max are in the JSON); {BYTES_COUNTED}"
    ));
    if ghz > 0.0 {
        t.note(format!(
            "bytes per cycle at the {ghz:.3} GHz core clock memlat estimated"
        ));
    }
    let mut d = Document::new("memlat bandwidth: bytes a second each level delivers");
    d.table(t);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_default_to_one_and_all() {
        assert_eq!(thread_counts(&[], 2).unwrap(), vec![1, 2]);
        assert_eq!(thread_counts(&[], 1).unwrap(), vec![1]);
        assert_eq!(thread_counts(&[2, 1, 2], 4).unwrap(), vec![1, 2]);
        assert!(thread_counts(&[0], 4).is_err());
        assert!(thread_counts(&[5], 4).is_err());
    }
}
