//! Flags of `memlat mlp`.

use std::path::PathBuf;

use clap::Args;

use super::{MeasureArgs, PlateauArgs};
use crate::units::parse_size;

/// `memlat mlp`.
#[derive(Debug, Clone, Args)]
pub struct MlpArgs {
    /// Sizes to measure, comma-separated (e.g. 16K,1M,1G) [default: the middle
    /// of each measured cache plateau (see --plateaus), and one beyond the last for memory].
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<u64>,

    /// Chain counts, comma-separated, each 1 to 16 [default: 1 to 16].
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    pub chains: Vec<u32>,

    /// Draw throughput against chains, one line per level, to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Hide the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Where the sizes inside each level come from (see --plateaus).
    #[command(flatten)]
    pub plateaus: PlateauArgs,

    /// Flags shared with the other measuring commands.
    #[command(flatten)]
    pub measure: MeasureArgs,
}
