//! Flags of `memlat sweep`.

use std::path::PathBuf;

use clap::Args;

use super::MeasureArgs;
use crate::units::parse_size;

/// `memlat sweep`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// Smallest size (rounded up to a prime multiple of the line size).
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "1K")]
    pub from: u64,

    /// Largest size [default: keep going until the latency has been level
    /// for 4 sizes beyond the largest cache sysfs lists, or past memory's
    /// size (4x that cache, 256M to 1G; 4x the last level measured once as
    /// many levels have ended as sysfs lists), at most a quarter of
    /// available memory and 4G].
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub to: Option<u64>,

    /// Ratio between successive sizes (1.01 to 100).
    #[arg(long, value_name = "R", default_value_t = 1.3)]
    pub ratio: f64,

    /// Strides of stride chains, comma-separated [default: 64 beside a random
    /// chain; 64,4096 with --pattern stride; none with --pattern random or page-random].
    #[arg(long, value_name = "BYTES,...", value_delimiter = ',', value_parser = parse_size)]
    pub strides: Vec<u64>,

    /// Write one row per repeat of every point to FILE (rewritten after each point).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write the whole sweep (every sample, sysfs caches, detected levels) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Draw latency, bandwidth and counted events per load to FILE (.svg or .png) at the end.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Continue the sweep in FILE (a sweep JSON): its points are kept and not
    /// measured again; files default to FILE and its .csv/.svg/.png siblings.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,

    /// Hide the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Measure only the grid: without it, sizes inside each level's capacity
    /// bracket are measured afterwards (random series) until every capacity
    /// is placed within 5%.
    #[arg(long)]
    pub no_refine: bool,

    /// Also time loads one by one at every point (20 ms each; in small
    /// groups where one load is shorter than the timer) and record p50 and
    /// p99: the plot shades p50 to p99 around each line, the CSV gains
    /// p50_ns and p99_ns columns, the JSON every point's distribution.
    #[arg(long)]
    pub percentiles: bool,

    /// Replace existing --csv, --json or --plot files (without it, a sweep
    /// refuses to overwrite an earlier result; continue one with --resume).
    #[arg(long)]
    pub force: bool,

    /// Flags shared with the other measuring commands (--format and -o: the
    /// final summary on stdout).
    #[command(flatten)]
    pub measure: MeasureArgs,
}
