//! Errors a user caused: a setting that can be fixed (the CLI exits with
//! code 2 and names the flag that fixes it).

/// A bad flag value or a request the machine cannot satisfy; exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Shorthand for returning a [`UsageError`] from a command.
pub fn usage<T>(message: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(message.into()).into())
}

impl From<crate::limits::LimitError> for UsageError {
    fn from(e: crate::limits::LimitError) -> UsageError {
        UsageError(e.to_string())
    }
}
