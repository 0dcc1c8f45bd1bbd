//! Errors a user caused: a setting that can be fixed (the CLI exits with
//! code 2 and names the flag that fixes it).

use crate::engine;

/// A bad flag value or a request the machine cannot satisfy; exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Shorthand for returning a [`UsageError`] from a command.
pub fn usage<T>(message: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(message.into()).into())
}

/// The exit code for an error: 2 for usage errors (as clap uses), 1 otherwise.
pub fn exit_code(error: &anyhow::Error) -> i32 {
    let usage = error.downcast_ref::<UsageError>().is_some()
        || error
            .downcast_ref::<engine::Error>()
            .is_some_and(|e| e.is_usage());
    if usage { 2 } else { 1 }
}
