//! Flags of `memlat loaduse`.

use std::path::PathBuf;

use clap::Args;

use super::{MeasureArgs, PlateauArgs};

/// `memlat loaduse`.
#[derive(Debug, Clone, Args)]
pub struct LoaduseArgs {
    /// Data sources, comma-separated: l1, l2, l3 (the middle of that level's
    /// measured plateau, see --plateaus), dram (4x the last level's measured
    /// capacity) or a working-set size such as 48K [default: l1,l2,dram].
    #[arg(long, value_name = "LEVEL", value_delimiter = ',', value_parser = crate::experiments::loaduse::levels::parse_level)]
    pub level: Vec<crate::experiments::loaduse::levels::LevelChoice>,

    /// NOPs between the load and the use: A..B, both included (at most 128).
    #[arg(long, value_name = "A..B", default_value = "0..64", value_parser = crate::experiments::loaduse::levels::parse_nops)]
    pub nops: crate::experiments::loaduse::levels::NopRange,

    /// Draw cycles per iteration against N, one line per level, to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Skip the `memlat run` pointer chase at each working set (kept beside the
    /// load-to-use figure for comparison).
    #[arg(long)]
    pub no_run: bool,

    /// Where the sizes inside each level come from (see --plateaus).
    #[command(flatten)]
    pub plateaus: PlateauArgs,

    /// Flags shared with the other measuring commands (--kernel picks the
    /// comparison chase's kernel; the load-use kernels are always asm).
    #[command(flatten)]
    pub measure: MeasureArgs,
}
