//! `memlat plot`: a sweep JSON -> charts -> SVG or PNG.

use anyhow::Result;

use crate::cli::{PlotArgs, YScale};
use crate::error::{UsageError, usage};
use crate::experiments::sweep::SweepResult;
use crate::output::plot;
use crate::output::plot::sweep::{self as views, Metric};

/// Whether the sweep asked for event `name` (`-e`), counted or not.
fn asked_for(result: &SweepResult, name: &str) -> bool {
    result.config.events.iter().any(|e| e == name)
        || result.points.iter().any(|m| m.events.contains_key(name))
}

/// Runs `memlat plot`.
pub fn run(args: &PlotArgs) -> Result<()> {
    use crate::cli::files::{Role, check_files};
    check_files(&[
        ("FILE", Some(args.results.as_path()), Role::Reads),
        ("-o/--output", Some(args.output.as_path()), Role::Plot),
    ])?;
    let result = SweepResult::load(&args.results)?;
    if let Some(note) = result.older_notice(&args.results) {
        crate::cli::common::notice(&note);
    }
    if result.points.is_empty() {
        return usage(format!(
            "{} has no measured points yet; plot it once the sweep has finished a point",
            args.results.display()
        ));
    }
    let counted = views::counted_events(&result);
    let metrics = if args.metric.is_empty() {
        Metric::defaults(&result)
    } else {
        let mut metrics = Vec::new();
        let mut seen: Vec<&String> = Vec::new();
        for text in &args.metric {
            // Each metric once: a name repeated is one chart, not thousands.
            if seen.contains(&text) {
                continue;
            }
            seen.push(text);
            let metric = Metric::parse(text);
            let unknown = match &metric {
                Metric::Event(name) => (!counted.contains(name)).then_some(name),
                _ => None,
            };
            // Asked for with -e but never counted: sweeping with -e again
            // is no advice (it was done, where the counter was not there).
            if let Some(name) = unknown
                && asked_for(&result, name)
            {
                return Err(UsageError(format!(
                    "--metric {name}: the sweep asked for {name} (-e) but the counter was not available on the machine it ran on (no PMU, as in most VMs, or perf_event_paranoid too high; `memlat events` there lists what it counts), so there is nothing to plot; plot ns, cycles or bandwidth, or sweep with -e {name} on a machine that counts it"
                ))
                .into());
            }
            if let Some(name) = unknown {
                return Err(UsageError(format!(
                    "--metric {name}: not ns, cycles or bandwidth, nor an event this sweep counted ({}); measure it with `memlat sweep -e {name}`",
                    if counted.is_empty() {
                        "it counted none".to_string()
                    } else {
                        format!("it counted {}", counted.join(", "))
                    }
                ))
                .into());
            }
            // An empty chart is no answer: say why there are no cycles to draw.
            if metric == Metric::Cycles
                && let Some(why) = views::cycles_distrusted(&result)
            {
                return Err(UsageError(format!(
                    "--metric cycles: {} has no cycles to draw ({why}); plot --metric ns, or sweep again with --ghz GHZ",
                    args.results.display()
                ))
                .into());
            }
            metrics.push(metric);
        }
        metrics
    };
    let mut charts = views::charts(&result, &metrics, !args.no_levels);
    for chart in &mut charts {
        match args.y_scale {
            YScale::Auto => {}
            YScale::Linear => chart.y_log = false,
            YScale::Log => chart.y_log = true,
        }
    }
    plot::figure(&args.output, &charts)?;
    eprintln!(
        "memlat plot: wrote {} ({} chart{})",
        args.output.display(),
        charts.len(),
        if charts.len() == 1 { "" } else { "s" }
    );
    Ok(())
}
