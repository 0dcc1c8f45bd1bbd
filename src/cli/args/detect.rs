//! Flags of `memlat detect`.

use std::path::PathBuf;

use clap::Args;

use super::MeasureArgs;
use crate::units::parse_size;

/// `memlat detect`.
#[derive(Debug, Clone, Args)]
pub struct DetectArgs {
    /// A sweep JSON file (`memlat sweep --json`) [default: measure a quick sweep first].
    #[arg(value_name = "RESULTS.json")]
    pub results: Option<PathBuf>,

    /// Quick sweep: smallest size.
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "2K")]
    pub from: u64,

    /// Quick sweep: largest size [default: until the latency has levelled
    /// beyond the caches sysfs lists, or past memory's size (4x the largest,
    /// 256M to 1G; 4x the last level measured once as many levels have
    /// ended as sysfs lists), at most a quarter of available memory and 4G].
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub to: Option<u64>,

    /// Quick sweep: ratio between successive sizes (above 1).
    #[arg(long, value_name = "R", default_value_t = 1.5)]
    pub ratio: f64,

    /// Flags of the quick sweep (--format and -o: the table).
    #[command(flatten)]
    pub measure: MeasureArgs,
}
