//! `memlat prefetchers`: can `--prefetchers off` work here, and did an
//! earlier run leave registers to restore (`--restore` writes them back).

use anyhow::{Result, anyhow};

use crate::cli::PrefetchersArgs;
use crate::cli::files::Output;
use crate::error::UsageError;
use crate::platform::prefetch::{self, msr};

/// Runs `memlat prefetchers`.
pub fn run(args: &PrefetchersArgs) -> Result<()> {
    let stdout = Output::create(None)?;
    let state = match msr::state_path() {
        Ok(state) => state,
        // Without a private directory no run could have left a state file
        // there: the status is still worth reporting; only --restore fails.
        Err(e) if !args.restore => {
            let cpu = crate::platform::current_cpu().unwrap_or(0);
            let applies = match prefetch::check_access(cpu) {
                Ok(()) => "--prefetchers off can be applied here".to_string(),
                Err(why) => format!("--prefetchers off cannot be applied here: {why}"),
            };
            return stdout.write(&format!("no state file to look at ({e})\n{applies}\n"));
        }
        Err(e) => return Err(UsageError(format!("memlat prefetchers: {e}")).into()),
    };
    let exists = std::fs::symlink_metadata(&state).is_ok();
    if args.restore {
        if !exists {
            return stdout.write(&format!(
                "nothing to restore: no state file at {} (every earlier run put its registers back)\n",
                state.display()
            ));
        }
        let count = msr::restore_from_state(&state).map_err(|e| anyhow!("restoring: {e}"))?;
        return stdout.write(&format!(
            "restored {count} register(s) from {}; removed it\n",
            state.display()
        ));
    }
    let mut text = String::new();
    if exists {
        // Shown, never rewritten: a corrupt file is the user's to judge.
        match msr::read_state(&state) {
            Ok((_, saved)) => {
                text += &format!(
                    "{} holds {} register(s) an interrupted run changed: put them back with `memlat prefetchers --restore` (as root)\n",
                    state.display(),
                    saved.len()
                )
            }
            Err(e) => {
                text += &format!(
                    "a state file memlat cannot trust: {e}\nlook at it, restore the registers by hand if needed, then remove it\n"
                )
            }
        }
    } else {
        text += &format!(
            "no registers to restore (state file: {})\n",
            state.display()
        );
    }
    let cpu = crate::platform::current_cpu().unwrap_or(0);
    match prefetch::check_access(cpu) {
        Ok(()) => text += "--prefetchers off can be applied here\n",
        Err(why) => text += &format!("--prefetchers off cannot be applied here: {why}\n"),
    }
    stdout.write(&text)
}
