//! Flags of `memlat numa`.

use std::path::PathBuf;

use clap::Args;

use super::MeasureArgs;
use crate::units::parse_size;

/// `memlat numa`.
#[derive(Debug, Clone, Args)]
pub struct NumaArgs {
    /// The chain's buffer [default: 4x the last-level cache sysfs claims, 256M to 1G (numa measures no plateaus)].
    #[arg(short = 'n', long, value_name = "BYTES", value_parser = parse_size)]
    pub size: Option<u64>,

    /// Draw the matrix as a heatmap to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Hide the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Flags shared with the other measuring commands (not --cpu or --node:
    /// every node's CPU and memory are measured).
    #[command(flatten)]
    pub measure: MeasureArgs,
}
