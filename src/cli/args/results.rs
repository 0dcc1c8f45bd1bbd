//! Flags of The commands that read results: `memlat compare`, `report` and `merge`.

use std::path::PathBuf;

use clap::Args;

use super::Format;

/// `memlat compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Result files (JSON written by memlat), the first the reference.
    #[arg(value_name = "RESULT.json", required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,

    /// Overlay the results' curves to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Output format: text, json, csv or markdown.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Write the output to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `memlat report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Result files (JSON written by memlat, or merged).
    #[arg(value_name = "RESULT.json", required = true)]
    pub results: Vec<PathBuf>,

    /// Output format: html (one self-contained page) or markdown.
    #[arg(long, value_name = "FORMAT", default_value = "html", value_parser = ["html", "markdown"])]
    pub format: String,

    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `memlat merge`.
#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Result files, or directories searched for *.json.
    #[arg(value_name = "FILE_OR_DIR", required = true)]
    pub inputs: Vec<PathBuf>,

    /// Only results of this kind (run, sweep, quick, levels...) [default: the
    /// one kind found; several kinds are refused].
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,

    /// Where to write: .csv (one row per host and point) or .json (a merged
    /// file for compare and report); without it, CSV on standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
