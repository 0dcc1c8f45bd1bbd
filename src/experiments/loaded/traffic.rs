//! The traffic threads of `memlat loaded`: each walks its own buffer in
//! 4 KiB chunks, reading, writing or both, with a delay after every chunk,
//! and counts the bytes it moved (no PMU needed).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Bytes a thread handles between two looks at its delay and counters.
pub const CHUNK: usize = 4096;

/// What the traffic threads do to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Traffic {
    /// Read every word.
    Read,
    /// Write every word.
    Write,
    /// Read every word and write it back changed.
    Rmw,
    /// Non-temporal stores (x86 `movnti`), which bypass the caches; a plain
    /// write on other ISAs.
    NtWrite,
    /// Chunks read, this percentage of them; the rest written.
    Mix(u8),
}

impl Traffic {
    /// Parses `read`, `write`, `rmw`, `nt-write` or `mix:R` (R 0..100, the read share).
    pub fn parse(text: &str) -> Result<Traffic, String> {
        match text {
            "read" => Ok(Traffic::Read),
            "write" => Ok(Traffic::Write),
            "rmw" => Ok(Traffic::Rmw),
            "nt-write" => Ok(Traffic::NtWrite),
            _ => match text.strip_prefix("mix:").map(str::parse::<u8>) {
                Some(Ok(r)) if r <= 100 => Ok(Traffic::Mix(r)),
                _ => Err(format!(
                    "{text}: give read, write, rmw, nt-write or mix:R with R the read percentage (0 to 100), e.g. mix:67"
                )),
            },
        }
    }

    /// The name `parse` reads.
    pub fn name(self) -> String {
        match self {
            Traffic::Read => "read".into(),
            Traffic::Write => "write".into(),
            Traffic::Rmw => "rmw".into(),
            Traffic::NtWrite => "nt-write".into(),
            Traffic::Mix(r) => format!("mix:{r}"),
        }
    }

    /// Whether chunk `index` is read (else written), for a mix.
    fn reads_chunk(self, index: usize) -> bool {
        match self {
            Traffic::Mix(r) => (index % 100) < usize::from(r),
            Traffic::Read => true,
            _ => false,
        }
    }
}

/// A delay that parks a thread: no traffic at all (the idle point).
pub const PAUSED: u32 = u32::MAX;

/// What the measuring thread shares with the traffic threads.
#[derive(Debug, Default)]
pub struct Control {
    /// Spin iterations after every chunk, or [`PAUSED`].
    pub delay: AtomicU32,
    /// Set to end the threads.
    pub stop: AtomicBool,
    /// Bytes moved by all threads since the last reset.
    pub bytes: AtomicU64,
}

fn read_chunk(chunk: &[u64]) -> u64 {
    chunk.iter().fold(0u64, |a, &w| a.wrapping_add(w))
}

fn write_chunk(chunk: &mut [u64], value: u64) {
    chunk.fill(value);
}

fn rmw_chunk(chunk: &mut [u64]) {
    for w in chunk.iter_mut() {
        *w = w.wrapping_add(1);
    }
}

#[cfg(target_arch = "x86_64")]
fn nt_write_chunk(chunk: &mut [u64], value: u64) {
    for w in chunk.iter_mut() {
        // SAFETY: `w` is a valid, aligned u64 of the chunk; movnti needs only that.
        unsafe { core::arch::x86_64::_mm_stream_si64(w as *mut u64 as *mut i64, value as i64) };
    }
    // SAFETY: sfence orders the streaming stores; it has no other effect.
    unsafe { core::arch::x86_64::_mm_sfence() };
}

#[cfg(not(target_arch = "x86_64"))]
fn nt_write_chunk(chunk: &mut [u64], value: u64) {
    write_chunk(chunk, value);
}

/// Whether `nt-write` really bypasses the caches on this ISA.
pub const NT_WRITE_NATIVE: bool = cfg!(target_arch = "x86_64");

/// One traffic thread: walks `buffer` chunk by chunk with `kind` until
/// `control.stop`, spinning `control.delay` iterations after each chunk.
pub fn generate(buffer: &mut [u64], kind: Traffic, control: &Control) {
    let words = CHUNK / 8;
    let chunks = buffer.len() / words;
    let mut index = 0usize;
    let mut pending = 0u64;
    let mut sink = 0u64;
    while !control.stop.load(Ordering::Relaxed) {
        let delay = control.delay.load(Ordering::Relaxed);
        if delay == PAUSED {
            std::thread::sleep(std::time::Duration::from_millis(1));
            continue;
        }
        let at = (index % chunks.max(1)) * words;
        let chunk = &mut buffer[at..at + words];
        match kind {
            Traffic::Read => sink = sink.wrapping_add(read_chunk(chunk)),
            Traffic::Write => write_chunk(chunk, index as u64),
            Traffic::Rmw => rmw_chunk(chunk),
            Traffic::NtWrite => nt_write_chunk(chunk, index as u64),
            Traffic::Mix(_) if kind.reads_chunk(index) => {
                sink = sink.wrapping_add(read_chunk(chunk));
            }
            Traffic::Mix(_) => write_chunk(chunk, index as u64),
        }
        index += 1;
        pending += CHUNK as u64;
        if index.is_multiple_of(16) {
            control.bytes.fetch_add(pending, Ordering::Relaxed);
            pending = 0;
        }
        for i in 0..delay {
            std::hint::black_box(i);
        }
    }
    std::hint::black_box(sink);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn traffic_kinds_parse_and_name_themselves() {
        for text in [
            "read", "write", "rmw", "nt-write", "mix:67", "mix:0", "mix:100",
        ] {
            assert_eq!(Traffic::parse(text).unwrap().name(), text);
        }
        assert!(Traffic::parse("mix:101").unwrap_err().contains("mix:R"));
        assert!(Traffic::parse("copy").is_err());
        let mix = Traffic::Mix(67);
        assert_eq!((0..100).filter(|&i| mix.reads_chunk(i)).count(), 67);
    }

    #[test]
    fn a_thread_counts_what_it_moves_and_stops() {
        for kind in [
            Traffic::Read,
            Traffic::Write,
            Traffic::Rmw,
            Traffic::NtWrite,
            Traffic::Mix(50),
        ] {
            let control = Arc::new(Control::default());
            let c = Arc::clone(&control);
            let worker = std::thread::spawn(move || {
                let mut buffer = vec![1u64; 64 * 1024];
                generate(&mut buffer, kind, &c);
            });
            while control.bytes.load(Ordering::Relaxed) < 1 << 20 {
                std::thread::yield_now();
            }
            control.stop.store(true, Ordering::Relaxed);
            worker.join().unwrap();
            assert_eq!(
                control.bytes.load(Ordering::Relaxed) % (16 * CHUNK as u64),
                0
            );
        }
    }
}
