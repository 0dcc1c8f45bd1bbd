//! `memlat characterize`'s flags (beside args.rs, which holds every other
//! command's).

use std::path::PathBuf;

use clap::Args;

/// `memlat characterize`.
#[derive(Debug, Clone, Args)]
pub struct CharacterizeArgs {
    /// Directory for the results: DIR/<stage>.json for each stage,
    /// DIR/characterize.json (what ran, how long, what failed and why) and
    /// DIR/report.html. Created when missing; one that holds files is refused
    /// without --force, unless they are an interrupted or killed run's, which
    /// is then completed (as with --resume DIR).
    #[arg(
        short = 'o',
        long,
        value_name = "DIR",
        required_unless_present = "resume"
    )]
    pub output: Option<PathBuf>,

    /// Complete an interrupted or killed run in DIR: the stages it finished
    /// are kept, the others run (a cut sweep goes on from its last point),
    /// and the report is written.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["output", "force"])]
    pub resume: Option<PathBuf>,

    /// Shorter settings: fewer sizes, repeats, page sizes and delays, one
    /// c2c method (a minute or less on 2 CPUs instead of several).
    #[arg(long)]
    pub quick: bool,

    /// Only these stages, comma-separated, run in the usual order: doctor,
    /// sweep, bandwidth, mlp, tlb, c2c, loaded, distribution [default: all].
    #[arg(long, value_name = "STAGE,...", value_delimiter = ',')]
    pub stages: Vec<String>,

    /// Write into a DIR that already holds files: the files characterize
    /// writes (<stage>.json, characterize.json, report.html) are replaced,
    /// every other file is left alone.
    #[arg(long)]
    pub force: bool,

    /// The smallest settings, for tests: a few seconds a stage, figures that
    /// mean little.
    #[arg(long, hide = true)]
    pub tiny: bool,
}
