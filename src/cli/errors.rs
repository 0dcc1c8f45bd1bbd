//! How the command line prints an error: its chain of causes, then the flag
//! that fixes it (the library's errors never name flags).

/// The flag that fixes an engine error, in words for the error line.
pub fn flag_hint(error: &crate::engine::Error) -> Option<String> {
    use crate::engine::Error as E;
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
    let hint = error
        .downcast_ref::<crate::engine::Error>()
        .and_then(flag_hint);
    match hint {
        Some(hint) => format!("{error:#}; {hint}"),
        None => format!("{error:#}"),
    }
}

/// The exit code for an error: 130 after Ctrl-C, 143 after SIGTERM (as
/// shells report them), 2
/// for a setting the user can fix (as clap uses), 1 otherwise.
pub fn exit_code(error: &anyhow::Error) -> i32 {
    if error
        .downcast_ref::<crate::cli::interrupt::Interrupted>()
        .is_some()
    {
        return crate::cli::interrupt::exit_code();
    }
    let usage = error.downcast_ref::<crate::error::UsageError>().is_some()
        || error.downcast_ref::<crate::limits::LimitError>().is_some()
        || error.downcast_ref::<crate::input::InputError>().is_some()
        || error
            .downcast_ref::<crate::engine::Error>()
            .is_some_and(|e| e.is_usage());
    if usage { 2 } else { 1 }
}
