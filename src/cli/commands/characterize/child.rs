//! One stage as a child process of this memlat: its own process group, so
//! that a Ctrl-C on the terminal reaches only characterize, which passes it
//! on once (the stage then stops after its current point and writes what it
//! measured; a second SIGINT would make it quit at once, without its file).
//! If characterize dies, the kernel sends the stage a SIGINT too.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// How a stage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It finished and wrote its file.
    Done,
    /// It exited with an error (its stderr's last lines say why).
    Failed,
    /// It did not run: the machine, this memlat or a Ctrl-C before it.
    Skipped,
    /// Ctrl-C stopped it; its file holds what it measured by then.
    Interrupted,
}

/// A finished child.
#[derive(Debug, Clone)]
pub struct Finished {
    /// How it ended.
    pub status: Status,
    /// Its exit code, or the signal that ended it, in words.
    pub exit: String,
    /// Wall time, seconds.
    pub seconds: f64,
    /// The last lines it wrote to stderr.
    pub stderr_tail: Vec<String>,
}

/// Lines of a stage's stderr kept for the summary.
const TAIL_LINES: usize = 20;

/// Runs `exe args`, passing Ctrl-C on (see the module's comment).
pub fn run(exe: &Path, args: &[OsString]) -> Result<Finished> {
    let start = Instant::now();
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: between fork and exec only prctl(2) runs, which is
    // async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT);
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut tail = VecDeque::new();
        for line in stderr
            .map(|s| BufReader::new(s).lines())
            .into_iter()
            .flatten()
            .map_while(Result::ok)
        {
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
        Vec::from(tail)
    });
    let mut passed_on = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if !passed_on && crate::cli::interrupt::interrupted() {
            // SAFETY: kill(2) with the pid of our own child, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            passed_on = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr_tail = reader.join().unwrap_or_default();
    let interrupted = status.code() == Some(130)
        || status.signal() == Some(libc::SIGINT)
        || (passed_on && !status.success());
    Ok(Finished {
        status: if status.success() {
            Status::Done
        } else if interrupted {
            Status::Interrupted
        } else {
            Status::Failed
        },
        exit: match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            _ => "unknown".into(),
        },
        seconds: start.elapsed().as_secs_f64(),
        stderr_tail,
    })
}
