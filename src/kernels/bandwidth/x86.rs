//! x86_64 bandwidth kernels with AVX-512, AVX2 and SSE2 intrinsics, 256
//! bytes a loop trip. Each runs only after the table checked the feature.

use std::arch::x86_64::*;

use super::{BLOCK, Features, Kernels};

/// What this CPU reports.
pub(super) fn detect() -> Features {
    Features {
        avx512f: std::arch::is_x86_feature_detected!("avx512f"),
        avx2: std::arch::is_x86_feature_detected!("avx2"),
        sse2: std::arch::is_x86_feature_detected!("sse2"),
        ..Features::default()
    }
}

/// Widest first.
pub(super) const KERNELS: [Kernels; 3] = [
    Kernels {
        name: "avx512",
        vector_bytes: 64,
        needs: Some(|f: &Features| f.avx512f),
        read: |b| unsafe_call(|| unsafe { read512(b) }),
        write: |b, v| unsafe_call(|| unsafe { write512(b, v) }),
        copy: |d, s| unsafe_call(|| unsafe { copy512(d, s) }),
        nt_write: Some(|b, v| unsafe_call(|| unsafe { nt512(b, v) })),
    },
    Kernels {
        name: "avx2",
        vector_bytes: 32,
        needs: Some(|f: &Features| f.avx2),
        read: |b| unsafe_call(|| unsafe { read256(b) }),
        write: |b, v| unsafe_call(|| unsafe { write256(b, v) }),
        copy: |d, s| unsafe_call(|| unsafe { copy256(d, s) }),
        nt_write: Some(|b, v| unsafe_call(|| unsafe { nt256(b, v) })),
    },
    Kernels {
        name: "sse2",
        vector_bytes: 16,
        needs: Some(|f: &Features| f.sse2),
        read: |b| unsafe_call(|| unsafe { read128(b) }),
        write: |b, v| unsafe_call(|| unsafe { write128(b, v) }),
        copy: |d, s| unsafe_call(|| unsafe { copy128(d, s) }),
        nt_write: Some(|b, v| unsafe_call(|| unsafe { nt128(b, v) })),
    },
];

/// Calls an intrinsic kernel. SAFETY (for every caller above): `select`
/// hands out a kernel only when the CPU reports its feature, and every
/// kernel touches only whole 256-byte blocks of the slices it is given.
fn unsafe_call<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// How far ahead the AVX-512 read prefetches, bytes (one `prefetcht0` a
/// 256-byte block, while the target is inside the buffer). A 512-bit load
/// touches each line once, and Intel's L1 streaming (DCU) prefetcher starts
/// on a second access to a recently loaded line: on the Golden Cove guest
/// the plain 512-bit read streamed memory at 16.1-16.6 GB/s against 19.5
/// for a 256-bit C loop (two loads a line); with this prefetch, 19.1-19.2.
/// The Zen 4 guest showed the same gap (11%) before; the prefetch was not
/// measured there.
const READ_PREFETCH: usize = 1024;

/// The smallest buffer the AVX-512 read prefetches in: past the largest L2
/// of current cores (2 MiB). In L1 and L2 the prefetch only cost (6-9% and
/// 5% on the Golden Cove guest: the load ports are the limit there), and in
/// that guest's L3 it changed nothing.
const READ_PREFETCH_FROM: usize = 4 << 20;

/// One block of a read: four vectors at a time into the four sums.
macro_rules! read_block {
    ($p:ident, $off:ident, $acc:ident, $load:path, $add:path, $bytes:literal) => {
        let mut k = 0;
        while k < BLOCK {
            // SAFETY: $off + k + 4 vectors lie within the first n bytes of buf.
            unsafe {
                $acc[0] = $add($acc[0], $load($p.add($off + k).cast()));
                $acc[1] = $add($acc[1], $load($p.add($off + k + $bytes).cast()));
                $acc[2] = $add($acc[2], $load($p.add($off + k + 2 * $bytes).cast()));
                $acc[3] = $add($acc[3], $load($p.add($off + k + 3 * $bytes).cast()));
            }
            k += 4 * $bytes;
        }
    };
}

macro_rules! width_kernels {
    ($feature:literal, $vec:ty, $bytes:literal, $read:ident, $write:ident, $copy:ident, $nt:ident,
     load = $load:path, store = $store:path, stream = $stream:path, add = $add:path,
     splat = $splat:path, zero = $zero:path, lanes = $lanes:expr, prefetch = $prefetch:expr) => {
        #[target_feature(enable = $feature)]
        unsafe fn $read(buf: &[u8]) -> u64 {
            let n = buf.len() / BLOCK * BLOCK;
            let p = buf.as_ptr();
            let mut acc = [$zero(); 4];
            let mut off = 0;
            // With a prefetch distance and a buffer past the caches, one
            // prefetch a block that far ahead while it stays inside the
            // buffer (see READ_PREFETCH), then the rest without: no test
            // inside either loop.
            let ahead = if $prefetch > 0 && n >= READ_PREFETCH_FROM {
                n - $prefetch
            } else {
                0
            };
            while off < ahead {
                // SAFETY: off + prefetch < n: inside buf.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(p.add(off + $prefetch).cast()) };
                read_block!(p, off, acc, $load, $add, $bytes);
                off += BLOCK;
            }
            while off < n {
                read_block!(p, off, acc, $load, $add, $bytes);
                off += BLOCK;
            }
            let sum = $add($add(acc[0], acc[1]), $add(acc[2], acc[3]));
            let words: [u64; $lanes] = unsafe { std::mem::transmute::<$vec, [u64; $lanes]>(sum) };
            std::hint::black_box(words.iter().fold(0u64, |a, w| a.wrapping_add(*w)))
        }

        #[target_feature(enable = $feature)]
        unsafe fn $write(buf: &mut [u8], value: u64) {
            let n = buf.len() / BLOCK * BLOCK;
            let p = buf.as_mut_ptr();
            let v: $vec = $splat(value as i64);
            let mut off = 0;
            while off < n {
                let mut k = 0;
                while k < BLOCK {
                    // SAFETY: as in the read kernel, within the first n bytes.
                    unsafe {
                        $store(p.add(off + k).cast(), v);
                        $store(p.add(off + k + $bytes).cast(), v);
                        $store(p.add(off + k + 2 * $bytes).cast(), v);
                        $store(p.add(off + k + 3 * $bytes).cast(), v);
                    }
                    k += 4 * $bytes;
                }
                off += BLOCK;
            }
        }

        #[target_feature(enable = $feature)]
        unsafe fn $copy(dst: &mut [u8], src: &[u8]) {
            let n = dst.len().min(src.len()) / BLOCK * BLOCK;
            let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
            let mut off = 0;
            while off < n {
                let mut k = 0;
                while k < BLOCK {
                    // SAFETY: within the first n bytes of both slices.
                    unsafe {
                        let a = $load(s.add(off + k).cast());
                        let b = $load(s.add(off + k + $bytes).cast());
                        let c = $load(s.add(off + k + 2 * $bytes).cast());
                        let e = $load(s.add(off + k + 3 * $bytes).cast());
                        $store(d.add(off + k).cast(), a);
                        $store(d.add(off + k + $bytes).cast(), b);
                        $store(d.add(off + k + 2 * $bytes).cast(), c);
                        $store(d.add(off + k + 3 * $bytes).cast(), e);
                    }
                    k += 4 * $bytes;
                }
                off += BLOCK;
            }
        }

        /// Non-temporal stores need aligned addresses: the unaligned head
        /// (under one vector) and the tail are written byte by byte. The
        /// vector's words start `head` bytes in, so `value` is rotated to
        /// keep every word of the buffer in phase.
        #[target_feature(enable = $feature)]
        unsafe fn $nt(buf: &mut [u8], value: u64) {
            let n = buf.len() / BLOCK * BLOCK;
            let p = buf.as_mut_ptr();
            let head = p.align_offset($bytes).min(n);
            let bytes = value.to_ne_bytes();
            for (i, b) in buf[..head].iter_mut().enumerate() {
                *b = bytes[i % 8];
            }
            let mut phased = bytes;
            phased.rotate_left(head % 8);
            let v: $vec = $splat(u64::from_ne_bytes(phased) as i64);
            let mut off = head;
            while off + $bytes <= n {
                // SAFETY: p + off is aligned to the vector and within n bytes.
                unsafe { $stream(p.add(off).cast(), v) };
                off += $bytes;
            }
            for (i, b) in buf[off..n].iter_mut().enumerate() {
                *b = bytes[(off + i) % 8];
            }
            // Order the streaming stores before anything that follows.
            _mm_sfence();
        }
    };
}

width_kernels!(
    "avx512f",
    __m512i,
    64,
    read512,
    write512,
    copy512,
    nt512,
    load = _mm512_loadu_si512,
    store = _mm512_storeu_si512,
    stream = _mm512_stream_si512,
    add = _mm512_add_epi64,
    splat = _mm512_set1_epi64,
    zero = _mm512_setzero_si512,
    lanes = 8,
    prefetch = READ_PREFETCH
);
width_kernels!(
    "avx2",
    __m256i,
    32,
    read256,
    write256,
    copy256,
    nt256,
    load = _mm256_loadu_si256,
    store = _mm256_storeu_si256,
    stream = _mm256_stream_si256,
    add = _mm256_add_epi64,
    splat = _mm256_set1_epi64x,
    zero = _mm256_setzero_si256,
    lanes = 4,
    prefetch = 0
);
width_kernels!(
    "sse2",
    __m128i,
    16,
    read128,
    write128,
    copy128,
    nt128,
    load = _mm_loadu_si128,
    store = _mm_storeu_si128,
    stream = _mm_stream_si128,
    add = _mm_add_epi64,
    splat = _mm_set1_epi64x,
    zero = _mm_setzero_si128,
    lanes = 2,
    prefetch = 0
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sum_every_word_whether_or_not_they_prefetch() {
        let features = Features::detect();
        // Shorter than the prefetch distance, about it, well past it, and
        // past the size it starts at.
        let from = READ_PREFETCH_FROM / BLOCK;
        for blocks in [1, 3, 4, 5, 7, 64, from - 1, from, from + 3] {
            let len = blocks * BLOCK;
            let src: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
            let expected = (super::super::PORTABLE.read)(&src);
            for k in KERNELS
                .iter()
                .filter(|k| k.needs.is_none_or(|n| n(&features)))
            {
                assert_eq!((k.read)(&src), expected, "{} read of {len} bytes", k.name);
            }
        }
        assert_eq!(READ_PREFETCH % BLOCK, 0);
    }
}
