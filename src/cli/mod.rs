//! The command line: the only code that knows flag names. `args` declares
//! the flags (clap), `commands` turns them into experiment plans and their
//! reports into output, and `files`, `interrupt` and `progress` are what every
//! long command shares: results written atomically, Ctrl-C that keeps what is
//! done, a progress bar on a terminal.

pub mod args;
pub mod characterize_args;
pub mod commands;
pub mod common;
pub mod errors;
pub mod files;
pub mod inputs;
pub mod interrupt;
pub mod plateaus;
pub mod progress;

pub use args::*;
pub use characterize_args::CharacterizeArgs;
