//! Flags of `memlat linesize`.

use std::path::PathBuf;

use clap::Args;

use super::MeasureArgs;
use crate::units::parse_size;

/// `memlat linesize`.
#[derive(Debug, Clone, Args)]
pub struct LinesizeArgs {
    /// Buffer size, beyond L1 [default: twice the L2 (sysfs or --machine), else 8M].
    #[arg(short = 'n', long, value_name = "BYTES", value_parser = parse_size)]
    pub size: Option<u64>,

    /// Spacings (strides) to try, bytes, comma-separated (multiples of 8, at most 4096).
    #[arg(long, value_name = "BYTES,...", value_delimiter = ',', value_parser = parse_size, default_value = "8,16,32,64,128,256")]
    pub strides: Vec<u64>,

    /// How X's line is dropped in the line-tag test: flush (clflush, dc civac;
    /// the default where the ISA has one) or evict (loads through X's L1 set;
    /// the default elsewhere).
    #[arg(long, value_name = "HOW")]
    pub drop: Option<crate::kernels::line_tag::Drop>,

    /// Cache levels from this profile instead of sysfs (for the default size).
    #[arg(long, value_name = "FILE")]
    pub machine: Option<PathBuf>,

    /// Flags shared with the other measuring commands.
    #[command(flatten)]
    pub measure: MeasureArgs,
}
