//! Flags of The quick table (memlat with no command).

use clap::Args;

use super::{MeasureArgs, PlateauArgs};
use crate::units::parse_size;

/// The quick table (no command).
#[derive(Debug, Clone, Args)]
pub struct QuickArgs {
    /// Sizes to measure, comma-separated (e.g. 16K,256K,8M,1G) [default: the
    /// middle of each measured cache plateau (see --plateaus), and 4x the
    /// last level for DRAM].
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<u64>,

    /// Where the sizes inside each level come from (see --plateaus).
    #[command(flatten)]
    pub plateaus: PlateauArgs,

    /// Flags shared with the other measuring commands.
    #[command(flatten)]
    pub measure: MeasureArgs,
}
