//! Model-specific registers through /dev/cpu/N/msr, and the restore that runs
//! however memlat ends: on drop (normal return, error, panic) and from a
//! SIGINT/SIGTERM/SIGHUP handler that writes the saved values back and exits 130.
//!
//! The handler only uses `pwrite` and `_exit` (async-signal-safe) on values
//! stored beforehand in fixed atomics, so it is safe wherever the signal lands.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Reads MSR `msr` (the file offset is the register number).
pub fn read(file: &File, msr: u32) -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    file.read_exact_at(&mut bytes, msr as u64)?;
    Ok(u64::from_ne_bytes(bytes))
}

/// Writes MSR `msr`.
pub fn write(file: &File, msr: u32, value: u64) -> io::Result<()> {
    file.write_all_at(&value.to_ne_bytes(), msr as u64)
}

/// Most saved registers the signal handler can restore.
const SLOTS: usize = 1024;

static FDS: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
static MSRS: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];
static VALUES: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static COUNT: AtomicUsize = AtomicUsize::new(0);
static RESTORED: AtomicBool = AtomicBool::new(true);
static PREVIOUS: Mutex<Vec<(i32, libc::sigaction)>> = Mutex::new(Vec::new());

const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Writes every saved value back, once, with async-signal-safe calls only:
/// another signal handler (e.g. a sweep's Ctrl-C handler that ends the
/// process) may call it before exiting.
pub fn restore_saved() {
    if RESTORED.swap(true, Ordering::SeqCst) {
        return;
    }
    let count = COUNT.load(Ordering::SeqCst).min(SLOTS);
    for slot in 0..count {
        let fd = FDS[slot].load(Ordering::SeqCst);
        let value = VALUES[slot].load(Ordering::SeqCst);
        let msr = MSRS[slot].load(Ordering::SeqCst);
        // SAFETY: `fd` is an MSR device the saved set keeps open until after
        // this restore; `value` lives on this stack for the call.
        unsafe {
            libc::pwrite(fd, (&value as *const u64).cast(), 8, msr as libc::off_t);
        }
    }
}

extern "C" fn on_signal(_signal: libc::c_int) {
    restore_saved();
    // SAFETY: _exit is async-signal-safe and ends the process at once.
    unsafe { libc::_exit(130) };
}

fn mask(how: libc::c_int) {
    // SAFETY: the set is initialised by sigemptyset before use; sigprocmask
    // only changes this thread's signal mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        libc::sigprocmask(how, &set, std::ptr::null_mut());
    }
}

/// Registers changed by memlat with their original values; restores them on drop.
pub struct Saved {
    files: Vec<File>,
}

impl Saved {
    /// Records `(file, msr, original)` triples and installs the signal handler.
    /// Only one `Saved` may be alive at a time (memlat changes MSRs once per run).
    pub fn new(entries: Vec<(File, u32, u64)>) -> io::Result<Saved> {
        if entries.len() > SLOTS {
            return Err(io::Error::other(format!(
                "more than {SLOTS} registers to save"
            )));
        }
        mask(libc::SIG_BLOCK);
        let mut files = Vec::with_capacity(entries.len());
        for (slot, (file, msr, value)) in entries.into_iter().enumerate() {
            FDS[slot].store(file.as_raw_fd(), Ordering::SeqCst);
            MSRS[slot].store(msr, Ordering::SeqCst);
            VALUES[slot].store(value, Ordering::SeqCst);
            files.push(file);
        }
        COUNT.store(files.len(), Ordering::SeqCst);
        RESTORED.store(false, Ordering::SeqCst);
        let mut previous = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
        for signal in SIGNALS {
            // SAFETY: `action` is fully initialised (zeroed, then handler and an
            // empty mask); `old` receives the previous disposition to put back.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut old) == 0 {
                    previous.push((signal, old));
                }
            }
        }
        mask(libc::SIG_UNBLOCK);
        Ok(Saved { files })
    }

    /// How many registers are saved.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether nothing is saved.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Writes the saved values back now (also done on drop).
    pub fn restore(&self) {
        // No signal may interrupt a half-done restore: block them meanwhile.
        mask(libc::SIG_BLOCK);
        restore_saved();
        mask(libc::SIG_UNBLOCK);
    }
}

impl Drop for Saved {
    fn drop(&mut self) {
        mask(libc::SIG_BLOCK);
        restore_saved();
        let mut previous = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
        for (signal, old) in previous.drain(..) {
            // SAFETY: `old` is the disposition sigaction returned for this signal.
            unsafe {
                libc::sigaction(signal, &old, std::ptr::null_mut());
            }
        }
        COUNT.store(0, Ordering::SeqCst);
        mask(libc::SIG_UNBLOCK);
    }
}
