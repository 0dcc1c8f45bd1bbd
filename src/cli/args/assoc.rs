//! Flags of `memlat assoc`.

use std::path::PathBuf;

use clap::Args;

use super::{MeasureArgs, PlateauArgs};

/// `memlat assoc`.
#[derive(Debug, Clone, Args)]
pub struct AssocArgs {
    /// Cache levels (sizes, ways) from this profile instead of sysfs.
    #[arg(long, value_name = "FILE")]
    pub machine: Option<PathBuf>,

    /// Levels to test, comma-separated (e.g. 1,2) [default: all].
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    pub levels: Vec<u32>,

    /// Most lines per set to try [default: 2 x the claimed ways + 2, else 40].
    #[arg(long, value_name = "N")]
    pub max_lines: Option<u64>,

    /// Where each level's own latency and the next one's are measured: the
    /// middles of the measured plateaus.
    #[command(flatten)]
    pub plateaus: PlateauArgs,

    /// Flags shared with the other measuring commands.
    #[command(flatten)]
    pub measure: MeasureArgs,
}
