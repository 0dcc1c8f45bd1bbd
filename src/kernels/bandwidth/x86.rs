//! x86_64 bandwidth kernels with AVX-512, AVX2 and SSE2 intrinsics, 256
//! bytes a loop trip (the reads are `asm!`, in `x86_read`). Each runs only
//! after the table checked the feature.

use std::arch::x86_64::*;

use super::x86_read::{READ_SUM_VECTORS, read128, read256, read512};
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
        read: |b| unsafe_call(|| unsafe { read512(b, 1, false) }),
        read_passes: Some(|b, n| unsafe_call(|| unsafe { read512(b, n, false) })),
        read_passes_prefetched: Some(|b, n| unsafe_call(|| unsafe { read512(b, n, true) })),
        read_sum_vectors: Some(READ_SUM_VECTORS),
        write: |b, v| unsafe_call(|| unsafe { write512(b, v) }),
        copy: |d, s| unsafe_call(|| unsafe { copy512(d, s) }),
        nt_write: Some(|b, v| unsafe_call(|| unsafe { nt512(b, v) })),
    },
    Kernels {
        name: "avx2",
        vector_bytes: 32,
        needs: Some(|f: &Features| f.avx2),
        read: |b| unsafe_call(|| unsafe { read256(b, 1) }),
        read_passes: Some(|b, n| unsafe_call(|| unsafe { read256(b, n) })),
        read_passes_prefetched: None,
        read_sum_vectors: Some(READ_SUM_VECTORS),
        write: |b, v| unsafe_call(|| unsafe { write256(b, v) }),
        copy: |d, s| unsafe_call(|| unsafe { copy256(d, s) }),
        nt_write: Some(|b, v| unsafe_call(|| unsafe { nt256(b, v) })),
    },
    Kernels {
        name: "sse2",
        vector_bytes: 16,
        needs: Some(|f: &Features| f.sse2),
        read: |b| unsafe_call(|| unsafe { read128(b, 1) }),
        read_passes: Some(|b, n| unsafe_call(|| unsafe { read128(b, n) })),
        read_passes_prefetched: None,
        read_sum_vectors: Some(READ_SUM_VECTORS),
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

macro_rules! width_kernels {
    ($feature:literal, $vec:ty, $bytes:literal, $write:ident, $copy:ident, $nt:ident,
     load = $load:path, store = $store:path, stream = $stream:path, splat = $splat:path) => {
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
    write512,
    copy512,
    nt512,
    load = _mm512_loadu_si512,
    store = _mm512_storeu_si512,
    stream = _mm512_stream_si512,
    splat = _mm512_set1_epi64
);
width_kernels!(
    "avx2",
    __m256i,
    32,
    write256,
    copy256,
    nt256,
    load = _mm256_loadu_si256,
    store = _mm256_storeu_si256,
    stream = _mm256_stream_si256,
    splat = _mm256_set1_epi64x
);
width_kernels!(
    "sse2",
    __m128i,
    16,
    write128,
    copy128,
    nt128,
    load = _mm_loadu_si128,
    store = _mm_storeu_si128,
    stream = _mm_stream_si128,
    splat = _mm_set1_epi64x
);
