//! The files commands write: checked before anything is measured, and
//! replaced whole (write a temporary file, then rename it over the old one),
//! so Ctrl-C, a crash or SIGKILL leaves a valid file. A sweep's own files,
//! rewritten after every point, are in `sweep.rs`.
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::error::UsageError;
use crate::output::plot::ImageFormat;
pub use crate::safe_fs::parent_of;
use crate::safe_fs::{Dir, Kind, Lock, temporary_name};

mod sweep;

pub use sweep::{RESULTS_DIR, SweepFiles, SweepObserver, results_dir};

/// What a command does with a file it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It writes data there (-o, --json, --csv).
    Writes,
    /// It draws a picture there (--plot): a known extension, an existing directory.
    Plot,
    /// It reads it (--resume, an input file).
    Reads,
}

/// Checks every file a command names before it measures anything: each one
/// it writes can be written (a plot has a known extension and its directory
/// exists), and no two flags name the same file, since one would destroy
/// the other (`--resume r.json -o r.json` would replace the sweep with its
/// table). Standard output (`-`) is no file.
pub fn check_files(files: &[(&str, Option<&Path>, Role)]) -> Result<()> {
    let named: Vec<(&str, &Path, Role)> = files
        .iter()
        .filter_map(|&(flag, path, role)| Some((flag, path?, role)))
        .filter(|(_, path, _)| path.as_os_str() != "-")
        .collect();
    for &(flag, path, role) in &named {
        match role {
            Role::Plot => {
                ImageFormat::of(path, flag)?;
                let parent = parent_of(path);
                if !parent.is_dir() {
                    return Err(UsageError(format!(
                        "{flag} {}: the directory {} does not exist",
                        path.display(),
                        parent.display()
                    ))
                    .into());
                }
                writable(path).map_err(|e| {
                    UsageError(format!("{flag} {}: cannot write it: {e}", path.display()))
                })?;
            }
            Role::Writes => {
                writable(path).map_err(|e| {
                    UsageError(format!("{flag} {}: cannot write it: {e}", path.display()))
                })?;
            }
            Role::Reads => {}
        }
    }
    for (i, &(flag_a, a, role_a)) in named.iter().enumerate() {
        for &(flag_b, b, role_b) in &named[i + 1..] {
            if (role_a != Role::Reads || role_b != Role::Reads) && same_file(a, b) {
                return Err(UsageError(format!(
                    "{flag_a} and {flag_b} both name {}: one would destroy the other; give each its own file",
                    a.display()
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// [`check_files`] for a command that writes `-o` and draws `--plot`.
pub fn check_output_and_plot(output: Option<&Path>, plot: Option<&Path>) -> Result<()> {
    check_files(&[
        ("-o/--output", output, Role::Writes),
        ("--plot", plot, Role::Plot),
    ])
}

/// [`check_files`] for a command that writes `-o` and draws `--plot` from
/// the files `reads` names (`--plateaus FILE`, `--machine FILE`): neither
/// output may replace one of them.
pub fn check_reads_output_and_plot(
    reads: &[(&str, Option<&Path>)],
    output: Option<&Path>,
    plot: Option<&Path>,
) -> Result<()> {
    let mut named: Vec<(&str, Option<&Path>, Role)> = reads
        .iter()
        .map(|&(flag, p)| (flag, p, Role::Reads))
        .collect();
    named.push(("-o/--output", output, Role::Writes));
    named.push(("--plot", plot, Role::Plot));
    check_files(&named)
}

/// [`check_files`] for a command that reads `inputs` and writes `-o` (and
/// `--plot`): no output may replace an input.
pub fn check_inputs_and_outputs(
    inputs: &[PathBuf],
    output: Option<&Path>,
    plot: Option<&Path>,
) -> Result<()> {
    crate::input::check_total(inputs.iter().map(PathBuf::as_path))
        .map_err(|e| UsageError(e.to_string()))?;
    let mut named: Vec<(&str, Option<&Path>, Role)> = inputs
        .iter()
        .map(|p| ("FILE", Some(p.as_path()), Role::Reads))
        .collect();
    named.push(("-o/--output", output, Role::Writes));
    named.push(("--plot", plot, Role::Plot));
    check_files(&named)
}

/// Whether two paths name one file: the same inode when both exist, else
/// the same name in the same (resolved) directory.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(x), Ok(y)) = (fs::metadata(a), fs::metadata(b)) {
        return x.dev() == y.dev() && x.ino() == y.ino();
    }
    let resolved = |p: &Path| {
        fs::canonicalize(parent_of(p))
            .ok()
            .map(|dir| dir.join(p.file_name().unwrap_or_default()))
    };
    match (resolved(a), resolved(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Where a command's output goes: standard output, or a file (`-o`) that is
/// replaced only when the command succeeds, atomically, and that no other
/// memlat run writes meanwhile (a [`Lock`] held from the check to the end).
pub struct Output {
    path: Option<PathBuf>,
    _lock: Option<Lock>,
}

/// Whether an existing file may be replaced without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Replaced (a report, a table: the command's own output).
    Replace,
    /// Replaced only with --force when it holds anything (`run -o`,
    /// `watch -o`: a name that may hold a sweep or an earlier watch).
    NeedsForce(bool),
}

impl Output {
    /// Standard output, or `path`: checked now (so a bad path fails before
    /// minutes of measuring) but not touched, so a failed or interrupted run
    /// leaves an existing file as it was.
    pub fn create(path: Option<&Path>) -> Result<Output> {
        Self::create_for(path, "-o/--output")
    }

    /// [`Output::create`] for a file another flag names (`--csv`).
    pub fn create_for(path: Option<&Path>, flag: &str) -> Result<Output> {
        Self::claim(path, flag, Existing::Replace)
    }

    /// [`Output::create`], refusing a file that holds anything unless
    /// `force` (`--force`).
    pub fn create_forced(path: Option<&Path>, force: bool) -> Result<Output> {
        Self::claim(path, "-o/--output", Existing::NeedsForce(force))
    }

    fn claim(path: Option<&Path>, flag: &str, existing: Existing) -> Result<Output> {
        let path = path.filter(|p| p.as_os_str() != "-");
        let lock = path.map(|path| claim(path, flag, existing)).transpose()?;
        Ok(Output {
            path: path.map(Path::to_path_buf),
            _lock: lock,
        })
    }

    /// Writes `content` whole: into a temporary file beside the target,
    /// renamed over it when complete.
    /// Control characters (other than line breaks and tabs) are written
    /// escaped ([`crate::printable`]): text read from a file, shown in a
    /// table on a terminal or in a file later `cat`, cannot drive it.
    pub fn write(&self, content: &str) -> Result<()> {
        let content = &*crate::printable::printable_lines(content, usize::MAX);
        match &self.path {
            Some(path) => replace(path, content),
            None => {
                use std::io::Write;
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(content.as_bytes())
                    .and_then(|()| stdout.flush())
                    .map_err(|e| {
                        UsageError(format!(
                            "standard output is closed or full ({e}): write to a file with -o FILE, or redirect it"
                        ))
                        .into()
                    })
            }
        }
    }
}

/// Checks `path` as [`writable`] does, takes its [`Lock`] (refused at once
/// when another run holds it), and, with [`Existing::NeedsForce`], refuses
/// a file that holds anything without --force; stale temporaries of a
/// killed run are removed. Every refusal names `flag` (exit 2).
pub fn claim(path: &Path, flag: &str, existing: Existing) -> Result<Lock> {
    let refuse = |e: &dyn std::fmt::Display| {
        UsageError(format!("{flag} {}: cannot write it: {e}", path.display()))
    };
    writable(path).map_err(|e| refuse(&e))?;
    let lock = Lock::take(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock => UsageError(format!(
            "{flag} {}: {e}; wait for it to end, or name another file",
            path.display()
        )),
        _ => refuse(&e),
    })?;
    if existing == Existing::NeedsForce(false)
        && fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
    {
        return Err(UsageError(format!(
            "{flag} {}: the file exists and holds an earlier result; replace it with --force, or name another file",
            path.display()
        ))
        .into());
    }
    remove_stale_temporaries(path);
    Ok(lock)
}

/// Whether `path` can be written, without changing it: every directory on
/// the way is reached without a link another user owns
/// ([`crate::safe_fs`]); an existing file is opened for appending (nothing
/// appended), a new one's directory must let a file be created there (a
/// probe file is created and removed). Refused: a symbolic link (dangling
/// or not: memlat never writes through one, so a link planted in a shared
/// directory cannot aim a root run elsewhere), and anything that is not a
/// regular file (a FIFO would block, a device would be written or, renamed
/// over, destroyed).
pub fn writable(path: &Path) -> std::io::Result<()> {
    let (dir, name) = Dir::parent(path)?;
    match dir.entry(&name)? {
        Some(e) if e.kind == Kind::Link => {
            let target = fs::read_link(path).unwrap_or_default();
            Err(std::io::Error::other(format!(
                "it is a symbolic link (to {}); memlat writes no file through a link: name the file itself",
                target.display()
            )))
        }
        Some(e) if e.kind == Kind::Dir => Err(std::io::Error::other("it is a directory")),
        Some(e) if !matches!(e.kind, Kind::File(_)) => {
            let m = fs::symlink_metadata(path)?;
            Err(std::io::Error::other(format!(
                "it is {}, not a regular file; name a file, or leave the flag out for standard output",
                crate::input::kind_of(&m)
            )))
        }
        Some(_) => dir
            .open_file(&name, libc::O_WRONLY | libc::O_APPEND)
            .map(drop),
        None => {
            let probe = temporary_name(&name);
            dir.create_new(&probe, 0o600)?;
            dir.remove_file(&probe)
        }
    }
}

/// Removes what a killed run left beside `path`: its temporaries
/// (`.NAME.PID.TAG.tmp`) and private drawing directories
/// (`.memlat-PID-TAG`), only those of a process that is gone, and only
/// regular files (a directory's own files first).
pub fn remove_stale_temporaries(path: &Path) {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let Ok(dir) = Dir::open(parent_of(path)) else {
        return;
    };
    let prefix = format!(".{name}.");
    let Ok((entries, _)) = dir.names(STALE_SCAN) else {
        return;
    };
    let gone = |pid: Option<&str>| {
        let Some(pid) = pid.and_then(|p| p.parse::<i32>().ok()) else {
            return false;
        };
        // SAFETY: kill with signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        !alive
    };
    for entry in entries {
        let file = entry.to_string_lossy().into_owned();
        let kind = dir.entry(&entry).ok().flatten().map(|e| e.kind);
        if let Some(rest) = file
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".tmp"))
            && gone(rest.split('.').next())
            && matches!(kind, Some(Kind::File(_)))
        {
            let _ = dir.remove_file(&entry);
        }
        if let Some(rest) = file.strip_prefix(".memlat-")
            && gone(rest.split('-').next())
            && kind == Some(Kind::Dir)
            && let Ok(private) = Dir::open(&dir.show(&entry))
            && let Ok((inside, _)) = private.names(64)
        {
            for f in inside {
                if matches!(private.entry(&f), Ok(Some(e)) if matches!(e.kind, Kind::File(_))) {
                    let _ = private.remove_file(&f);
                }
            }
            let _ = dir.remove_dir(&entry);
        }
    }
}

/// How many names [`remove_stale_temporaries`] looks at in one directory.
const STALE_SCAN: usize = 4096;

/// Writes `content` to `path` so a reader never sees a half-written file
/// ([`crate::safe_fs::replace`]: a private temporary beside it, renamed over
/// it). A device or a directory at `path` is never replaced (as root,
/// renaming over /dev/null would destroy it): the content stays in the
/// temporary file, which the error names.
pub fn replace(path: &Path, content: &str) -> Result<()> {
    crate::safe_fs::replace(path, content.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_leaves_only_the_new_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        replace(&path, "old").unwrap();
        replace(&path, "new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_planted_link_at_a_temporary_name_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("planted");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let here = Dir::open(dir.path()).unwrap();
        assert!(here.create_new(link.file_name().unwrap(), 0o600).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        // Temporary names differ from call to call: none can be planted ahead.
        let target = dir.path().join("r.html");
        let name = target.file_name().unwrap();
        assert_ne!(temporary_name(name), temporary_name(name));
        replace(&target, "report").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "report");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn two_flags_naming_one_file_are_refused_before_anything_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path().join("r.json");
        fs::write(&r, "{}").unwrap();
        let same = dir.path().join(".").join("r.json");
        let err = check_files(&[
            ("--resume", Some(&r), Role::Reads),
            ("-o/--output", Some(&same), Role::Writes),
        ])
        .unwrap_err()
        .to_string();
        assert!(err.contains("--resume and -o/--output both name"), "{err}");
        // Not yet existing: the same name in the same directory.
        let x = dir.path().join("x.csv");
        assert!(
            check_files(&[
                ("--csv", Some(&x), Role::Writes),
                ("--plot", Some(&x), Role::Plot)
            ])
            .is_err()
        );
        // A plot in a directory that does not exist fails now, not after measuring.
        let nowhere = dir.path().join("none/x.svg");
        let err = check_files(&[("--plot", Some(&nowhere), Role::Plot)]).unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        // Two inputs may be the same file; distinct outputs pass; stdout is no file.
        let dash = Path::new("-");
        check_files(&[
            ("FILE", Some(&r), Role::Reads),
            ("FILE", Some(&r), Role::Reads),
            ("--json", Some(&dir.path().join("a.json")), Role::Writes),
            ("-o/--output", Some(dash), Role::Writes),
            ("--plot", Some(&dir.path().join("a.svg")), Role::Plot),
        ])
        .unwrap();
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "nothing created"
        );
    }

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn outputs_are_never_written_through_a_link_or_into_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let created = dir.path().join("created");
        let link = dir.path().join("o.json");
        std::os::unix::fs::symlink(&created, &link).unwrap();
        let fifo = dir.path().join("f.txt");
        mkfifo(&fifo);
        // Named outputs: refused before anything is measured.
        let err = writable(&link).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
        let err = writable(&fifo).unwrap_err().to_string();
        assert!(err.contains("a FIFO"), "{err}");
        assert!(check_output_and_plot(Some(&link), None).is_err());
        assert!(Output::create(Some(&fifo)).is_err());
        // A file written without a check first (the remembered cache): the
        // link and the FIFO are replaced, never followed or opened.
        replace(&link, "{}").unwrap();
        replace(&fifo, "{}").unwrap();
        assert!(!created.exists(), "nothing created through the link");
        for p in [&link, &fifo] {
            let m = fs::symlink_metadata(p).unwrap();
            assert!(m.is_file(), "{} is now a plain file", p.display());
        }
    }

    #[test]
    fn temporaries_of_a_killed_run_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.json");
        // pid_max is at most 2^22 on Linux: this process cannot exist.
        let dead = dir.path().join(".s.json.4194304.00000000000000aa.tmp");
        let live = dir.path().join(temporary_name(target.file_name().unwrap()));
        fs::write(&dead, "x").unwrap();
        fs::write(&live, "x").unwrap();
        remove_stale_temporaries(&target);
        assert!(!dead.exists());
        assert!(live.exists());
    }

    #[test]
    fn an_output_is_locked_and_replaced_only_with_force_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        fs::write(&path, "an earlier watch").unwrap();
        let err = Output::create_forced(Some(&path), false)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("--force"), "{err}");
        let held = Output::create_forced(Some(&path), true).unwrap();
        let err = Output::create(Some(&path)).err().unwrap().to_string();
        assert!(err.contains("another memlat run"), "{err}");
        held.write("new").unwrap();
        drop(held);
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        // An empty file (a run killed before it wrote) holds nothing.
        fs::write(&path, "").unwrap();
        Output::create_forced(Some(&path), false).unwrap();
    }
}
