//! Writing through [`Dir`]: a file replaced whole (a private temporary,
//! renamed over it), a file drawn by a library that opens by path (in a
//! fresh private directory, then renamed), and the lock a run holds on a
//! file several runs could name.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use super::{Dir, Kind};

/// The process's umask (read once: setting it is the only way to read it).
fn umask() -> libc::mode_t {
    static MASK: std::sync::OnceLock<libc::mode_t> = std::sync::OnceLock::new();
    // SAFETY: umask cannot fail; the old mask is put back at once.
    *MASK.get_or_init(|| unsafe {
        let mask = libc::umask(0o022);
        libc::umask(mask);
        mask
    })
}

/// Gives a finished temporary the mode a new file would have had (0644
/// less the umask): private while written, readable once it is the file.
fn publish(file: &File) -> io::Result<()> {
    // SAFETY: a valid open descriptor.
    let r = unsafe { libc::fchmod(file.as_raw_fd(), 0o644 & !umask()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A tag no one can guess ahead: time, a counter and the process id.
fn tag() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    nanos ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (u64::from(std::process::id()) << 40)
}

/// A temporary name beside `name`: `.NAME.PID.TAG.tmp`, different at
/// every call (what a killed run leaves is recognised by it and removed).
pub fn temporary_name(name: &OsStr) -> OsString {
    let mut t = OsString::from(".");
    t.push(name);
    t.push(format!(".{}.{:016x}.tmp", std::process::id(), tag()));
    t
}

/// Refuses to rename anything over a directory or a device (as root,
/// renaming over /dev/null would destroy it).
fn replaceable(dir: &Dir, name: &OsStr, kept: &Path) -> io::Result<()> {
    let what = match dir.entry(name)?.map(|e| e.kind) {
        Some(Kind::Dir) => "a directory",
        Some(Kind::Device) => "a device",
        _ => return Ok(()),
    };
    Err(io::Error::other(format!(
        "{} is {what}, not a file memlat may replace; the output is kept in {}",
        dir.show(name).display(),
        kept.display()
    )))
}

/// Writes `content` whole into a new private file `temporary` in `dir`
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600, synced), removing it again
/// when the write fails.
fn write_private(dir: &Dir, temporary: &OsStr, content: &[u8]) -> io::Result<()> {
    let mut file = dir.create_new(temporary, 0o600)?;
    let written = file
        .write_all(content)
        .and_then(|()| publish(&file))
        .and_then(|()| file.sync_data());
    drop(file);
    if let Err(e) = written {
        let _ = dir.remove_file(temporary);
        return Err(e);
    }
    Ok(())
}

/// Writes `content` to `path` so that a reader never sees half of it: into
/// a private temporary beside it (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode
/// 0600), then renamed over it. Nothing is written through a link or into a
/// FIFO: rename replaces the name, never follows it.
pub fn replace(path: &Path, content: &[u8]) -> io::Result<()> {
    let (dir, name) = Dir::parent(path)?;
    let temporary = temporary_name(&name);
    write_private(&dir, &temporary, content)?;
    replaceable(&dir, &name, &dir.show(&temporary))?;
    dir.rename(&temporary, &name).inspect_err(|_| {
        let _ = dir.remove_file(&temporary);
    })
}

/// Writes `content` into `dir` under the first name `names` gives that is
/// free (a private temporary, then renamed only where nothing is:
/// [`Dir::rename_new`]), so two runs never take one name; the name taken
/// is returned.
pub fn create_unique(
    dir: &Dir,
    content: &[u8],
    names: impl IntoIterator<Item = OsString>,
) -> io::Result<OsString> {
    let temporary = temporary_name(OsStr::new("new"));
    write_private(dir, &temporary, content)?;
    for name in names {
        match dir.rename_new(&temporary, &name) {
            Ok(()) => return Ok(name),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                let _ = dir.remove_file(&temporary);
                return Err(e);
            }
        }
    }
    let _ = dir.remove_file(&temporary);
    Err(io::Error::other("every name it could take is taken"))
}

/// A fresh directory only this process can write (mode 0700, created
/// exclusively under a name no one can guess), removed with what is in it
/// when dropped.
#[derive(Debug)]
pub struct PrivateDir {
    parent: Dir,
    name: OsString,
    /// The directory itself.
    pub dir: Dir,
}

impl PrivateDir {
    /// A fresh private directory `.memlat-PID-TAG` in `parent`.
    pub fn create(parent: &Dir) -> io::Result<PrivateDir> {
        let name = OsString::from(format!(".memlat-{}-{:016x}", std::process::id(), tag()));
        let dir = parent.create_dir(&name, 0o700)?;
        Ok(PrivateDir {
            parent: parent.try_clone()?,
            name,
            dir,
        })
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Ok((names, _)) = self.dir.names(1024) {
            for n in names {
                let _ = self.dir.remove_file(&n);
            }
        }
        let _ = self.parent.remove_dir(&self.name);
    }
}

impl Dir {
    /// A second handle on this directory.
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            fd: self.fd.try_clone()?,
            shown: self.shown.clone(),
        })
    }
}

/// Writes `path` with `draw`, which is given a path to create its file at
/// (plotters opens its file by name, following links): in a fresh private
/// directory beside `path`, where nothing can be planted, then renamed over
/// `path` when `draw` succeeds. A failed drawing leaves `path` as it was.
pub fn write_via(
    path: &Path,
    draw: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let (dir, name) = Dir::parent(path)?;
    let private = PrivateDir::create(&dir)?;
    draw(&private.dir.path_for(&name))?;
    if !matches!(
        private.dir.entry(&name)?.map(|e| e.kind),
        Some(Kind::File(_))
    ) {
        anyhow::bail!("the drawing made no file");
    }
    replaceable(&dir, &name, &private.dir.show(&name))?;
    dir.rename_from(&private.dir, &name, &name)?;
    Ok(())
}

/// The lock a run holds on a file several runs could name (`watch -o`,
/// `run -o`, a sweep's JSON): `flock` on `.NAME.lock` beside it, taken at
/// once or refused, removed when dropped. A second run naming the file is
/// refused before it measures, rather than both saying "written" over one
/// file.
#[derive(Debug)]
pub struct Lock {
    dir: Dir,
    name: OsString,
    _file: File,
}

impl Lock {
    /// Takes the lock on `path`; `WouldBlock` when another run holds it.
    pub fn take(path: &Path) -> io::Result<Lock> {
        let (dir, target) = Dir::parent(path)?;
        let mut name = OsString::from(".");
        name.push(&target);
        name.push(".lock");
        loop {
            let file = dir.open_or_create(&name, 0o644)?;
            // SAFETY: a valid open descriptor.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::WouldBlock {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        format!(
                            "another memlat run is writing it (it holds {})",
                            dir.show(&name).display()
                        ),
                    ));
                }
                return Err(e);
            }
            // A run that ended removes its lock file: the name must still
            // be the file locked, or the lock is taken again.
            use std::os::unix::fs::MetadataExt;
            let meta = file.metadata()?;
            if dir
                .entry(&name)?
                .is_some_and(|e| e.id == (meta.dev(), meta.ino()))
            {
                return Ok(Lock {
                    dir,
                    name,
                    _file: file,
                });
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still held: a run waiting on this file retries.
        let _ = self.dir.remove_file(&self.name);
    }
}
