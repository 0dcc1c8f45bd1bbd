//! Flags of `memlat loaded`.

use std::path::PathBuf;

use clap::Args;

use super::{MeasureArgs, PlateauArgs};
use crate::units::parse_size;

/// `memlat loaded`.
#[derive(Debug, Clone, Args)]
pub struct LoadedArgs {
    /// Traffic threads [default: every CPU memlat may use but the chaser's].
    #[arg(long, value_name = "T")]
    pub threads: Option<usize>,

    /// What they do: read, write, rmw (read-modify-write), nt-write
    /// (non-temporal stores) or mix:R (R% of 4 KiB chunks read, the rest written).
    #[arg(long, value_name = "KIND", default_value = "read", value_parser = crate::experiments::loaded::traffic::Traffic::parse)]
    pub traffic: crate::experiments::loaded::traffic::Traffic,

    /// Delays to sweep, spin iterations after every 4 KiB a thread moves,
    /// comma-separated, measured in the order given.
    #[arg(
        long,
        value_name = "N,...",
        value_delimiter = ',',
        default_value = "100000,30000,10000,3000,1000,300,100,0"
    )]
    pub delays: Vec<u32>,

    /// The chase's buffer [default: memory as every command measures it: 4x
    /// the last level's measured capacity (see --plateaus), 256M to 1G].
    #[arg(short = 'n', long, value_name = "BYTES", value_parser = parse_size)]
    pub size: Option<u64>,

    /// Each traffic thread's buffer [default: the chase's size, so the
    /// traffic loads memory, not a cache; less when memory is short].
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub traffic_size: Option<u64>,

    /// Draw chase latency against traffic bandwidth, the knee marked, to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Hide the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Where the last level's capacity, which sizes the chase, comes from.
    #[command(flatten)]
    pub plateaus: PlateauArgs,

    /// Flags shared with the other measuring commands (--cpu: the chaser's CPU).
    #[command(flatten)]
    pub measure: MeasureArgs,
}
