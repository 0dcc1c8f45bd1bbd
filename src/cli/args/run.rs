//! Flags of `memlat run`.

use std::path::PathBuf;

use clap::Args;

use super::MeasureArgs;
use crate::units::parse_size;

/// `memlat run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Buffer size in bytes (K, M, G suffixes are powers of 1024); rounded up to a multiple of 8.
    #[arg(short = 'n', long, value_name = "BYTES", value_parser = parse_size, default_value = "32K")]
    pub size: u64,

    /// Stride in bytes for the stride pattern; rounded up to a multiple of 8.
    #[arg(short = 's', long, value_name = "BYTES", value_parser = parse_size, default_value = "64")]
    pub stride: u64,

    /// Loads per timed sample (rounded up to a multiple of 100) [default: as many as take --sample-ms].
    #[arg(
        short = 'a',
        long,
        value_name = "A",
        alias = "n_accesses",
        alias = "n-accesses"
    )]
    pub accesses: Option<u64>,

    /// Also time loads one at a time (in small groups where one load is
    /// shorter than the timer, and say so) and report their distribution:
    /// p50 to p99.99, a log-spaced histogram, the modes, and periodic stalls
    /// (such as DRAM refresh) found from the slow loads' timeline. Times a
    /// random chain unless --pattern is given (a stride chain beyond L1 is
    /// served by the prefetchers).
    #[arg(long)]
    pub distribution: bool,

    /// How long --distribution times loads one by one, ms (10 to 60000;
    /// 400 resolves periods up to 16 us and p99.99). One timeline holds at
    /// most 4 Mi timings: at memory latency about 0.7 to 1.5 s, in L1 less;
    /// a longer time is cut there, and a warning says how long was timed.
    #[arg(long, value_name = "MS", default_value_t = 400)]
    pub distribution_ms: u64,

    /// With --distribution: draw the histogram (log x) and the slow loads'
    /// spectrum with the period marked, to FILE (.png or .svg).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Replace the -o file when it holds anything (without it, run refuses
    /// to overwrite an earlier result, a sweep's included).
    #[arg(long)]
    pub force: bool,

    /// Flags shared with the other measuring commands.
    #[command(flatten)]
    pub measure: MeasureArgs,
}
