//! `memlat completions` and `memlat man`: the shell completion scripts and
//! the man pages, both made from the clap definitions in cli/args, so that
//! neither can name a flag memlat no longer has nor miss a new one.

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs, ShellCommand};

/// Runs `memlat completions` or `memlat man`.
pub fn run(command: &ShellCommand) -> Result<()> {
    match command {
        ShellCommand::Completions(args) => completions(args),
        ShellCommand::Man(args) => man(args),
    }
}

/// Runs `memlat completions SHELL`: the script on stdout.
fn completions(args: &CompletionsArgs) -> Result<()> {
    // Into memory first: clap_complete panics when its writer fails, and a
    // closed stdout (`memlat completions bash | head`) is an error, not a crash.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "memlat", &mut script);
    // Written as made, not through Output::write: its escaping of control
    // characters is for text read from files, and a script is memlat's own.
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&script).and_then(|()| stdout.flush()) {
        // The reader had what it wanted (`| head`): nothing went wrong here.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the completion script to stdout"),
    }
}

/// Runs `memlat man --out-dir DIR`: memlat.1 and one memlat-COMMAND.1 for
/// each visible command (the hidden ones, such as ptr-chase, are left out as
/// they are from --help).
fn man(args: &ManArgs) -> Result<()> {
    let dir = &args.out_dir;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut top = Cli::command().disable_help_subcommand(true);
    top.build();
    let mut pages = vec![top.clone()];
    pages.extend(top.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    for page in pages {
        let man = clap_mangen::Man::new(page);
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        let roff = String::from_utf8(roff).context("a man page is not UTF-8")?;
        crate::cli::files::replace(&dir.join(man.get_filename()), &roff)?;
    }
    Ok(())
}
