//! `memlat prefetchers`: can `--prefetchers off` work here, and did an
//! earlier run leave registers to restore (`--restore` writes them back).

use anyhow::{Result, anyhow};

use crate::cli::PrefetchersArgs;
use crate::platform::prefetch::{self, msr};

/// Runs `memlat prefetchers`.
pub fn run(args: &PrefetchersArgs) -> Result<()> {
    let state = msr::state_path();
    if args.restore {
        if !state.exists() {
            println!(
                "nothing to restore: no state file at {} (every earlier run put its registers back)",
                state.display()
            );
            return Ok(());
        }
        let count = msr::restore_from_state(&state).map_err(|e| anyhow!("restoring: {e}"))?;
        println!(
            "restored {count} register(s) from {}; removed it",
            state.display()
        );
        return Ok(());
    }
    match std::fs::read_to_string(&state) {
        Ok(text) => {
            let pending = msr::parse_state(&text).map_or(0, |(_, s)| s.len());
            println!(
                "{} holds {pending} register(s) an interrupted run changed: put them back with `memlat prefetchers --restore` (as root)",
                state.display()
            );
        }
        Err(_) => println!("no registers to restore (state file: {})", state.display()),
    }
    let cpu = crate::platform::current_cpu().unwrap_or(0);
    match prefetch::check_access(cpu) {
        Ok(()) => println!("--prefetchers off can be applied here"),
        Err(why) => println!("--prefetchers off cannot be applied here: {why}"),
    }
    Ok(())
}
