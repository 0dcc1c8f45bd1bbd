//! Flags of `memlat bandwidth`.

use std::path::PathBuf;

use clap::Args;

use super::{MeasureArgs, PlateauArgs};
use crate::units::parse_size;

/// `memlat bandwidth`.
#[derive(Debug, Clone, Args)]
pub struct BandwidthArgs {
    /// Sizes per thread, comma-separated (e.g. 16K,1M,1G) [default: the middle
    /// of each measured cache plateau (see --plateaus), and one in memory].
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<u64>,

    /// Thread counts, comma-separated [default: 1 and every CPU memlat may use].
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    pub threads: Vec<usize>,

    /// Draw GB/s against the size, a line per operation and thread count, to
    /// FILE (.svg or .png); a sweep's measured levels are shaded.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Measure bandwidth by size: --per-octave sizes a doubling from --from
    /// to --to, each labelled with the measured level it falls in (`ramp`
    /// between levels); 3 samples of 5 ms per figure unless --repeats or
    /// --sample-ms are given.
    #[arg(long)]
    pub sweep: bool,

    /// With --sweep: the smallest size per thread.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub from: Option<u64>,

    /// With --sweep: the largest size per thread [default: the size the level
    /// table measures memory at, 4x the last level's measured capacity, at
    /// least 256 MiB].
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub to: Option<u64>,

    /// With --sweep: sizes per doubling (1 to 16) [default: 4].
    #[arg(long, value_name = "N")]
    pub per_octave: Option<u32>,

    /// The vector kernels to stream with, by name: avx512, avx2, sse2 (x86_64),
    /// sve, neon (aarch64), rvv (riscv64) or portable [default: the widest this
    /// CPU reports]. To compare with a loop of a given width, e.g. --vectors avx2.
    #[arg(long, value_name = "NAME")]
    pub vectors: Option<String>,

    /// Hide the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Where the sizes inside each level come from (see --plateaus).
    #[command(flatten)]
    pub plateaus: PlateauArgs,

    /// Flags shared with the other measuring commands (--kernel portable picks
    /// the plain-Rust kernels; --repeats samples per figure, default 5;
    /// --sample-ms their length, default 20).
    #[command(flatten)]
    pub measure: MeasureArgs,
}
