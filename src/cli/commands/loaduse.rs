//! `memlat loaduse` (seed 003): options -> working sets -> load-use curves ->
//! reading -> text / JSON / CSV and a chart.

use anyhow::{Result, bail};

use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::progress::Announce;
use crate::cli::{Format, LoaduseArgs};
use crate::error::usage;
use crate::experiments::loaduse::levels;
use crate::experiments::loaduse::{self, driver::Settings};
use crate::output;
use crate::output::present::loaduse as render;
use crate::platform;
use crate::platform::caches;
use crate::units::HumanBytes;

/// Runs `memlat loaduse`.
pub fn run(args: &LoaduseArgs) -> Result<()> {
    if !crate::kernels::load_use::AVAILABLE {
        bail!(
            "memlat loaduse needs its asm kernels, which exist for x86_64, aarch64 and riscv64; this build is for {}",
            std::env::consts::ARCH
        );
    }
    if args.measure.events.is_some() {
        return usage(
            "-e/--events: memlat loaduse does not count events per N; count them with `memlat run -n SIZE -e ...` at the working set of interest",
        );
    }
    crate::cli::files::check_reads_output_and_plot(
        &[("--plateaus", args.plateaus.file())],
        args.measure.output.as_deref(),
        args.plot.as_deref(),
    )?;
    let output = Output::create(args.measure.output.as_deref())?;
    let mut prepared = prepare(&args.measure, Pattern::Random, 3)?;
    let template = prepared.template.clone();
    let caches = caches::data_caches(prepared.engine.cpu());
    // Measured plateaus only where a level is named by number (or by default).
    let measured = if args
        .level
        .iter()
        .all(|c| matches!(c, levels::LevelChoice::Size(_)))
        && !args.level.is_empty()
    {
        None
    } else {
        Some(crate::cli::plateaus::measured_levels(
            &args.plateaus,
            &mut prepared.engine,
            &template,
        )?)
    };
    let (specs, mut notes) = levels::resolve_measured(
        &args.level,
        measured.as_ref(),
        &caches,
        template.line,
        platform::mem_available_bytes(),
    )?;
    if let Some(available) = platform::mem_available_bytes() {
        for spec in &specs {
            let needed = crate::engine::memory_needed(spec.size);
            if needed > available {
                return usage(format!(
                    "--level {}: {} needs about {} but only {} is available (MemAvailable); give a smaller size",
                    spec.name,
                    HumanBytes(spec.size),
                    HumanBytes(needed),
                    HumanBytes(available)
                ));
            }
        }
    }
    notes.append(&mut prepared.notices);
    for note in &notes {
        notice(note);
    }
    let settings = Settings {
        nops: args.nops.values(),
        pattern: template.pattern,
        line: template.line,
        pages: template.pages,
        node: template.node,
        passes: template.repeats,
        seed: template.seed,
        sample_time: template.sample_time,
    };
    let plan = loaduse::Plan {
        levels: specs,
        settings,
        chase: (!args.no_run).then(|| template.clone()),
    };
    let result = loaduse::run(&mut prepared.engine, &plan, &mut Announce)?;
    report_cycle_source(&prepared.engine);
    for level in &result.levels {
        for w in &level.warnings {
            warn(&format!("{}: {w}", level.name));
        }
    }
    for w in &result.warnings {
        warn(w);
    }
    if let Some(path) = &args.plot {
        crate::output::plot::loaduse::plot(&result, path)?;
        notice(&format!("plot written to {}", path.display()));
    }
    let content = match args.measure.format {
        Format::Text => render::document(&result, headline(&result)?).text(),
        Format::Markdown => render::document(&result, headline(&result)?).markdown(),
        Format::Json => output::result_json("loaduse", &result)?,
        Format::Csv => render::csv(&result),
    };
    output.write(&content)
}

/// Seed 003's table, from the JSON value of the result (as the report makes it).
fn headline(result: &loaduse::report::LoaduseResult) -> Result<Vec<crate::output::table::Table>> {
    crate::output::present::headline(
        crate::readback::Kind::Loaduse,
        &serde_json::to_value(result)?,
    )
}
