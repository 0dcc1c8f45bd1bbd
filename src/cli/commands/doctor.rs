//! `memlat doctor`: the machine's facts and what they mean for measurements.

use anyhow::Result;

use crate::cli::files::Output;
use crate::cli::{DoctorArgs, Format};
use crate::error::usage;
use crate::experiments::doctor::{Facts, Report};
use crate::output;
use crate::output::present::{self, doctor};
use crate::readback::Kind;

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
    // JSON is written from the result, text and markdown from its JSON value.
    let value = serde_json::to_value(&report)?;
    let content = match args.format {
        Format::Json => output::result_json("doctor", &report)?,
        Format::Text => doctor::text(&value),
        Format::Csv => present::headline(Kind::Doctor, &value)?.remove(0).csv(),
        Format::Markdown => doctor::document(&value).markdown(),
    };
    output.write(&content)
}
