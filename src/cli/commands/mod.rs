//! One file per command: options -> engine -> export. No measuring code here.

pub mod assoc;
pub mod bandwidth;
pub mod c2c;
pub mod characterize;
pub mod compare;
pub mod completions;
pub mod detect;
pub mod doctor;
pub mod events;
pub mod levels;
pub mod linesize;
pub mod loaded;
pub mod loaduse;
pub mod merge;
pub mod mlp;
pub mod numa;
pub mod plot;
pub mod prefetchers;
pub mod quick;
pub mod report;
pub mod run;
pub mod sweep;
pub mod tlb;
pub mod watch;

use anyhow::Result;

use crate::cli::{Cli, Command};
use crate::error::UsageError;
use crate::platform;

/// Runs what the command line asks for.
pub fn dispatch(cli: Cli) -> Result<()> {
    let available = platform::mem_available_bytes();
    let bound = match cli.max_input {
        Some(mib) => crate::input::bound_from_mib(mib, available).map_err(UsageError)?,
        None => available.map_or(crate::input::DEFAULT_MAX_BYTES, |a| {
            crate::input::DEFAULT_MAX_BYTES.min(a / 2)
        }),
    };
    crate::input::set_max_bytes(bound);
    match cli.command {
        Some(Command::Run(args)) => run::run(&args),
        Some(Command::PtrChase(args)) => run::ptr_chase(&args),
        Some(Command::Events(args)) => events::run(&args),
        Some(Command::Prefetchers(args)) => prefetchers::run(&args),
        Some(Command::Doctor(args)) => doctor::run(&args),
        Some(Command::Sweep(args)) => sweep::run(&args),
        Some(Command::Plot(args)) => plot::run(&args),
        Some(Command::Loaduse(args)) => loaduse::run(&args),
        Some(Command::Mlp(args)) => mlp::run(&args),
        Some(Command::Bandwidth(args)) => bandwidth::run(&args),
        Some(Command::Loaded(args)) => loaded::run(&args),
        Some(Command::C2c(args)) => c2c::run(&args),
        Some(Command::Numa(args)) => numa::run(&args),
        Some(Command::Tlb(args)) => tlb::run(&args),
        Some(Command::Characterize(args)) => characterize::run(&args),
        Some(Command::Compare(args)) => compare::run(&args),
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::Merge(args)) => merge::run(&args),
        Some(Command::Detect(args)) => detect::run(&args),
        Some(Command::Levels(args)) => levels::run(&args),
        Some(Command::Assoc(args)) => assoc::run(&args),
        Some(Command::Linesize(args)) => linesize::run(&args),
        Some(Command::Watch(args)) => watch::run(&args),
        Some(Command::Shell(command)) => completions::run(&command),
        None => quick::run(&cli.quick),
    }
}
