//! Flags of `memlat tlb`.

use std::path::PathBuf;

use clap::Args;

use super::MeasureArgs;

/// `memlat tlb`.
#[derive(Debug, Clone, Args)]
pub struct TlbArgs {
    /// Page sizes, comma-separated: 4k (the system's base page, whatever its
    /// size), 2m (the transparent huge page, the kernel's PMD size), 1g
    /// (hugetlb pool) [default: 4k and 2m].
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = ["4k", "2m", "1g"])]
    pub page_sizes: Vec<String>,

    /// Most pages to touch [default: 8192 base pages, 1024 of 2 MiB (less when
    /// memory is short), 16 of 1 GiB].
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u64>,

    /// Draw translation cost against pages, one line per page size, to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Hide the progress bar (it is only drawn when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Flags shared with the other measuring commands (not --pages or --pattern).
    #[command(flatten)]
    pub measure: MeasureArgs,
}
