//! Ctrl-C during a sweep: the first SIGINT asks the sweep to stop after the
//! point being measured (so its files, detection and plot cover every finished
//! point); a second Ctrl-C restores any prefetcher MSRs memlat changed and ends
//! the process at once. The files are valid either way: they are replaced
//! atomically after each point. SIGTERM, where a command asks for it
//! ([`also_on_sigterm`]), is taken the same way and exits 143.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The signal that set [`INTERRUPTED`] first (SIGINT or SIGTERM).
static SIGNAL: AtomicI32 = AtomicI32::new(libc::SIGINT);

const MESSAGE: &[u8] =
    b"\nmemlat: interrupted; stopping after this point (press Ctrl-C again to quit now)\n";

const TERMINATED: &[u8] =
    b"\nmemlat: terminated (SIGTERM); stopping after this point (a second SIGTERM or Ctrl-C quits now)\n";

extern "C" fn on_sigint(signal: libc::c_int) {
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // Second Ctrl-C: put the prefetchers back (async-signal-safe), then quit.
        crate::platform::prefetch::msr::restore_saved();
        // SAFETY: _exit is async-signal-safe and ends the process at once.
        unsafe { libc::_exit(128 + signal) };
    }
    SIGNAL.store(signal, Ordering::SeqCst);
    let message = if signal == libc::SIGTERM {
        TERMINATED
    } else {
        MESSAGE
    };
    // SAFETY: write(2) is async-signal-safe; the message is a static byte
    // string and its length is passed with it. A failed write is harmless.
    unsafe {
        libc::write(libc::STDERR_FILENO, message.as_ptr().cast(), message.len());
    }
}

/// What interrupted the run, in words: `SIGTERM` when that signal did
/// (characterize takes it as Ctrl-C), else `Ctrl-C`.
pub fn cause() -> &'static str {
    if SIGNAL.load(Ordering::SeqCst) == libc::SIGTERM {
        "SIGTERM"
    } else {
        "Ctrl-C"
    }
}

/// Whether Ctrl-C (or SIGTERM, after [`also_on_sigterm`]) came since
/// [`Guard::install`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Whether the interruption was SIGTERM rather than Ctrl-C.
pub fn terminated() -> bool {
    interrupted() && SIGNAL.load(Ordering::SeqCst) == libc::SIGTERM
}

/// The exit code of an interrupted run: 128 + the signal (130 for Ctrl-C,
/// 143 for SIGTERM), as shells report a process the signal ended.
pub fn exit_code() -> i32 {
    128 + SIGNAL.load(Ordering::SeqCst)
}

/// Treats SIGTERM as Ctrl-C from now on (for a command whose children
/// stop at SIGINT and whose report must still be written).
pub fn also_on_sigterm() {
    // SAFETY: as in Guard::install: a zeroed sigaction is valid, and the
    // handler only touches an atomic and calls write(2) or _exit.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

/// Catches SIGINT while alive; restores the previous handler when dropped.
pub struct Guard {
    previous: Option<libc::sigaction>,
}

impl Guard {
    /// Installs the handler and clears the flag.
    pub fn install() -> Guard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        SIGNAL.store(libc::SIGINT, Ordering::SeqCst);
        // SAFETY: sigaction structs are plain data for which all-zero is a valid
        // value; the handler only touches an atomic and calls write(2).
        let previous = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
            action.sa_flags = 0;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            (libc::sigaction(libc::SIGINT, &action, &mut previous) == 0).then_some(previous)
        };
        Guard { previous }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(previous) = &self.previous {
            // SAFETY: `previous` is the action sigaction returned for SIGINT.
            unsafe {
                libc::sigaction(libc::SIGINT, previous, std::ptr::null_mut());
            }
        }
    }
}

/// A run cut short by Ctrl-C, after it kept what it measured: the process
/// exits with 130 (128 + SIGINT; 143 after SIGTERM) once everything has
/// been put back.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Interrupted(pub String);
