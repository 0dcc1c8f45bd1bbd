//! `memlat run`: one size, one stride or pattern, one trustworthy figure.

use crate::experiments::noise::Noise;
use anyhow::Result;

use crate::chain::Pattern;
use crate::cli::common::{notice, prepare_with_events, warn};
use crate::cli::files::Output;
use crate::cli::{Format, RunArgs};
use crate::engine::{CycleSource, Engine, Measurement};
use crate::error::UsageError;
use crate::error::usage;
use crate::kernels::UNROLL;
use crate::limits::{self, Origin};
use crate::output::{self, csv, text};

/// Seed 004's default events: `memlat run` counts these when -e is not given,
/// so the seed's notebook finds every column it plots (`nan` where this
/// machine cannot count one).
pub const SEED_EVENTS: &str = "instructions,cycles,L1-dcache-load-misses,cache-misses";

/// Seed 004's default number of accesses, for `ptr_chase`.
pub const SEED_ACCESSES: u64 = 100_000_000;

/// Runs `memlat run`.
pub fn run(args: &RunArgs) -> Result<()> {
    measure_and_print(args, View::Memlat)
}

/// memlat invoked as `ptr_chase` (seed 004's program name): `memlat run` with
/// the seed's defaults (-a 100000000) and the seed's own view.
pub fn ptr_chase(args: &RunArgs) -> Result<()> {
    let args = RunArgs {
        accesses: args.accesses.or(Some(SEED_ACCESSES)),
        ..args.clone()
    };
    measure_and_print(&args, View::Seed)
}

/// Which text view to print.
#[derive(Clone, Copy, PartialEq)]
enum View {
    /// Seed 004's lines, then every memlat figure (`memlat run`).
    Memlat,
    /// Seed 004's lines only (`ptr_chase`).
    Seed,
}

fn measure_and_print(args: &RunArgs, view: View) -> Result<()> {
    let size = limits::size(args.size, Origin::Flag("-n/--size")).map_err(UsageError::from)?;
    let stride =
        limits::stride(args.stride, Origin::Flag("-s/--stride")).map_err(UsageError::from)?;
    let accesses = args
        .accesses
        .map(|a| limits::accesses(a, Origin::Flag("-a/--accesses")))
        .transpose()
        .map_err(UsageError::from)?;
    let distribution = distribution_time(args)?;
    crate::cli::files::check_output_and_plot(args.measure.output.as_deref(), args.plot.as_deref())?;
    let output = Output::create_forced(args.measure.output.as_deref(), args.force)?;
    let mut notes = Vec::new();
    if size != args.size {
        notes.push(format!(
            "-n/--size {} rounded up to {size} (a multiple of 8)",
            args.size
        ));
    }
    if stride != args.stride {
        notes.push(format!(
            "-s/--stride {} rounded up to {stride} (a multiple of 8)",
            args.stride
        ));
    }
    if let Some(a) = accesses
        && !a.is_multiple_of(UNROLL)
    {
        notes.push(format!(
            "-a/--accesses {a} rounded up to {} (a multiple of the {UNROLL}-load unrolled loop)",
            a.div_ceil(UNROLL) * UNROLL
        ));
    }
    // Timed load by load, a stride chain beyond L1 times the prefetchers:
    // --distribution times a random chain unless a pattern is given.
    let default_pattern = if distribution.is_some() {
        Pattern::Random
    } else {
        Pattern::Stride
    };
    let pattern = args.measure.pattern.unwrap_or(default_pattern);
    if pattern == Pattern::Stride && stride >= size {
        let chain = crate::chain::Chain::stride(size, stride)?;
        // One 8-byte node is no chain at any stride: then only a larger size helps.
        if chain.len() == 1 && size == 8 {
            return usage(format!(
                "-n/--size {} is one 8-byte node: every load would reread it; give -n 16 or more, e.g. -n 16K",
                args.size
            ));
        }
        if chain.len() == 1 {
            return usage(format!(
                "-s/--stride {stride} is a multiple of -n/--size {size}: every load would reread one node; give a stride below the size, e.g. -s 8"
            ));
        }
        notes.push(format!(
            "-s/--stride {stride} is not below -n/--size {size}: the chain wraps (a[k] = (k + s) mod n) and visits {} nodes",
            chain.len()
        ));
    }
    let mut prepared = prepare_with_events(&args.measure, default_pattern, 5, Some(SEED_EVENTS))?;
    notes.append(&mut prepared.notices);
    if distribution.is_some() {
        let l1 = crate::platform::caches::data_caches(prepared.engine.cpu())
            .first()
            .map(|c| c.size_bytes);
        notes.extend(distribution_pattern_note(args.measure.pattern, size, l1));
    }
    for note in &notes {
        notice(note);
    }
    let spec = crate::engine::Point {
        size,
        stride,
        accesses,
        distribution,
        // Without --repeats, stop once the median is placed (2 repeats that
        // agree within the engine's precision), up to 5 + 2 on a noisy point.
        until_precise: args.measure.repeats.is_none(),
        ..prepared.template
    };
    if let Some(a) = accesses {
        check_duration(
            &spec,
            a,
            &crate::platform::caches::data_caches(prepared.engine.cpu()),
        )?;
    }
    let watch = crate::experiments::noise::Watch::start(&mut prepared.engine, &spec);
    let measurement = prepared.engine.measure(&spec)?;
    let noise = watch.finish(&mut prepared.engine, &spec, &[measurement.ns_per_load.cv]);
    report_cycle_source(&prepared.engine);
    for warning in &measurement.warnings {
        warn(warning);
    }
    if noise.noisy() {
        warn(&noise.describe());
    }
    if let (Some(asked), Some(d)) = (distribution, &measurement.distribution) {
        // A timeline holds at most 2^22 timings (16 MiB of deltas): a longer
        // --distribution-ms is cut there; say so rather than let it pass.
        let asked_ms = asked.as_secs_f64() * 1e3;
        if d.timeline_ms < 0.8 * asked_ms {
            warn(&format!(
                "--distribution-ms {asked_ms:.0}: timed {:.0} ms ({} loads), the most one timeline holds at this size; give less, or run again for more",
                d.timeline_ms, d.loads_timed
            ));
        }
    }
    if let (Some(path), Some(d)) = (&args.plot, &measurement.distribution) {
        crate::output::plot::distribution::plot(d, &measurement, path)?;
        notice(&format!("plot written to {}", path.display()));
    }
    output.write(&render(
        &measurement,
        Some(&noise),
        args.measure.format,
        view,
    )?)
}

/// What `--distribution` says about the chain it times: random unless a
/// pattern was given; a stride chain larger than L1 (`l1_bytes`) is served
/// by the prefetchers, so its loads are not the level's latency.
fn distribution_pattern_note(
    given: Option<Pattern>,
    size: u64,
    l1_bytes: Option<u64>,
) -> Option<String> {
    match given {
        None => Some(
            "--distribution times a random chain (no --pattern given): a stride chain beyond L1 would time the prefetchers"
                .into(),
        ),
        Some(Pattern::Stride) if size > l1_bytes.unwrap_or(32 << 10) => Some(format!(
            "--pattern stride at {}: the prefetchers serve a stride chain beyond L1, so these loads are not the level's latency (prefetched loads read 0-2 ns); --pattern random times it",
            crate::units::HumanBytes(size)
        )),
        _ => None,
    }
}

/// How long `--distribution` times loads, checked; `None` without it.
fn distribution_time(args: &RunArgs) -> Result<Option<std::time::Duration>> {
    if !args.distribution {
        if args.plot.is_some() {
            return usage("--plot draws the distribution: add --distribution");
        }
        return Ok(None);
    }
    let ms = limits::distribution_ms(args.distribution_ms, Origin::Flag("--distribution-ms"))
        .map_err(UsageError::from)?;
    if args.measure.kernel == crate::kernels::KernelKind::Index {
        return usage("--distribution times the pointer chain load by load: drop --kernel index");
    }
    if crate::kernels::timed_by().is_none() {
        return usage(
            "--distribution: this ISA has no per-load timer in memlat (x86_64, aarch64 and riscv64 do)",
        );
    }
    Ok(Some(std::time::Duration::from_millis(ms)))
}

/// Longest a sample (A + 2A loads, a round) may take with -a: five minutes.
const MAX_SAMPLE_SECONDS: f64 = 300.0;

/// A generous guess of a load's latency at `size` from the caches claimed
/// (used only to warn or refuse before a run, never reported).
fn latency_guess_ns(size: u64, caches: &[crate::platform::caches::CacheInfo]) -> f64 {
    const BY_LEVEL: [f64; 3] = [2.0, 8.0, 50.0];
    caches
        .iter()
        .position(|c| size <= c.size_bytes)
        .map_or(250.0, |i| BY_LEVEL[i.min(BY_LEVEL.len() - 1)])
}

/// With -a fixed, says how long the run will take when that is over a
/// minute, and refuses a sample longer than [`MAX_SAMPLE_SECONDS`].
fn check_duration(
    point: &crate::engine::Point,
    accesses: u64,
    caches: &[crate::platform::caches::CacheInfo],
) -> Result<()> {
    let per_load = latency_guess_ns(point.size, caches) * 1e-9;
    let sample = 3.0 * accesses as f64 * per_load;
    if sample > MAX_SAMPLE_SECONDS {
        return usage(format!(
            "-a/--accesses {accesses}: one sample (A then 2A loads) at {} would take about {:.0} minutes; give a smaller -a, e.g. -a {}",
            crate::units::HumanBytes(point.size),
            sample / 60.0,
            ((MAX_SAMPLE_SECONDS / 10.0) / (3.0 * per_load)) as u64 / 100 * 100
        ));
    }
    let run = sample * f64::from(crate::engine::ROUNDS) * f64::from(point.repeats);
    if run > 60.0 {
        notice(&format!(
            "this run will take about {:.0} minutes ({} repeats of {} rounds of {accesses} + {} loads)",
            run / 60.0,
            point.repeats,
            crate::engine::ROUNDS,
            2 * accesses
        ));
    }
    Ok(())
}

fn render(m: &Measurement, noise: Option<&Noise>, format: Format, view: View) -> Result<String> {
    Ok(match format {
        Format::Text if view == View::Seed => text::seed_view(m),
        Format::Text | Format::Markdown => {
            let mut text = text::measurement(m);
            if let Some(d) = &m.distribution {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text += &text::distribution(d);
            }
            // `key = value` lines like the rest: seed 004's reader takes
            // every `key: value` line for a number.
            if let Some(noise) = noise {
                let or_nan = |v: Option<f64>| v.map_or("nan".into(), |v| format!("{v:.4}"));
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text += &format!(
                    "noise_steal_fraction   = {}\nnoise_repeat_cv        = {:.4}\nnoise_canary_ratio     = {}\n",
                    or_nan(noise.steal_fraction),
                    noise.repeat_cv,
                    or_nan(noise.canary_ratio)
                );
            }
            text
        }
        Format::Json => {
            let mut value = serde_json::to_value(m)?;
            if let (Some(object), Some(noise)) = (value.as_object_mut(), noise) {
                object.insert("noise".into(), serde_json::to_value(noise)?);
            }
            output::result_json("run", &value)?
        }
        Format::Csv => csv::samples(std::slice::from_ref(m)),
    })
}

/// Says on stderr where cycle counts came from when they are not perf's.
pub(crate) fn report_cycle_source(engine: &Engine) {
    let timing = engine.timing();
    match engine.cycle_source() {
        CycleSource::Perf => {}
        CycleSource::CycleCounter => notice(&format!(
            "cycles are read from the {} counter in user space (--clock cycle-counter)",
            timing.clock_name
        )),
        CycleSource::Given => notice(&format!(
            "cycles are ns x {} GHz (--ghz)",
            timing.given_ghz.unwrap_or(f64::NAN)
        )),
        CycleSource::Estimated => {
            let estimate = engine.clock_estimate();
            // The clock the cycles used: timed beside each sample (the
            // estimate at start only before any sample).
            let used = match engine.clocks_used() {
                Some((lo, hi)) if hi - lo >= 0.0005 => format!("{lo:.3}-{hi:.3} GHz"),
                Some((lo, _)) => format!("{lo:.3} GHz"),
                None => format!("{:.3} GHz", estimate.ghz),
            };
            notice(&format!(
                "cycles are estimated: ns x the core clock ({used}, timed beside each sample from dependent {} chains; multiply/add ratio {:.2}{}), since {} (override with --ghz)",
                estimate
                    .chains
                    .iter()
                    .map(|c| c.instruction.as_str())
                    .collect::<Vec<_>>()
                    .join(" and "),
                estimate.ratio,
                if estimate.agree {
                    ", as documented"
                } else {
                    ", NOT as documented"
                },
                timing
                    .note
                    .as_deref()
                    .unwrap_or("perf's cycles event is not available here")
            ));
            if let Some(why) = engine.clock_suspect() {
                warn(&format!("clock suspect: {why}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_names_the_chain_it_times() {
        let l1 = Some(48 << 10);
        assert!(
            distribution_pattern_note(None, 1 << 30, l1)
                .unwrap()
                .contains("random chain")
        );
        assert!(
            distribution_pattern_note(Some(Pattern::Stride), 1 << 30, l1)
                .unwrap()
                .contains("prefetchers serve")
        );
        assert_eq!(
            distribution_pattern_note(Some(Pattern::Stride), 16 << 10, l1),
            None
        );
        assert_eq!(
            distribution_pattern_note(Some(Pattern::Random), 1 << 30, l1),
            None
        );
    }
}
