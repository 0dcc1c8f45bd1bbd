use clap::Parser;

fn main() {
    memlat::output::mark_started();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // As seed 004's `ptr_chase`, memlat is `memlat run` with the seed's defaults.
    if args
        .first()
        .is_some_and(|argv0| memlat::cli::invoked_as_ptr_chase(argv0))
    {
        args.insert(1, "ptr-chase".into());
    }
    let cli = memlat::cli::Cli::parse_from(args);
    if let Err(error) = memlat::cli::commands::dispatch(cli) {
        // Not eprintln!: it panics (exit 101) when stderr is closed or full.
        use std::io::Write as _;
        // Escaped and cut: an error may quote a hostile file's strings.
        let message = memlat::cli::errors::describe(&error);
        let _ = writeln!(
            std::io::stderr(),
            "error: {}",
            memlat::printable::printable(&message, memlat::printable::MESSAGE_CHARS)
        );
        std::process::exit(memlat::cli::errors::exit_code(&error));
    }
}
