//! Errors a user caused: each names the flag that fixes it and exits with code 2.
//! The library's errors never mention flags; [`describe`] adds the flag that
//! fixes an engine error when the CLI prints it.

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

/// The flag that fixes an engine error, in words for the error line.
pub fn flag_hint(error: &engine::Error) -> Option<String> {
    use engine::Error as E;
    Some(match error {
        E::NotEnoughMemory { .. } => "choose a smaller -n/--size (or --to, --sizes)".into(),
        E::Chain(_) => "use a larger -n/--size or a smaller --line".into(),
        E::ClockUnavailable { request, .. } => format!(
            "--clock {}: use --clock auto",
            clap::ValueEnum::to_possible_value(request)
                .map_or("?".into(), |v| v.get_name().to_string())
        ),
        E::Pin { .. } => "choose another --cpu".into(),
        E::Map { .. } => "choose a smaller -n/--size or other --pages".into(),
        E::Bind { .. } => "choose another --node".into(),
        E::NoKernel(_) => "choose another --kernel".into(),
        _ => return None,
    })
}

/// The error as the CLI prints it: its chain of causes, then the flag that fixes it.
pub fn describe(error: &anyhow::Error) -> String {
    let hint = error.downcast_ref::<engine::Error>().and_then(flag_hint);
    match hint {
        Some(hint) => format!("{error:#}; {hint}"),
        None => format!("{error:#}"),
    }
}
