//! Reading a file memlat was given (a result, a profile, a state file): one
//! reader for all of them. Only a regular file, or `-` for standard input;
//! at most [`max_bytes`] (256 MiB unless raised with `--max-input`), read
//! with that bound, so `/dev/zero` cannot fill memory; opened without
//! blocking, so a FIFO with no writer cannot hang a command.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest input by default, bytes.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;

static MAX_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_BYTES);

/// The largest input memlat reads, bytes.
pub fn max_bytes() -> u64 {
    MAX_BYTES.load(Ordering::Relaxed)
}

/// Raises (or lowers) the largest input memlat reads (`--max-input`).
pub fn set_max_bytes(bytes: u64) {
    MAX_BYTES.store(bytes.max(1), Ordering::Relaxed);
}

/// Why an input could not be read; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Opening or reading failed.
    #[error("{path}: cannot read it: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// Not a regular file (a directory, a FIFO, a device, a socket).
    #[error("{path}: not a regular file ({what}); give a file, or - for standard input")]
    NotRegular {
        /// The file.
        path: String,
        /// What it is instead.
        what: &'static str,
    },
    /// Larger than the bound.
    #[error(
        "{path}: larger than {limit} MiB; raise the bound with --max-input MIB if it is really a memlat file"
    )]
    TooLarge {
        /// The file.
        path: String,
        /// The bound, MiB.
        limit: u64,
    },
    /// Not UTF-8 text.
    #[error("{path}: not text (UTF-8)")]
    NotText {
        /// The file.
        path: String,
    },
}

fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Reads at most `max` bytes and one more from `reader`: the text, or
/// [`InputError::TooLarge`].
fn bounded(mut reader: impl Read, name: &str, max: u64) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            path: name.into(),
            source,
        })?;
    if bytes.len() as u64 > max {
        return Err(InputError::TooLarge {
            path: name.into(),
            limit: max >> 20,
        });
    }
    String::from_utf8(bytes).map_err(|_| InputError::NotText { path: name.into() })
}

/// The text of `path` (or standard input for `-`), bounded as the module says.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let name = path.display().to_string();
    if path.as_os_str() == "-" {
        return bounded(std::io::stdin().lock(), "standard input", max_bytes());
    }
    // O_NONBLOCK: opening a FIFO without a writer returns at once; it is
    // then refused as not a regular file.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| InputError::Io {
            path: name.clone(),
            source,
        })?;
    let meta = file.metadata().map_err(|source| InputError::Io {
        path: name.clone(),
        source,
    })?;
    if !meta.is_file() {
        return Err(InputError::NotRegular {
            path: name,
            what: kind_of(&meta),
        });
    }
    if meta.len() > max_bytes() {
        return Err(InputError::TooLarge {
            path: name,
            limit: max_bytes() >> 20,
        });
    }
    bounded(file, &name, max_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.json");
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(read_text(&file).unwrap(), "{}");
        let err = read_text(dir.path()).unwrap_err().to_string();
        assert!(err.contains("a directory"), "{err}");
        let err = read_text(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(err.contains("a device"), "{err}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_text(&fifo).unwrap_err().to_string();
        assert!(err.contains("a FIFO"), "{err}");
        assert!(read_text(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn reading_stops_at_the_bound() {
        let big = std::io::repeat(b'x');
        match bounded(big, "zeros", 1000) {
            Err(InputError::TooLarge { limit: 0, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(bounded(&b"abc"[..], "t", 3).unwrap(), "abc");
        assert!(matches!(
            bounded(&[0xff, 0xfe][..], "t", 3),
            Err(InputError::NotText { .. })
        ));
    }
}
