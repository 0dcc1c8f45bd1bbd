//! The one way memlat creates a file or a directory (issue 37): every path
//! it writes is walked one component at a time from `/` (or the current
//! directory), each directory opened by descriptor with `O_NOFOLLOW`, so
//! no component, the last or any ancestor, is followed through a symbolic
//! link another user owns. A link owned by the user memlat runs as, or by
//! root (who owns the system's own links, `/var/run`), is followed, its
//! target walked the same way. Files are then created relative to the
//! opened directory (`openat` with `O_CREAT | O_EXCL | O_NOFOLLOW`), and
//! renamed within it (`renameat`): what was checked is what is written,
//! whatever is renamed or planted meanwhile.
//!
//! As root with `sudo -E` in a shared directory (or a HOME root does not
//! own), a link planted by another user would otherwise aim root's file
//! wherever its owner chose: the refusal names the link and its owner.

use std::collections::VecDeque;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

mod write;

pub use write::{Lock, PrivateDir, create_unique, replace, temporary_name, write_via};

/// The most links followed in one path (Linux's own limit).
const MAX_LINKS: usize = 40;

/// A directory reached without following a link another user owns, held
/// open: files are created, listed, renamed and removed relative to it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    shown: PathBuf,
}

/// What to do with a directory on the way that does not exist.
#[derive(Clone, Copy)]
enum Missing {
    Fail,
    Create(libc::mode_t),
}

fn cstring(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn open_at(dir: RawFd, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    // SAFETY: a valid descriptor (or AT_FDCWD) and a NUL-terminated name;
    // the descriptor returned is owned by the OwnedFd alone.
    let fd = check(unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            libc::c_uint::from(mode),
        )
    })?;
    // SAFETY: fd was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `lstat` of `name` in `dir`.
fn stat_at(dir: RawFd, name: &CStr) -> io::Result<libc::stat> {
    // SAFETY: all-zero is a valid stat; fstatat fills it from a valid
    // descriptor and NUL-terminated name.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        check(libc::fstatat(
            dir,
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        ))?;
        Ok(st)
    }
}

fn read_link_at(dir: RawFd, name: &CStr) -> io::Result<PathBuf> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: buf is writable for buf.len() bytes.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(PathBuf::from(OsString::from_vec(buf)))
}

/// The effective user memlat runs as.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() }
}

/// Whether a link owned by `uid` may be followed: the user memlat runs as
/// owns it, or root does.
fn trusted(uid: u32) -> bool {
    uid == 0 || uid == euid()
}

/// The parts of `path` to walk, in order (a root restarts the walk).
fn parts(path: &Path) -> VecDeque<Component<'_>> {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// Where a walk stands: the current directory's descriptor, or the root,
/// whose entries are named by absolute path from `AT_FDCWD` rather than
/// through a descriptor of "/" (qemu-user's `-L` prefix maps "/" itself to
/// the guest's sysroot, so "/" + "tmp" would reach the sysroot's tmp).
enum Here {
    Root,
    Dir(OwnedFd),
}

impl Here {
    fn start(absolute: bool) -> io::Result<Here> {
        if absolute {
            Ok(Here::Root)
        } else {
            open_at(libc::AT_FDCWD, c".", libc::O_PATH | libc::O_DIRECTORY, 0).map(Here::Dir)
        }
    }

    /// The descriptor and name that reach `name` from here.
    fn at(&self, name: &CStr) -> io::Result<(i32, CString)> {
        match self {
            Here::Dir(fd) => Ok((fd.as_raw_fd(), name.to_owned())),
            Here::Root => {
                let mut bytes = b"/".to_vec();
                bytes.extend_from_slice(name.to_bytes());
                let c = CString::new(bytes)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"))?;
                Ok((libc::AT_FDCWD, c))
            }
        }
    }

    /// The root as a descriptor, or the directory's.
    fn into_fd(self) -> io::Result<OwnedFd> {
        match self {
            Here::Dir(fd) => Ok(fd),
            Here::Root => open_at(libc::AT_FDCWD, c"/", libc::O_PATH | libc::O_DIRECTORY, 0),
        }
    }
}

/// Walks `path` to a directory; see the module's note.
fn walk(path: &Path, missing: Missing) -> io::Result<OwnedFd> {
    let mut here = Here::start(path.is_absolute())?;
    let mut pending: VecDeque<OsString> = VecDeque::new();
    for c in parts(path) {
        match c {
            Component::RootDir | Component::Prefix(_) => pending.clear(),
            Component::ParentDir => pending.push_back("..".into()),
            Component::Normal(n) => pending.push_back(n.to_os_string()),
            Component::CurDir => {}
        }
    }
    let mut walked = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    };
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        let (dir, c) = here.at(&cstring(&name)?)?;
        if name == ".." {
            // The root's parent is the root.
            if let Here::Dir(_) = here {
                here = Here::Dir(open_at(dir, &c, libc::O_PATH | libc::O_DIRECTORY, 0)?);
            }
            walked.push("..");
            continue;
        }
        let st = match stat_at(dir, &c) {
            Ok(st) => st,
            Err(e) if e.kind() == io::ErrorKind::NotFound => match missing {
                Missing::Fail => return Err(e),
                Missing::Create(mode) => {
                    // SAFETY: a valid descriptor and NUL-terminated name.
                    let made = check(unsafe { libc::mkdirat(dir, c.as_ptr(), mode) });
                    match made {
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => {
                            return Err(io::Error::new(
                                e.kind(),
                                format!("creating {}: {e}", walked.join(&name).display()),
                            ));
                        }
                    }
                    stat_at(dir, &c)?
                }
            },
            Err(e) => return Err(e),
        };
        match st.st_mode & libc::S_IFMT {
            libc::S_IFLNK => {
                let target = read_link_at(dir, &c)?;
                let link = walked.join(&name);
                if !trusted(st.st_uid) {
                    return Err(untrusted_link(&link, &target, st.st_uid));
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(io::Error::other(format!(
                        "{}: more than {MAX_LINKS} symbolic links on the way (a loop?)",
                        link.display()
                    )));
                }
                let mut spliced: VecDeque<OsString> = VecDeque::new();
                for c in parts(&target) {
                    match c {
                        Component::ParentDir => spliced.push_back("..".into()),
                        Component::Normal(n) => spliced.push_back(n.to_os_string()),
                        _ => {}
                    }
                }
                if target.is_absolute() {
                    here = Here::Root;
                }
                while let Some(p) = spliced.pop_back() {
                    pending.push_front(p);
                }
                walked = link;
            }
            libc::S_IFDIR => {
                // O_NOFOLLOW: a link swapped in since the lstat is refused.
                here = Here::Dir(open_at(
                    dir,
                    &c,
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
                    0,
                )?);
                walked.push(&name);
            }
            _ => {
                return Err(io::Error::other(format!(
                    "{} is not a directory",
                    walked.join(&name).display()
                )));
            }
        }
    }
    here.into_fd()
}

/// The refusal for a link another user owns.
fn untrusted_link(link: &Path, target: &Path, uid: u32) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is a symbolic link (to {}) owned by user {} ({uid}), not by you or root: memlat follows no link another user owns; name a path without it",
            link.display(),
            target.display(),
            user_name(uid).unwrap_or_else(|| "?".into()),
        ),
    )
}

/// The login name of `uid`, from the password database.
fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: all-zero is a valid passwd; getpwuid_r fills it with pointers
    // into buf, which outlives every read below.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut out: *mut libc::passwd = std::ptr::null_mut();
        let r = libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out);
        if r != 0 || out.is_null() || pw.pw_name.is_null() {
            return None;
        }
        Some(CStr::from_ptr(pw.pw_name).to_string_lossy().into_owned())
    }
}

/// The directory part of `path` (`.` for a bare name).
pub fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// What a name in a directory is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file of this many bytes.
    File(u64),
    /// A directory.
    Dir,
    /// A symbolic link.
    Link,
    /// A device (character or block).
    Device,
    /// A FIFO, socket or other special file.
    Other,
}

/// What `lstat` tells of a name: its kind, owner, inode and change time.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// What it is.
    pub kind: Kind,
    /// Its owner.
    pub uid: u32,
    /// (device, inode): one file whatever names it.
    pub id: (u64, u64),
    /// Last modified, seconds since the epoch.
    pub modified: i64,
}

impl Entry {
    fn of(st: &libc::stat) -> Entry {
        let kind = match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File(st.st_size as u64),
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Link,
            libc::S_IFCHR | libc::S_IFBLK => Kind::Device,
            _ => Kind::Other,
        };
        Entry {
            kind,
            uid: st.st_uid,
            id: (st.st_dev, st.st_ino),
            modified: st.st_mtime,
        }
    }
}

impl Dir {
    /// Opens the directory `path` (see the module's note); it must exist.
    pub fn open(path: &Path) -> io::Result<Dir> {
        Ok(Dir {
            fd: walk(path, Missing::Fail)?,
            shown: path.to_path_buf(),
        })
    }

    /// Opens the directory `path`, creating what is missing of it (mode
    /// `mode`, less the umask), each new directory opened without following.
    pub fn create_all(path: &Path, mode: libc::mode_t) -> io::Result<Dir> {
        Ok(Dir {
            fd: walk(path, Missing::Create(mode))?,
            shown: path.to_path_buf(),
        })
    }

    /// The directory holding `path`, opened, and the last component's name.
    pub fn parent(path: &Path) -> io::Result<(Dir, OsString)> {
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other("it names no file (it ends in / or ..)"))?;
        Ok((Dir::open(parent_of(path))?, name.to_os_string()))
    }

    /// The path this directory was opened as, for messages.
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// `name` in this directory, for messages.
    pub fn show(&self, name: &OsStr) -> PathBuf {
        if self.shown == Path::new(".") {
            PathBuf::from(name)
        } else {
            self.shown.join(name)
        }
    }

    /// A path for `name` in exactly this directory, for a library that
    /// opens files by path (plotters): `/proc/self/fd/N/name`, which names
    /// this open directory whatever is renamed meanwhile; the shown path
    /// where /proc is missing.
    pub fn path_for(&self, name: &OsStr) -> PathBuf {
        let proc = PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()));
        if proc.is_dir() {
            proc.join(name)
        } else {
            self.shown.join(name)
        }
    }

    /// What `name` is here, without following it; `None` when missing.
    pub fn entry(&self, name: &OsStr) -> io::Result<Option<Entry>> {
        match stat_at(self.fd.as_raw_fd(), &cstring(name)?) {
            Ok(st) => Ok(Some(Entry::of(&st))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates the file `name` here: never an existing one, never through
    /// a link (`O_CREAT | O_EXCL | O_NOFOLLOW`), readable and writable as `mode`.
    pub fn create_new(&self, name: &OsStr, mode: libc::mode_t) -> io::Result<File> {
        let fd = open_at(
            self.fd.as_raw_fd(),
            &cstring(name)?,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            mode,
        )?;
        Ok(File::from(fd))
    }

    /// Opens the existing regular file `name` here with `flags`
    /// (`O_WRONLY | O_APPEND`...), never through a link, never blocking on
    /// a FIFO; anything but a regular file is refused.
    pub fn open_file(&self, name: &OsStr, flags: libc::c_int) -> io::Result<File> {
        let fd = open_at(
            self.fd.as_raw_fd(),
            &cstring(name)?,
            flags | libc::O_NOFOLLOW | libc::O_NONBLOCK,
            0,
        )?;
        let file = File::from(fd);
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("it is not a regular file"));
        }
        Ok(file)
    }

    /// Opens (creating it when missing, never through a link) the file
    /// `name` here for reading: what [`Lock`] holds.
    pub fn open_or_create(&self, name: &OsStr, mode: libc::mode_t) -> io::Result<File> {
        let fd = open_at(
            self.fd.as_raw_fd(),
            &cstring(name)?,
            libc::O_RDONLY | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_NONBLOCK,
            mode,
        )?;
        let file = File::from(fd);
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("it is not a regular file"));
        }
        Ok(file)
    }

    /// Creates the directory `name` here (it must not exist) and opens it.
    pub fn create_dir(&self, name: &OsStr, mode: libc::mode_t) -> io::Result<Dir> {
        let c = cstring(name)?;
        // SAFETY: a valid descriptor and NUL-terminated name.
        check(unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), mode) })?;
        let fd = open_at(
            self.fd.as_raw_fd(),
            &c,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        )?;
        Ok(Dir {
            fd,
            shown: self.shown.join(name),
        })
    }

    /// Renames `from` in `source` to `to` here, replacing what `to` names
    /// (never following it).
    pub fn rename_from(&self, source: &Dir, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (f, t) = (cstring(from)?, cstring(to)?);
        // SAFETY: valid descriptors and NUL-terminated names.
        check(unsafe {
            libc::renameat(
                source.fd.as_raw_fd(),
                f.as_ptr(),
                self.fd.as_raw_fd(),
                t.as_ptr(),
            )
        })
        .map(drop)
    }

    /// Renames `from` to `to` here, replacing what `to` names.
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        self.rename_from(self, from, to)
    }

    /// Gives the file `from` here the name `to` only if `to` is free
    /// (`AlreadyExists` otherwise): `renameat2(RENAME_NOREPLACE)`, or a
    /// hard link and an unlink where the file system lacks it.
    pub fn rename_new(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (f, t) = (cstring(from)?, cstring(to)?);
        let fd = self.fd.as_raw_fd();
        // The system call, not libc's wrapper: the static release binaries
        // link Rust's bundled musl, which has no renameat2().
        // SAFETY: valid descriptors and NUL-terminated names.
        let r = unsafe {
            let flags = libc::RENAME_NOREPLACE;
            libc::syscall(libc::SYS_renameat2, fd, f.as_ptr(), fd, t.as_ptr(), flags)
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
            return Err(e);
        }
        // SAFETY: as above.
        check(unsafe { libc::linkat(fd, f.as_ptr(), fd, t.as_ptr(), 0) })?;
        self.remove_file(from)
    }

    /// Removes the name `name` here (a link itself, never its target).
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        let c = cstring(name)?;
        // SAFETY: a valid descriptor and NUL-terminated name.
        check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) }).map(drop)
    }

    /// Removes the empty directory `name` here.
    pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
        let c = cstring(name)?;
        // SAFETY: a valid descriptor and NUL-terminated name.
        check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })
            .map(drop)
    }

    /// The names here (not `.` and `..`), at most `limit` of them: whether
    /// more were left unread is the second value.
    pub fn names(&self, limit: usize) -> io::Result<(Vec<OsString>, bool)> {
        let fd = open_at(
            self.fd.as_raw_fd(),
            c".",
            libc::O_RDONLY | libc::O_DIRECTORY,
            0,
        )?;
        // SAFETY: fdopendir takes over the descriptor (closed by closedir);
        // each dirent is read before the next readdir call.
        unsafe {
            let stream = libc::fdopendir(fd.into_raw_fd());
            if stream.is_null() {
                return Err(io::Error::last_os_error());
            }
            let mut names = Vec::new();
            let mut more = false;
            loop {
                let entry = libc::readdir(stream);
                if entry.is_null() {
                    break;
                }
                let name = CStr::from_ptr((*entry).d_name.as_ptr()).to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                if names.len() == limit {
                    more = true;
                    break;
                }
                names.push(OsString::from_vec(name.to_vec()));
            }
            libc::closedir(stream);
            Ok((names, more))
        }
    }
}

#[cfg(test)]
mod tests;
