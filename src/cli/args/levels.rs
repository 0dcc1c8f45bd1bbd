//! Flags of `memlat levels`.

use std::path::PathBuf;

use clap::Args;

use super::{MeasureArgs, PlateauArgs};

/// `memlat levels`.
#[derive(Debug, Clone, Args)]
pub struct LevelsArgs {
    /// Cache levels from this profile (`key: value` lines; see
    /// examples/machine-zen4-vm.txt) instead of sysfs.
    #[arg(long, value_name = "FILE")]
    pub machine: Option<PathBuf>,

    /// Iterations per level, each with a fresh random walk.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub iterations: u32,

    /// Name in results_{name}.csv [default: the profile's name, else the host name].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Where to write the per-iteration CSV [default: memlat-results/results_{name}.csv].
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Where the sizes inside each level come from without --machine (see --plateaus).
    #[command(flatten)]
    pub plateaus: PlateauArgs,

    /// Flags shared with the other measuring commands (--format and -o: the summary).
    #[command(flatten)]
    pub measure: MeasureArgs,
}
