//! Flags of `memlat completions` and the packagers' hidden `memlat man`:
//! their own enum, flattened into [`super::Command`], so that the command
//! list there grows by one line.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// The commands that describe memlat's command line to shells and to man.
#[derive(Debug, Subcommand)]
pub enum ShellCommand {
    /// Print a completion script for a shell: bash, zsh, fish, elvish or powershell
    ///
    /// The script is made from memlat's own flag definitions, so it completes
    /// exactly the commands and flags this memlat has. The .deb installs the
    /// bash, zsh and fish scripts; after any other install, write one where
    /// the shell looks for it.
    ///
    /// Examples:
    ///   memlat completions bash > ~/.local/share/bash-completion/completions/memlat
    ///   memlat completions zsh > ~/.zfunc/_memlat     # fpath+=~/.zfunc before compinit
    ///   memlat completions fish > ~/.config/fish/completions/memlat.fish
    #[command(verbatim_doc_comment)]
    Completions(CompletionsArgs),
    /// Write the man pages, memlat.1 and memlat-COMMAND.1 for each command,
    /// into a directory. Hidden: for packagers (scripts/release); a user reads
    /// the pages with man.
    #[command(hide = true)]
    Man(ManArgs),
}

/// `memlat completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `memlat man`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The directory to write the pages into; made if missing.
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
}
