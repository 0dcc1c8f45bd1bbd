//! Model-specific registers through /dev/cpu/N/msr, and the restore that runs
//! however memlat ends:
//!
//! - on drop (normal return, error, and a panic that unwinds);
//! - from a panic hook (so `panic = "abort"` restores too);
//! - from a handler for every catchable signal that ends a process (INT, TERM,
//!   HUP, QUIT, USR1, USR2, ALRM, PIPE, and as a last resort SEGV and BUS),
//!   which runs with every other signal blocked, restores, then ends the
//!   process as the signal would have (exit 128 + signal, or the default
//!   action re-raised for SEGV and BUS);
//! - after SIGKILL or a power cut, from the state file written before any
//!   register changed: `memlat prefetchers --restore` writes it back.
//!
//! The handler uses only `pwrite`, `write`, `unlink`, `signal`, `raise` and
//! `_exit` (async-signal-safe) on values stored beforehand in fixed atomics.
//! The "restored" flag is set only after every write succeeded; a failed
//! write is reported and leaves the state file in place.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

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
/// Nothing is left to restore (never changed, or every write succeeded).
static RESTORED: AtomicBool = AtomicBool::new(true);
/// A restore is running: a second one (a signal during the first) waits it out.
static RESTORING: AtomicBool = AtomicBool::new(false);
/// The state file, as a C string leaked for the handler (unlinked after a restore).
static STATE_FILE: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static PREVIOUS: Mutex<Vec<(i32, libc::sigaction)>> = Mutex::new(Vec::new());

/// Signals that end a process and can be caught: each restores first.
pub const SIGNALS: [i32; 10] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGPIPE,
    libc::SIGSEGV,
    libc::SIGBUS,
];

const FAILED: &[u8] = b"memlat: could not write a saved MSR back; restore with `memlat prefetchers --restore` (as root)\n";

/// Writes every saved value back, with async-signal-safe calls only (a
/// signal handler may call it). Returns whether every write succeeded; the
/// state file is removed only then.
pub fn restore_saved() -> bool {
    if RESTORED.load(Ordering::SeqCst) {
        return true;
    }
    if RESTORING.swap(true, Ordering::SeqCst) {
        // Another restore runs (this is a signal that interrupted it, and
        // every signal is blocked in handlers): it finishes the job.
        return false;
    }
    let count = COUNT.load(Ordering::SeqCst).min(SLOTS);
    let mut all = true;
    for slot in 0..count {
        let fd = FDS[slot].load(Ordering::SeqCst);
        let value = VALUES[slot].load(Ordering::SeqCst);
        let msr = MSRS[slot].load(Ordering::SeqCst);
        // SAFETY: `fd` is an MSR device the saved set keeps open until after
        // this restore; `value` lives on this stack for the call.
        let written =
            unsafe { libc::pwrite(fd, (&value as *const u64).cast(), 8, msr as libc::off_t) };
        all &= written == 8;
    }
    if all {
        RESTORED.store(true, Ordering::SeqCst);
        let path = STATE_FILE.load(Ordering::SeqCst);
        if !path.is_null() {
            // SAFETY: `path` is a NUL-terminated string leaked for the process's life.
            unsafe { libc::unlink(path) };
        }
    } else {
        // SAFETY: write(2) of a static message is async-signal-safe.
        unsafe { libc::write(libc::STDERR_FILENO, FAILED.as_ptr().cast(), FAILED.len()) };
    }
    RESTORING.store(false, Ordering::SeqCst);
    all
}

extern "C" fn on_signal(signal: libc::c_int) {
    restore_saved();
    // SAFETY: async-signal-safe calls only. SEGV and BUS go on to their
    // default action (a core dump, the crash reported as such); the others
    // end the process as shells expect after that signal.
    unsafe {
        if signal == libc::SIGSEGV || signal == libc::SIGBUS {
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
        }
        libc::_exit(128 + signal);
    }
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

/// The state file's name in its directory.
pub const STATE_NAME: &str = "prefetchers.state";

/// The directory of the state file: /run/memlat as root; for another user
/// (with CAP_SYS_RAWIO) a $XDG_RUNTIME_DIR that only they can write; never a
/// world-writable directory such as /tmp, where another user could plant
/// the file. Debug builds (the tests) may name one in `MEMLAT_STATE_DIR`;
/// a release build never reads it.
pub fn state_dir() -> Result<PathBuf, String> {
    #[cfg(debug_assertions)]
    if let Some(dir) = std::env::var_os("MEMLAT_STATE_DIR") {
        return Ok(PathBuf::from(dir));
    }
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if uid == 0 {
        return Ok(PathBuf::from("/run/memlat"));
    }
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .ok_or("no private directory for the state file: run as root (/run/memlat), or set XDG_RUNTIME_DIR to a directory only you can write")?;
    private_dir(&runtime, uid)?;
    Ok(runtime)
}

/// Checks that `dir` is a real directory (not a link) owned by `uid` that no
/// one else may write.
fn private_dir(dir: &Path, uid: u32) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not a directory of yours that only you can write: the prefetcher state file is refused there",
            dir.display()
        ));
    }
    Ok(())
}

/// The state file: [`STATE_NAME`] in [`state_dir`].
pub fn state_path() -> Result<PathBuf, String> {
    Ok(state_dir()?.join(STATE_NAME))
}

/// The directory of MSR devices: /dev/cpu. Debug builds (the tests) may
/// name stand-in files in `MEMLAT_MSR_ROOT`; a release build never reads it.
pub fn msr_root() -> String {
    #[cfg(debug_assertions)]
    if let Ok(root) = std::env::var("MEMLAT_MSR_ROOT") {
        return root;
    }
    "/dev/cpu".into()
}

/// The only registers memlat writes, and so the only ones a restore may write.
pub const DOCUMENTED: [u32; 4] = [0x1A0, 0x1A4, 0xC000_0108, 0xC001_1022];

/// One saved register: which CPU's device, which register, its original value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedValue {
    /// CPU number (the device `{root}/{cpu}/msr`).
    pub cpu: usize,
    /// Register.
    pub msr: u32,
    /// Value before memlat changed it.
    pub value: u64,
}

/// The state file's text: the MSR root, then `cpu msr value` lines (hex).
pub fn state_text(root: &str, saved: &[SavedValue]) -> String {
    let mut text = format!("# memlat: prefetcher MSRs to write back\nroot {root}\n");
    for s in saved {
        text += &format!("{} {:#x} {:#x}\n", s.cpu, s.msr, s.value);
    }
    text
}

/// Reads a state file's text back.
pub fn parse_state(text: &str) -> Result<(String, Vec<SavedValue>), String> {
    let mut root = None;
    let mut saved = Vec::new();
    let hex = |t: &str| u64::from_str_radix(t.trim_start_matches("0x"), 16);
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(r) = line.strip_prefix("root ") {
            root = Some(r.to_string());
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let parsed = match fields.as_slice() {
            [cpu, msr, value] => cpu.parse().ok().zip(hex(msr).ok()).zip(hex(value).ok()),
            _ => None,
        };
        let ((cpu, msr), value) = parsed.ok_or(format!("line {}: not `cpu msr value`", n + 1))?;
        let msr = u32::try_from(msr).map_err(|_| format!("line {}: no such MSR", n + 1))?;
        saved.push(SavedValue { cpu, msr, value });
    }
    Ok((root.ok_or("no `root` line")?, saved))
}

/// Reads a state file, trusting nothing in it: a regular file (not a link)
/// owned by this user and writable by no one else, naming this build's MSR
/// root and only the documented registers. The error shows the file.
pub fn read_state(path: &Path) -> Result<(String, Vec<SavedValue>), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not a regular file of this user that only it can write: not trusted, not used",
            path.display()
        ));
    }
    let text = crate::input::read_text(path).map_err(|e| e.to_string())?;
    let shown = || {
        let mut t: String = text.chars().take(400).collect();
        t.retain(|c| c == '\n' || !c.is_control());
        t
    };
    let (root, saved) = parse_state(&text)
        .map_err(|e| format!("{}: {e}; it holds:\n{}", path.display(), shown()))?;
    if root != msr_root() {
        return Err(format!(
            "{}: names MSR devices under {root}, not {}: not trusted; it holds:\n{}",
            path.display(),
            msr_root(),
            shown()
        ));
    }
    if let Some(bad) = saved.iter().find(|s| !DOCUMENTED.contains(&s.msr)) {
        return Err(format!(
            "{}: names MSR {:#x}, which memlat never changes: not trusted; it holds:\n{}",
            path.display(),
            bad.msr,
            shown()
        ));
    }
    Ok((root, saved))
}

/// Writes the values of a state file back (only documented registers, only
/// to the MSR devices); removes the file when all succeeded.
pub fn restore_from_state(path: &Path) -> Result<usize, String> {
    let (root, saved) = read_state(path)?;
    for s in &saved {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(format!("{root}/{}/msr", s.cpu))
            .map_err(|e| format!("{root}/{}/msr: {e} (restoring needs root)", s.cpu))?;
        write(&file, s.msr, s.value).map_err(|e| format!("CPU {} MSR {:#x}: {e}", s.cpu, s.msr))?;
    }
    std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(saved.len())
}

/// Registers changed by memlat with their original values; restores them on drop.
pub struct Saved {
    files: Vec<File>,
    state: PathBuf,
}

impl Saved {
    /// Records the registers about to change: writes the state file first,
    /// then stores the values where the handlers can reach them and installs
    /// the handlers and the panic hook. Only one `Saved` may be alive at a
    /// time (memlat changes MSRs once per run).
    pub fn new(root: &str, state: PathBuf, entries: Vec<(SavedValue, File)>) -> io::Result<Saved> {
        if entries.len() > SLOTS {
            return Err(io::Error::other(format!(
                "more than {SLOTS} registers to save"
            )));
        }
        let values: Vec<SavedValue> = entries.iter().map(|(v, _)| *v).collect();
        if let Some(dir) = state.parent() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        // Never over an existing file (an earlier run's originals), never
        // through a link.
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&state)?;
            file.write_all(state_text(root, &values).as_bytes())?;
            file.sync_all()?;
        }
        mask(libc::SIG_BLOCK);
        let mut files = Vec::with_capacity(entries.len());
        for (slot, (saved, file)) in entries.into_iter().enumerate() {
            FDS[slot].store(file.as_raw_fd(), Ordering::SeqCst);
            MSRS[slot].store(saved.msr, Ordering::SeqCst);
            VALUES[slot].store(saved.value, Ordering::SeqCst);
            files.push(file);
        }
        COUNT.store(files.len(), Ordering::SeqCst);
        if let Ok(c) = CString::new(state.as_os_str().as_encoded_bytes()) {
            STATE_FILE.store(c.into_raw(), Ordering::SeqCst);
        }
        RESTORED.store(false, Ordering::SeqCst);
        install_handlers();
        install_panic_hook();
        mask(libc::SIG_UNBLOCK);
        Ok(Saved { files, state })
    }

    /// How many registers are saved.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether nothing is saved.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The state file that holds the saved values until they are restored.
    pub fn state_file(&self) -> &Path {
        &self.state
    }

    /// Writes the saved values back now (also done on drop), with the
    /// handled signals blocked so none can cut the restore short.
    pub fn restore(&self) -> bool {
        mask(libc::SIG_BLOCK);
        let ok = restore_saved();
        mask(libc::SIG_UNBLOCK);
        ok
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

fn install_handlers() {
    let mut previous = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
    for signal in SIGNALS {
        // SAFETY: `action` is fully initialised (zeroed, then the handler and
        // a full mask, so no other signal interrupts the restore); `old`
        // receives the previous disposition to put back.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigfillset(&mut action.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &action, &mut old) == 0 {
                previous.push((signal, old));
            }
        }
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // With panic = "abort" no destructor runs: restore here.
            restore_saved();
            previous(info);
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_files_round_trip() {
        let saved = [
            SavedValue {
                cpu: 0,
                msr: 0x1A4,
                value: 0x3,
            },
            SavedValue {
                cpu: 17,
                msr: 0xC000_0108,
                value: 0,
            },
        ];
        let text = state_text("/dev/cpu", &saved);
        assert_eq!(
            parse_state(&text),
            Ok(("/dev/cpu".to_string(), saved.to_vec()))
        );
        assert!(parse_state("0 0x1a4 0x3\n").is_err());
        assert!(parse_state("root /dev/cpu\nnonsense\n").is_err());
    }
}
