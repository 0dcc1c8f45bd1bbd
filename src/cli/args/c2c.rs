//! Flags of `memlat c2c`.

use std::path::PathBuf;

use clap::Args;

use super::{Format, PlateauArgs};

/// `memlat c2c`.
#[derive(Debug, Clone, Args)]
pub struct C2cArgs {
    /// CPUs to measure, e.g. 0-7,16 [default: every CPU memlat may use].
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,

    /// Methods, comma-separated: cas, read-write [default: both].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub method: Vec<crate::experiments::c2c::Method>,

    /// Pairs to measure: all, or sample:K (K pairs at random, said in the output).
    #[arg(long, value_name = "all|sample:K", default_value = "all", value_parser = parse_pairs)]
    pub pairs: crate::experiments::c2c::Pairs,

    /// Draw the matrix as a heatmap to FILE (.svg or .png); a second method
    /// goes to FILE with the method's name added.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Output format: text, json, csv (one row per pair) or markdown.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Write the output to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Hide the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Skip the sharing check: by default one pair of each relation is
    /// checked for a shared last cache level (at most 0.2 s a pair), measured
    /// rather than taken from sysfs, over a buffer of that level: twice what
    /// the level above surely does not serve, from the plateaus --plateaus
    /// names.
    #[arg(long)]
    pub no_sharing: bool,

    /// Where the sharing check's buffer size comes from.
    #[command(flatten)]
    pub plateaus: PlateauArgs,
}

/// `all` or `sample:K`.
fn parse_pairs(text: &str) -> Result<crate::experiments::c2c::Pairs, String> {
    use crate::experiments::c2c::Pairs;
    match text {
        "all" => Ok(Pairs::All),
        _ => match text.strip_prefix("sample:").map(str::parse::<usize>) {
            Some(Ok(k)) if k > 0 => Ok(Pairs::Sample(k)),
            _ => Err(format!(
                "{text}: give all or sample:K with K at least 1, e.g. sample:500"
            )),
        },
    }
}
