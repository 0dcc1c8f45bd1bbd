use clap::Parser;

fn main() {
    let cli = memlat::cli::Cli::parse();
    if let Err(error) = memlat::commands::dispatch(cli) {
        eprintln!("error: {error:#}");
        std::process::exit(memlat::error::exit_code(&error));
    }
}
