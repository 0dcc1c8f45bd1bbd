//! `memlat detect`: the levels of a latency curve (a sweep file, or a quick
//! sweep measured now), with sysfs and CPUID claims beside.

use anyhow::Result;
use serde::Serialize;

use crate::analysis::detect::{self, DetectedLevel, Detection, Translation};
use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{notice, prepare};
use crate::cli::files::Output;
use crate::cli::files::{SweepFiles, SweepObserver};
use crate::cli::{DetectArgs, Format};
use crate::error::UsageError;
use crate::error::usage;
use crate::experiments::sweep::{self, SeriesKey, SweepPlan, SweepResult};
use crate::limits::{self, Origin};
use crate::output;
use crate::output::document::Document;
use crate::platform;
use crate::platform::caches::{self, CacheInfo};
use crate::platform::cpuid;

/// What `memlat detect --format json` prints.
#[derive(Serialize)]
struct DetectOutput<'a> {
    /// Levels found, smallest first, memory last.
    levels: &'a [DetectedLevel],
    /// A climb past memory that is translation cost (page walks), not a level; null when none.
    translation: Option<Translation>,
    /// How each level's `size_bytes` is defined.
    capacity_definition: &'a str,
    /// Remarks on the whole curve.
    notes: &'a [String],
    /// Where the curve came from: a file, or `quick sweep`.
    source: String,
    /// Points in the curve.
    points: usize,
    /// The data caches sysfs claims (beside, not used).
    sysfs_caches: &'a [CacheInfo],
    /// The data caches CPUID claims (x86, quick sweep only; beside, not used).
    cpuid_caches: &'a [CacheInfo],
    /// Prefetcher state during the quick sweep (`as recorded` for a file).
    prefetchers: String,
    /// Whether Ctrl-C cut the quick sweep short (the levels are of the sizes measured).
    partial: bool,
}

/// Runs `memlat detect`.
pub fn run(args: &DetectArgs) -> Result<()> {
    use crate::cli::files::{Role, check_files};
    check_files(&[
        ("FILE", args.results.as_deref(), Role::Reads),
        ("-o/--output", args.measure.output.as_deref(), Role::Writes),
    ])?;
    let output = Output::create(args.measure.output.as_deref())?;
    if args.results.is_some() {
        let given = [
            ("--from", args.from != 2 << 10),
            ("--to", args.to.is_some()),
            ("--ratio", args.ratio != 1.5),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return usage(format!(
                "{flag} with a results file: the curve is the file's; leave {flag} out (or give no file to measure a quick sweep)"
            ));
        }
    }
    let (result, source, prefetchers) = match &args.results {
        Some(path) => (
            SweepResult::load(path)?,
            path.display().to_string(),
            "not changed by memlat detect (see the sweep's own record)".to_string(),
        ),
        None => quick_sweep(args)?,
    };
    if let Some(path) = &args.results
        && let Some(note) = result.older_notice(path)
    {
        crate::cli::common::notice(&note);
    }
    let curve = result.curve();
    if curve.is_empty() {
        return usage(
            "the results hold no points to detect levels in; give a finished sweep's JSON or none",
        );
    }
    let mut detection = detect::detect_with_pages(
        &curve,
        &result.sysfs_caches,
        result.page_test.as_ref(),
        &result.load_spreads,
    );
    // CPUID describes this machine: compare it only with a curve measured here now.
    let cpuid_caches = if args.results.is_none() {
        cpuid::data_caches()
    } else {
        Vec::new()
    };
    cross_check_cpuid(&mut detection, &result.sysfs_caches, &cpuid_caches);
    let interrupted = args.results.is_none() && crate::cli::interrupt::interrupted();
    if interrupted {
        detection.notes.insert(
            0,
            format!(
                "PARTIAL: interrupted (Ctrl-C) after {} of {} sizes; these levels are of the sizes measured, and memory may not have been reached",
                curve.len(),
                result.config.sizes.len()
            ),
        );
    }
    // JSON is written from the result, text and markdown from its JSON value.
    let out = DetectOutput {
        levels: &detection.levels,
        translation: detection.translation,
        capacity_definition: &detection.capacity_definition,
        notes: &detection.notes,
        source: source.clone(),
        points: curve.len(),
        sysfs_caches: &result.sysfs_caches,
        cpuid_caches: &cpuid_caches,
        prefetchers: prefetchers.clone(),
        partial: interrupted,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.measure.format {
        Format::Json => output::result_json("detect", &out)?,
        Format::Csv => crate::output::detect::levels_table(&detection).csv(),
        Format::Text | Format::Markdown => {
            let mut d =
                Document::new("levels found in the measured curve (sysfs shown beside, not used)");
            d.line(format!(
                "curve: {source} ({} points); prefetchers: {prefetchers}",
                curve.len()
            ));
            for t in crate::output::present::headline(crate::readback::Kind::Detect, &value)? {
                d.table(t);
            }
            if args.measure.format == Format::Text {
                d.text()
            } else {
                d.markdown()
            }
        }
    };
    output.write(&content)?;
    if interrupted {
        return Err(crate::cli::interrupt::Interrupted(
            "memlat detect: interrupted; the levels above are partial".into(),
        )
        .into());
    }
    Ok(())
}

/// Measures a random-chain sweep with few repeats.
fn quick_sweep(args: &DetectArgs) -> Result<(SweepResult, String, String)> {
    let ratio = limits::ratio(args.ratio, Origin::Flag("--ratio")).map_err(UsageError::from)?;
    if args.from < 64 {
        return usage(format!("--from {}: start at 64 bytes or more", args.from));
    }
    let (to, end) = match args.to {
        Some(to) => (
            limits::size(to, Origin::Flag("--to")).map_err(UsageError::from)?,
            sweep::RangeEnd::To,
        ),
        None => (
            sweep::default_cap(platform::mem_available_bytes()),
            sweep::RangeEnd::FlatDram,
        ),
    };
    if to <= args.from {
        return usage(format!(
            "--to {to}: the largest size must be above --from {}",
            args.from
        ));
    }
    limits::sweep_steps(args.from, to, ratio, Origin::Flag("--ratio")).map_err(UsageError::from)?;
    let mut prepared = prepare(&args.measure, Pattern::Random, 3)?;
    for note in &prepared.notices {
        notice(note);
    }
    let caches = caches::data_caches(prepared.engine.cpu());
    let key = match prepared.template.pattern {
        Pattern::Stride => SeriesKey::stride(4096),
        other => SeriesKey::pattern(other),
    };
    let cpu = prepared.engine.cpu();
    let range = sweep::Range {
        from: args.from,
        to,
        ratio,
        end,
    };
    let plan = SweepPlan::new(
        prepared.template.clone(),
        cpu,
        range,
        vec![key],
        Vec::new(),
        caches,
    );
    // Every size is checked before the first is measured.
    super::sweep::check_memory(&plan, None)?;
    eprintln!(
        "memlat detect: measuring a quick {} sweep, {} sizes from {} to {} bytes",
        key.label(),
        plan.config.sizes.len(),
        args.from,
        to
    );
    let files = SweepFiles::default();
    let result = sweep::run(
        &mut prepared.engine,
        &plan,
        &mut SweepObserver::new(&files, true),
    )?;
    report_cycle_source(&prepared.engine);
    Ok((
        result,
        "quick sweep".into(),
        prepared.prefetch.status.clone(),
    ))
}

/// Adds CPUID's claims (x86) beside sysfs's, as notes.
fn cross_check_cpuid(detection: &mut Detection, sysfs: &[CacheInfo], cpuid: &[CacheInfo]) {
    if cpuid.is_empty() {
        return;
    }
    let disagreements = cpuid::disagreements(sysfs, cpuid);
    let claims: Vec<String> = cpuid
        .iter()
        .map(|c| {
            format!(
                "{} {} {}-way",
                c.name(),
                crate::units::HumanBytes(c.size_bytes),
                c.ways.unwrap_or(0)
            )
        })
        .collect();
    if disagreements.is_empty() {
        detection
            .notes
            .push(format!("CPUID agrees with sysfs: {}", claims.join(", ")));
    } else {
        detection.notes.extend(disagreements);
    }
}
