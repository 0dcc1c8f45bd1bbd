//! Flags of The machine commands: `memlat events`, `prefetchers` and `doctor`.

use clap::Args;

use super::Format;

/// `memlat events`.
#[derive(Debug, Clone, Args)]
pub struct EventsArgs {
    /// Output format (text or json).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// `memlat prefetchers`.
#[derive(Debug, Clone, Args)]
pub struct PrefetchersArgs {
    /// Write back the values an interrupted `--prefetchers off` run saved.
    #[arg(long)]
    pub restore: bool,
}

/// `memlat doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// CPU to examine (its SMT siblings, and the clock timed on it) [default: the CPU memlat starts on].
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,

    /// Output format: text (what, value, meaning), json or csv.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Write the output to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}
