//! Reading a file memlat was given (a result, a profile, a state file): one
//! reader for all of them. Only a regular file, or `-` for standard input;
//! opened without blocking, so a FIFO with no writer cannot hang a command.
//!
//! One bound, [`max_bytes`] (256 MiB unless changed with `--max-input`),
//! on what reading costs in memory, for all of a command's inputs
//! together: the text (read with that bound, so `/dev/zero` cannot fill
//! memory), and the JSON trees parsed from it ([`admit_tree`], estimated
//! from the text's shape before each is built, [`tree_bytes`]): a tree
//! takes 4 to 7 times its text (a sweep 4, a file of short arrays far
//! more), so a file is refused before its tree is built, not after it
//! filled memory. A sweep's points, the bulk of the only results that grow
//! large, are read into their structs, not a tree (`readback::split`):
//! about as much as their text, so a sweep as large as the bound is read in
//! under twice it, and no reader holds more than 4 times what it read
//! (tests/memory.rs). A real result is a few MiB; the bound is far above any.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The most memory reading the inputs may take by default, bytes.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;

static MAX_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_BYTES);

/// Bytes of input read so far by this process: the bound holds for all the
/// inputs of a command together (three files of 250 MB to `merge` would
/// otherwise hold 750 MB at once).
static READ_BYTES: AtomicU64 = AtomicU64::new(0);

/// The largest input memlat reads, bytes.
pub fn max_bytes() -> u64 {
    MAX_BYTES.load(Ordering::Relaxed)
}

/// Raises (or lowers) the largest input memlat reads (`--max-input`).
pub fn set_max_bytes(bytes: u64) {
    MAX_BYTES.store(bytes.max(1), Ordering::Relaxed);
}

/// The bound `--max-input MIB` asks for, in bytes, or why it cannot be: at
/// least 1 MiB, and at most half of `available` memory: the bound counts
/// the text and its tree, and what a command builds from them (tables,
/// charts, its own copy of a result) comes beside; a larger one would swap
/// or be killed, not be read.
pub fn bound_from_mib(mib: u64, available: Option<u64>) -> Result<u64, String> {
    let bytes = mib
        .checked_mul(1 << 20)
        .ok_or_else(|| format!("--max-input {mib}: give MiB, e.g. --max-input 1024"))?;
    if mib == 0 {
        return Err("--max-input 0: give at least 1 (MiB)".into());
    }
    if let Some(available) = available
        && bytes > available / 2
    {
        return Err(format!(
            "--max-input {mib}: more than half the memory available ({} MiB): what a command builds from its inputs comes beside what reading them takes; give at most {}",
            available >> 20,
            (available / 2) >> 20
        ));
    }
    Ok(bytes)
}

/// Refuses, before any is read, inputs whose sizes together pass the bound.
pub fn check_total<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Result<(), InputError> {
    let total: u64 = paths
        .into_iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
        .fold(0, u64::saturating_add);
    if total > max_bytes() {
        return Err(InputError::TooLarge {
            path: "the inputs together".into(),
            limit: max_bytes() >> 20,
        });
    }
    Ok(())
}

/// Bytes a JSON tree (`serde_json::Value`) parsed from `text` takes,
/// estimated from its shape without parsing it: each object or array
/// about 640 bytes (an object's map node, its entries' room), each value
/// in one 48, and each byte of a string one. Measured against the
/// allocations of parsing memlat's results, from a 755-byte numa result to
/// a 44 MiB sweep, it is 1.1 to 2.8 times what they take (sweeps 1.1 to
/// 1.3); JSON lines (a watch) are estimated alike.
pub fn tree_bytes(text: &str) -> u64 {
    let (mut containers, mut separators, mut string_bytes) = (0u64, 0u64, 0u64);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text.as_bytes() {
        if in_string {
            string_bytes += 1;
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => containers += 1,
            b',' => separators += 1,
            _ => {}
        }
    }
    containers
        .saturating_mul(640)
        .saturating_add((containers + separators).saturating_mul(48))
        .saturating_add(string_bytes)
}

/// Counts the tree that parsing `text` (read from `name`) will build
/// against the bound, before it is built: [`InputError::TooCostly`] when
/// the inputs' texts and trees together would pass it.
pub fn admit_tree(text: &str, name: &str) -> Result<(), InputError> {
    let tree = tree_bytes(text);
    if reserve(tree) {
        Ok(())
    } else {
        Err(InputError::TooCostly {
            path: name.into(),
            need: (text.len() as u64).saturating_add(tree) >> 20,
            limit: max_bytes() >> 20,
        })
    }
}

/// Counts `len` more bytes against the bound for all inputs together;
/// `false` when they would pass it.
fn reserve(len: u64) -> bool {
    let before = READ_BYTES.fetch_add(len, Ordering::Relaxed);
    before.saturating_add(len) <= max_bytes()
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
    #[error("{path}: not a regular file ({what}); give a file, or - for standard input{hint}")]
    NotRegular {
        /// The file.
        path: String,
        /// What it is instead.
        what: &'static str,
        /// For a directory, how to name the results in it.
        hint: String,
    },
    /// Larger than the bound (alone, or with the inputs read before it).
    #[error(
        "{path}: larger than {limit} MiB (the bound for all inputs together); raise it with --max-input MIB if it is really memlat data"
    )]
    TooLarge {
        /// The file.
        path: String,
        /// The bound, MiB.
        limit: u64,
    },
    /// Its text and the tree parsed from it would take more than the bound.
    #[error(
        "{path}: reading it would take {need} MiB of memory or more (its text and the JSON tree parsed from it), more than the bound of {limit} MiB for all inputs together; a memlat result takes a few MiB: raise the bound with --max-input MIB if this is one"
    )]
    TooCostly {
        /// The file.
        path: String,
        /// Its text and tree, MiB.
        need: u64,
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

/// What a file that is not a regular file is, in words ("a FIFO").
pub(crate) fn kind_of(meta: &std::fs::Metadata) -> &'static str {
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
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a file"
    }
}

/// Reads at most `max` bytes and one more from `reader`: the text, or
/// [`InputError::TooLarge`].
/// A NUL byte ends the read at once: no text memlat reads holds one, and
/// /dev/zero on standard input is then refused at its first block.
/// `expected` (a regular file's length) sizes the buffer once: grown by
/// doubling, a 234 MiB text would be copied on its way and left with room
/// for 256.
fn bounded(reader: impl Read, name: &str, max: u64, expected: u64) -> Result<String, InputError> {
    let mut bytes = Vec::with_capacity(expected.min(max).saturating_add(1) as usize);
    let mut limited = reader.take(max.saturating_add(1));
    let mut block = vec![0u8; 64 << 10];
    loop {
        let n = match limited.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(InputError::Io {
                    path: name.into(),
                    source,
                });
            }
        };
        if block[..n].contains(&0) {
            return Err(InputError::NotText { path: name.into() });
        }
        bytes.extend_from_slice(&block[..n]);
    }
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
        return bounded(std::io::stdin().lock(), "standard input", max_bytes(), 0);
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
        // A directory is likely a command's output folder (`characterize -o`).
        let hint = if meta.is_dir() {
            format!(
                " (for the results in a folder: {}/*.json)",
                name.trim_end_matches('/')
            )
        } else {
            String::new()
        };
        return Err(InputError::NotRegular {
            path: name,
            what: kind_of(&meta),
            hint,
        });
    }
    if meta.len() > max_bytes() || !reserve(meta.len()) {
        return Err(InputError::TooLarge {
            path: name,
            limit: max_bytes() >> 20,
        });
    }
    bounded(file, &name, max_bytes(), meta.len())
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
    fn the_bound_from_max_input_neither_wraps_nor_passes_memory() {
        assert_eq!(bound_from_mib(256, None), Ok(256 << 20));
        assert!(bound_from_mib(0, None).unwrap_err().contains("at least 1"));
        // 2^44 MiB is 2^64 bytes: refused, not wrapped to a bound of 0.
        assert!(bound_from_mib(17_592_186_044_416, None).is_err());
        let err = bound_from_mib(2048, Some(2 << 30)).unwrap_err();
        assert!(err.contains("give at most 1024"), "{err}");
    }

    #[test]
    fn a_nul_byte_ends_the_read_at_once() {
        let zeros = std::io::repeat(0);
        assert!(matches!(
            bounded(zeros, "standard input", u64::MAX, 0),
            Err(InputError::NotText { .. })
        ));
    }

    #[test]
    fn a_trees_cost_is_estimated_from_its_shape() {
        // Two objects, three commas (not the one in a string), 26 bytes
        // of strings (each with its closing quote).
        let point = r#"{"size": 4096, "s": "a,b{", "ns": {"median": 1.5, "min": 1.4}}"#;
        assert_eq!(tree_bytes(point), 2 * 640 + (2 + 3) * 48 + 26);
        // Short arrays cost far more than their text: 3 bytes a value.
        let dense = format!("[{}1]", "1, ".repeat(1000));
        assert!(tree_bytes(&dense) > 10 * dense.len() as u64);
    }

    #[test]
    fn reading_stops_at_the_bound() {
        let big = std::io::repeat(b'x');
        match bounded(big, "zeros", 1000, 0) {
            Err(InputError::TooLarge { limit: 0, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(bounded(&b"abc"[..], "t", 3, 3).unwrap(), "abc");
        assert!(matches!(
            bounded(&[0xff, 0xfe][..], "t", 3, 0),
            Err(InputError::NotText { .. })
        ));
    }
}
