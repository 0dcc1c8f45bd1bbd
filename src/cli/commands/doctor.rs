//! `memlat doctor`: the machine's facts and what they mean for measurements.

use anyhow::Result;

use crate::cli::files::Output;
use crate::cli::{DoctorArgs, Format};
use crate::error::usage;
use crate::experiments::doctor::{Facts, Report, findings};
use crate::output;

/// Runs `memlat doctor`.
pub fn run(args: &DoctorArgs) -> Result<()> {
    let allowed = crate::platform::allowed_cpus();
    let cpu = match args.cpu {
        Some(cpu) if !allowed.contains(&cpu) => {
            return usage(format!(
                "--cpu {cpu}: no such CPU available to memlat (allowed: {allowed:?})"
            ));
        }
        Some(cpu) => cpu,
        None => crate::platform::current_cpu().unwrap_or(0),
    };
    let output = Output::create(args.output.as_deref())?;
    eprintln!("memlat doctor: reading the system and timing the clock chains on CPU {cpu} ...");
    let report = Report::of(&Facts::gather(cpu));
    let content = match args.format {
        Format::Json => output::result_json("doctor", &report)?,
        Format::Text => findings::text(&report),
        Format::Csv => findings::table(&report).csv(),
        Format::Markdown => findings::document(&report).markdown(),
    };
    output.write(&content)
}
