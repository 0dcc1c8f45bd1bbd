//! Flags of `memlat plot`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `memlat plot`.
#[derive(Debug, Clone, Args)]
pub struct PlotArgs {
    /// A sweep JSON file (`memlat sweep --json`).
    #[arg(value_name = "RESULTS.json")]
    pub results: PathBuf,

    /// Image to write: .svg or .png.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,

    /// What to plot, comma-separated, one chart each: ns, cycles, bandwidth
    /// (line bytes per cycle, GB/s beside) or a counted event's name
    /// [default: ns, bandwidth and every counted event].
    #[arg(long, value_name = "METRIC,...", value_delimiter = ',')]
    pub metric: Vec<String>,

    /// Leave out the detected levels' bands.
    #[arg(long)]
    pub no_levels: bool,

    /// y axis scale: `auto` is logarithmic for ns and cycles (L1 and DRAM
    /// latencies differ 100-fold) and linear from zero for the others.
    #[arg(long, value_enum, default_value = "auto")]
    pub y_scale: YScale,
}

/// How `memlat plot` scales the y axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum YScale {
    /// Logarithmic for latencies, linear for bandwidth and events.
    Auto,
    /// Linear from zero (seed 004's `ylim(0)`).
    Linear,
    /// Logarithmic.
    Log,
}
