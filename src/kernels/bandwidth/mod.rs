//! Bandwidth kernels: stream through a buffer as fast as the core can
//! (read, write, copy, non-temporal write), unrolled so the loop's own cost
//! is not what is measured. One table picks the widest vectors the CPU
//! reports at run time (AVX-512, AVX2 or SSE2 on x86_64; SVE or NEON on
//! aarch64; RVV on riscv64), with a portable scalar fallback everywhere
//! (`--kernel portable`), so both stay tested.
//!
//! Bytes counted: read and write count the buffer once per pass; copy counts
//! the bytes read plus the bytes written (twice the buffer, as STREAM's copy
//! does); a non-temporal write counts the buffer once.

// The one place that knows the ISA: each one's module holds its kernel sets
// (`KERNELS`, widest first) and `detect`; `isa` names this build's.
#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "riscv64")]
mod riscv64;
#[cfg(target_arch = "x86_64")]
mod x86;
#[cfg(target_arch = "x86_64")]
mod x86_read;

#[cfg(target_arch = "aarch64")]
use aarch64 as isa;
#[cfg(target_arch = "riscv64")]
use riscv64 as isa;
#[cfg(target_arch = "x86_64")]
use x86 as isa;

pub mod peak;

/// No vector kernels for this ISA: the portable set only.
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
mod isa {
    use super::{Features, Kernels};

    pub(super) const KERNELS: [Kernels; 0] = [];

    pub(super) fn detect() -> Features {
        Features::default()
    }
}

/// What the CPU reports it can run (faked in tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    /// AVX-512 Foundation.
    pub avx512f: bool,
    /// AVX2.
    pub avx2: bool,
    /// SSE2 (every x86_64).
    pub sse2: bool,
    /// NEON, aarch64's Advanced SIMD (every aarch64 Linux runs on).
    pub neon: bool,
    /// SVE, aarch64's scalable vectors.
    pub sve: bool,
    /// RVV 1.0, riscv64's V extension.
    pub rvv: bool,
}

impl Features {
    /// What this CPU reports.
    pub fn detect() -> Features {
        isa::detect()
    }
}

/// Reads every byte of the buffer and returns the wrapping sum of its 8-byte
/// words, or of its last [`Kernels::read_sum_vectors`] vectors' words (so
/// the kernels check each other).
pub type ReadFn = fn(&[u8]) -> u64;
/// Writes `value` over the whole buffer.
pub type WriteFn = fn(&mut [u8], u64);
/// Reads the buffer the given number of times (at least once) in one
/// call, returning what [`ReadFn`] returns for the last.
pub type ReadPassesFn = fn(&[u8], u64) -> u64;
/// Copies `src` into `dst` (same length).
pub type CopyFn = fn(&mut [u8], &[u8]);

/// One set of kernels for one vector width.
#[derive(Debug, Clone, Copy)]
pub struct Kernels {
    /// `avx512`, `avx2`, `sse2`, `sve`, `neon`, `rvv` or `portable`.
    pub name: &'static str,
    /// Bytes per vector register (for the scalable SVE and RVV, the least
    /// the ISA allows: the CPU's may be wider).
    pub vector_bytes: usize,
    /// The feature it needs (None: runs everywhere).
    needs: Option<fn(&Features) -> bool>,
    /// Read kernel.
    pub read: ReadFn,
    /// The read looped inside the kernel, where it has such a loop: a small
    /// buffer's pass is a hundred cycles or so, and a call a pass would
    /// time the call too. None: call `read` once a pass.
    pub read_passes: Option<ReadPassesFn>,
    /// [`Kernels::read_passes`] with software prefetches ahead of the
    /// loads, where the kernel has such a variant: it is faster on some
    /// cores and slower on others, so a caller times both and keeps the
    /// faster. None: no such variant.
    pub read_passes_prefetched: Option<ReadPassesFn>,
    /// None: the read sums every word it loads. Some(k): it sums only the
    /// last k vectors (x86's plain-load `asm!` reads, whose other loads feed
    /// nothing so that they need no ALU port: see `x86_read`).
    pub read_sum_vectors: Option<usize>,
    /// Write kernel.
    pub write: WriteFn,
    /// Copy kernel.
    pub copy: CopyFn,
    /// Non-temporal write, where the ISA has such a store.
    pub nt_write: Option<WriteFn>,
}

/// Buffers are processed in blocks of this many bytes (4 vectors of the
/// widest kind, unrolled); sizes are rounded down to it.
pub const BLOCK: usize = 256;

/// Bytes the portable kernels handle a loop trip: a line, as eight words.
const PORTABLE_CHUNK: usize = 64;

fn portable_read(buf: &[u8]) -> u64 {
    // Eight independent sums, so no add waits for another (four, in two
    // vector registers, left the adds a chain and the loads idle).
    let mut acc = [0u64; 8];
    for block in buf.chunks_exact(PORTABLE_CHUNK) {
        for (k, a) in acc.iter_mut().enumerate() {
            let word = u64::from_ne_bytes(block[k * 8..k * 8 + 8].try_into().expect("8 bytes"));
            *a = a.wrapping_add(word);
        }
    }
    std::hint::black_box(acc.iter().fold(0u64, |sum, a| sum.wrapping_add(*a)))
}

fn portable_write(buf: &mut [u8], value: u64) {
    for chunk in buf.chunks_exact_mut(8) {
        chunk.copy_from_slice(&value.to_ne_bytes());
    }
    std::hint::black_box(buf.as_ptr());
}

fn portable_copy(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
        d.copy_from_slice(s);
    }
    std::hint::black_box(dst.as_ptr());
}

/// The portable kernels: plain Rust over 8-byte words (the compiler may
/// vectorise them for the target's baseline, never beyond it).
pub const PORTABLE: Kernels = Kernels {
    name: "portable",
    vector_bytes: 8,
    needs: None,
    read: portable_read,
    read_passes: None,
    read_passes_prefetched: None,
    read_sum_vectors: None,
    write: portable_write,
    copy: portable_copy,
    nt_write: None,
};

/// Every kernel set, widest first.
pub fn table() -> Vec<Kernels> {
    isa::KERNELS.iter().copied().chain([PORTABLE]).collect()
}

/// The widest kernel set `features` allow (the portable one when `portable`).
pub fn select(features: &Features, portable: bool) -> Kernels {
    if portable {
        return PORTABLE;
    }
    table()
        .into_iter()
        .find(|k| k.needs.is_none_or(|needs| needs(features)))
        .unwrap_or(PORTABLE)
}

/// The kernel set called `name`, when this CPU runs it; else the names it
/// does run, widest first.
pub fn by_name(name: &str, features: &Features) -> Result<Kernels, Vec<&'static str>> {
    let runnable: Vec<Kernels> = table()
        .into_iter()
        .filter(|k| k.needs.is_none_or(|needs| needs(features)))
        .collect();
    runnable
        .iter()
        .find(|k| k.name == name)
        .copied()
        .ok_or_else(|| runnable.iter().map(|k| k.name).collect())
}

/// Which way a kernel moves bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Loads only.
    Read,
    /// Stores only.
    Write,
    /// Loads and stores.
    Copy,
    /// Non-temporal stores (around the caches).
    NtWrite,
}

impl Op {
    /// Bytes one pass over a buffer of `len` bytes counts.
    pub fn bytes_per_pass(self, len: usize) -> u64 {
        let len = (len / BLOCK * BLOCK) as u64;
        match self {
            Op::Copy => 2 * len,
            Op::Read | Op::Write | Op::NtWrite => len,
        }
    }

    /// The JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Copy => "copy",
            Op::NtWrite => "nt_write",
        }
    }
}

/// Runs `op` of `kernels` once over `a` (and `b`, the copy's source);
/// None when the kernels have no such operation.
pub fn pass(kernels: &Kernels, op: Op, a: &mut [u8], b: &[u8], value: u64) -> Option<u64> {
    let n = a.len() / BLOCK * BLOCK;
    match op {
        Op::Read => Some((kernels.read)(&a[..n])),
        Op::Write => {
            (kernels.write)(&mut a[..n], value);
            Some(0)
        }
        Op::Copy => {
            (kernels.copy)(&mut a[..n], &b[..n]);
            Some(0)
        }
        Op::NtWrite => kernels.nt_write.map(|w| {
            w(&mut a[..n], value);
            0
        }),
    }
}

/// Reads `a` `passes` times in one call, where `kernels` loop their read
/// inside ([`Kernels::read_passes`]; with `prefetched`, their prefetching
/// read, [`Kernels::read_passes_prefetched`]); None where they have no
/// such read (call [`pass`] once a pass).
pub fn read_passes(kernels: &Kernels, a: &[u8], passes: u64, prefetched: bool) -> Option<u64> {
    let n = a.len() / BLOCK * BLOCK;
    let read = if prefetched {
        kernels.read_passes_prefetched
    } else {
        kernels.read_passes
    };
    read.map(|read| read(&a[..n], passes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widest_kernel_the_features_allow_is_chosen() {
        let none = Features::default();
        assert_eq!(select(&none, false).name, "portable");
        let all = Features {
            avx512f: true,
            avx2: true,
            sse2: true,
            neon: true,
            sve: true,
            rvv: true,
        };
        assert_eq!(select(&all, true).name, "portable");
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(select(&all, false).name, "avx512");
            let avx2 = Features {
                avx512f: false,
                ..all
            };
            assert_eq!(select(&avx2, false).name, "avx2");
            let sse2 = Features { sse2: true, ..none };
            assert_eq!(select(&sse2, false).name, "sse2");
            assert!(select(&sse2, false).nt_write.is_some());
        }
        #[cfg(target_arch = "aarch64")]
        {
            assert_eq!(select(&all, false).name, "sve");
            assert!(select(&all, false).nt_write.is_some());
            let neon = Features { neon: true, ..none };
            assert_eq!(select(&neon, false).name, "neon");
            assert!(select(&neon, false).nt_write.is_some());
        }
        #[cfg(target_arch = "riscv64")]
        {
            assert_eq!(select(&all, false).name, "rvv");
            // riscv64 has no non-temporal store.
            assert!(select(&all, false).nt_write.is_none());
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let x86_only = Features {
                avx512f: true,
                avx2: true,
                sse2: true,
                ..none
            };
            assert_eq!(select(&x86_only, false).name, "portable");
        }
    }

    /// Checks one set against the portable read on `blocks` whole blocks
    /// starting `offset` bytes into an allocation, with a tail past them that
    /// no kernel may touch.
    fn check_moves_every_byte(k: &Kernels, blocks: usize, offset: usize) {
        let what = format!("{} ({blocks} blocks at offset {offset})", k.name);
        let n = blocks * BLOCK;
        let len = n + 100;
        let src_all: Vec<u8> = (0..offset + len).map(|i| (i * 7 + 3) as u8).collect();
        let src = &src_all[offset..];
        let checked = k
            .read_sum_vectors
            .map_or(n, |v| (v * k.vector_bytes).min(n));
        assert_eq!(
            (k.read)(&src[..n]),
            portable_read(&src[n - checked..n]),
            "{what} read"
        );
        let mut dst_all = vec![0xeeu8; offset + len];
        let dst = &mut dst_all[offset..];
        assert_eq!(pass(k, Op::Copy, dst, src, 0), Some(0));
        assert_eq!(&dst[..n], &src[..n], "{what} copy");
        let untouched = |d: &[u8]| d[n..].iter().all(|&b| b == 0xee);
        assert!(untouched(dst), "{what} copy tail");
        let value = 0x0102_0304_0506_0708u64;
        let written = |d: &[u8]| {
            d[..n]
                .chunks_exact(8)
                .all(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")) == value)
        };
        pass(k, Op::Write, dst, src, value);
        assert!(written(dst), "{what} write");
        assert!(untouched(dst), "{what} write tail");
        let mut nt_all = vec![0xeeu8; offset + len];
        let nt = &mut nt_all[offset..];
        match pass(k, Op::NtWrite, nt, src, value) {
            Some(_) => {
                assert!(written(nt), "{what} nt");
                assert!(untouched(nt), "{what} nt tail");
            }
            None => assert!(k.nt_write.is_none()),
        }
    }

    #[test]
    fn every_kernel_this_cpu_runs_moves_every_byte() {
        let features = Features::detect();
        for k in table()
            .into_iter()
            .filter(|k| k.needs.is_none_or(|n| n(&features)))
        {
            // Sizes that leave scalable vectors (SVE, RVV) a partial last
            // trip at some vector length; offset 1 is misaligned.
            for blocks in [0, 1, 3, 5, 64] {
                for offset in [0, 1] {
                    check_moves_every_byte(&k, blocks, offset);
                }
            }
            let nt = if k.nt_write.is_some() {
                "with"
            } else {
                "without"
            };
            println!("kernel set {} checked ({nt} nt_write)", k.name);
        }
    }

    #[test]
    fn kernels_are_found_by_name_among_those_this_cpu_runs() {
        let none = Features::default();
        assert_eq!(by_name("portable", &none).unwrap().name, "portable");
        let refused = by_name("no-such-kernels", &none).unwrap_err();
        assert_eq!(refused, vec!["portable"]);
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = Features {
                avx2: true,
                sse2: true,
                ..none
            };
            assert_eq!(by_name("avx2", &avx2).unwrap().name, "avx2");
            assert_eq!(
                by_name("avx512", &avx2).unwrap_err(),
                vec!["avx2", "sse2", "portable"]
            );
        }
    }

    #[test]
    fn bytes_are_counted_per_pass_and_operation() {
        assert_eq!(Op::Read.bytes_per_pass(16384), 16384);
        assert_eq!(Op::Write.bytes_per_pass(16384 + 10), 16384);
        assert_eq!(Op::Copy.bytes_per_pass(16384), 32768);
        assert_eq!(Op::NtWrite.bytes_per_pass(100), 0);
        assert_eq!(Op::Copy.name(), "copy");
    }
}
