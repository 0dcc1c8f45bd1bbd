//! x86_64 read kernels in `asm!`: eight plain vector loads a loop trip
//! into eight registers, nothing else but the pointer's step and the loop's
//! compare-and-branch.
//!
//! Why not the intrinsic "sum every word" loop the write and copy kernels
//! are written like: on the Emerald Rapids guest (Raptor Cove) that loop
//! read 85 bytes a cycle from L1 where the core loads 2 x 64 and likwid-bench's
//! plain-load kernel read 109. Its `vpaddq zmm, zmm, [base + index]` costs
//! what a plain load does not:
//! - every loaded vector also needs an ALU slot, and Golden/Raptor Cove run
//!   512-bit integer adds on ports 0 and 5 only: two adds a cycle for two
//!   loads a cycle, with the loop's own add and branch competing for them
//!   (with AVX2, three 256-bit loads a cycle against three vector ALUs);
//! - indexed addressing in a three-operand VEX/EVEX instruction does not
//!   stay micro-fused on Intel cores, so each load-and-add takes two slots
//!   of the six-wide rename;
//! - four vectors a trip left the loop overhead a third of the uops.
//!
//! Here a load feeds nothing, so it needs a load port and one rename slot
//! only, addressed as base + displacement (fused on every core). The
//! compiler cannot drop an `asm!` load, and no x86 core skips a load whose
//! register is overwritten, so every byte is still read; the kernels return
//! the wrapping sum of the words the registers hold at the end (the last
//! eight vectors), which tells a test the walk ended where it should
//! ([`READ_SUM_VECTORS`]). On Zen the vector ALUs were never short (four
//! pipes), and plain loads read there as the sums did.
//!
//! Each kernel reads the buffer `passes` times in one call. A 16 KiB
//! buffer is 128 cycles of loads at two 64-byte loads a cycle; a call a
//! pass adds the function pointer, the registers zeroed and the checksum's
//! tree of adds, its store and reloads: tens of cycles. On the Zen 3 guest
//! (256 cycles a 16 KiB pass) the loop inside read 3-4% more, interleaved
//! (medians of 12 runs, 150.6 against 144.8 GB/s); on the 16-vCPU Emerald
//! Rapids guest, where the call a pass read 93 bytes a cycle of its 128,
//! it was not measured yet.

use std::arch::asm;
use std::arch::x86_64::*;

use super::BLOCK;

/// The read's checksum covers the last this many vectors of the buffer
/// (all of it when shorter): the registers of the final loop trip.
pub(super) const READ_SUM_VECTORS: usize = 8;

/// How far ahead the AVX-512 read's prefetching variant prefetches, bytes
/// (one `prefetcht0` a 256-byte block, while the target is inside the
/// buffer). A 512-bit load touches each line once, and Intel's L1
/// streaming (DCU) prefetcher starts on a second access to a recently
/// loaded line: on the Golden Cove guest the plain 512-bit read streamed
/// memory at 16.1-16.6 GB/s against 19.5 for a 256-bit C loop (two loads a
/// line); with this prefetch, 19.1-19.2. On the Zen 4 guest the same
/// prefetch halved it (1 GiB: 14.0-14.4 GB/s against 23.3-25.3 plain,
/// three interleaved rounds), and in L1 and L2 it only costs (6-9% and 5% on
/// Golden Cove). No rule of the core's kind says which is faster, so
/// `memlat bandwidth` times both on the buffer at hand and keeps the
/// faster ([`super::Kernels::read_passes_prefetched`]).
pub(super) const READ_PREFETCH: usize = 1024;

/// The wrapping sum of the 64-bit words of the eight registers a kernel
/// ends with: a tree of vector adds, then one vector's words (once a call,
/// on ALU ports the loads leave idle).
fn sum_words<T: Copy>(r: [T; 8], add: impl Fn(T, T) -> T) -> u64 {
    let v = add(
        add(add(r[0], r[1]), add(r[2], r[3])),
        add(add(r[4], r[5]), add(r[6], r[7])),
    );
    // SAFETY: every x86 vector type is plain bits, a whole number of
    // 8-byte words, and `v` is a live value of it.
    let words = unsafe {
        std::slice::from_raw_parts(
            (&v as *const T).cast::<u64>(),
            size_of::<T>() / size_of::<u64>(),
        )
    };
    words.iter().fold(0u64, |a, w| a.wrapping_add(*w))
}

/// AVX-512: 512 bytes a trip (two blocks), then one block's four loads when
/// the buffer holds an odd number of blocks, so the registers end holding
/// the last 512 bytes (or the one block and zeros); the whole buffer
/// `passes` times (at least once); with `prefetch`, a `prefetcht0`
/// [`READ_PREFETCH`] ahead every 256 bytes where that lies inside the buffer.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn read512(buf: &[u8], passes: u64, prefetch: bool) -> u64 {
    let n = buf.len() / BLOCK * BLOCK;
    if n == 0 {
        return 0;
    }
    const TRIP: usize = 2 * BLOCK;
    let start = buf.as_ptr() as usize;
    let trips_end = start + n / TRIP * TRIP;
    // Trips that prefetch (when asked): both prefetches (p + READ_PREFETCH
    // and 256 past it) inside the buffer.
    let ahead_end = if prefetch && n >= READ_PREFETCH + BLOCK {
        start + (n - READ_PREFETCH - BLOCK) / TRIP * TRIP
    } else {
        start
    };
    let z = _mm512_setzero_si512();
    let mut r = [z; 8];
    // SAFETY: the loops load whole 64-byte vectors at p..p+512 only while
    // p + 512 <= trips_end <= start + n, then four at trips_end when one
    // block is left (trips_end + 256 == start + n): all inside `buf`, and
    // every pass starts again at `start`. The prefetches stay inside it too
    // (ahead_end above) and cannot fault. Nothing is written; the flags are
    // clobbered.
    unsafe {
        asm!(
            "7:",
            "mov {p}, {start}",
            "cmp {p}, {ahead}",
            "jae 3f",
            "2:",
            "prefetcht0 [{p} + {dist}]",
            "prefetcht0 [{p} + {dist} + 256]",
            "vmovdqu64 {r0}, [{p}]",
            "vmovdqu64 {r1}, [{p} + 64]",
            "vmovdqu64 {r2}, [{p} + 128]",
            "vmovdqu64 {r3}, [{p} + 192]",
            "vmovdqu64 {r4}, [{p} + 256]",
            "vmovdqu64 {r5}, [{p} + 320]",
            "vmovdqu64 {r6}, [{p} + 384]",
            "vmovdqu64 {r7}, [{p} + 448]",
            "add {p}, 512",
            "cmp {p}, {ahead}",
            "jb 2b",
            "3:",
            "cmp {p}, {trips}",
            "jae 5f",
            "4:",
            "vmovdqu64 {r0}, [{p}]",
            "vmovdqu64 {r1}, [{p} + 64]",
            "vmovdqu64 {r2}, [{p} + 128]",
            "vmovdqu64 {r3}, [{p} + 192]",
            "vmovdqu64 {r4}, [{p} + 256]",
            "vmovdqu64 {r5}, [{p} + 320]",
            "vmovdqu64 {r6}, [{p} + 384]",
            "vmovdqu64 {r7}, [{p} + 448]",
            "add {p}, 512",
            "cmp {p}, {trips}",
            "jb 4b",
            "5:",
            "cmp {p}, {end}",
            "jae 6f",
            "vmovdqu64 {r0}, [{p}]",
            "vmovdqu64 {r1}, [{p} + 64]",
            "vmovdqu64 {r2}, [{p} + 128]",
            "vmovdqu64 {r3}, [{p} + 192]",
            "6:",
            "dec {passes}",
            "jnz 7b",
            p = out(reg) _,
            start = in(reg) start,
            passes = inout(reg) passes.max(1) => _,
            ahead = in(reg) ahead_end,
            trips = in(reg) trips_end,
            end = in(reg) start + n,
            dist = const READ_PREFETCH,
            r0 = inout(zmm_reg) r[0],
            r1 = inout(zmm_reg) r[1],
            r2 = inout(zmm_reg) r[2],
            r3 = inout(zmm_reg) r[3],
            r4 = inout(zmm_reg) r[4],
            r5 = inout(zmm_reg) r[5],
            r6 = inout(zmm_reg) r[6],
            r7 = inout(zmm_reg) r[7],
            options(nostack, readonly),
        );
    }
    std::hint::black_box(sum_words(r, |a, b| _mm512_add_epi64(a, b)))
}

/// One narrower kernel: eight vectors of `$bytes` a trip, and a block is a
/// whole number of trips, so there is no tail; the whole buffer `passes`
/// times (at least once).
macro_rules! narrow_read {
    ($name:ident, $feature:literal, $vec:ty, $zero:path, $add:path, $bytes:literal, $mov:literal,
     $class:ident) => {
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn $name(buf: &[u8], passes: u64) -> u64 {
            const TRIP: usize = 8 * $bytes;
            const _: () = assert!(BLOCK % TRIP == 0);
            let n = buf.len() / BLOCK * BLOCK;
            if n == 0 {
                return 0;
            }
            let start = buf.as_ptr() as usize;
            let z: $vec = $zero();
            let mut r = [z; 8];
            // SAFETY: n is a whole number of trips and n >= one trip, so
            // every trip's eight vectors at p..p+TRIP lie inside `buf`, and
            // every pass starts again at `start`. Nothing is written; the
            // flags are clobbered.
            unsafe {
                asm!(
                    "3:",
                    "mov {p}, {start}",
                    "2:",
                    concat!($mov, " {r0}, [{p}]"),
                    concat!($mov, " {r1}, [{p} + ", $bytes, "]"),
                    concat!($mov, " {r2}, [{p} + 2 * ", $bytes, "]"),
                    concat!($mov, " {r3}, [{p} + 3 * ", $bytes, "]"),
                    concat!($mov, " {r4}, [{p} + 4 * ", $bytes, "]"),
                    concat!($mov, " {r5}, [{p} + 5 * ", $bytes, "]"),
                    concat!($mov, " {r6}, [{p} + 6 * ", $bytes, "]"),
                    concat!($mov, " {r7}, [{p} + 7 * ", $bytes, "]"),
                    "add {p}, {trip}",
                    "cmp {p}, {end}",
                    "jb 2b",
                    "dec {passes}",
                    "jnz 3b",
                    p = out(reg) _,
                    start = in(reg) start,
                    passes = inout(reg) passes.max(1) => _,
                    end = in(reg) start + n,
                    trip = const TRIP,
                    r0 = inout($class) r[0],
                    r1 = inout($class) r[1],
                    r2 = inout($class) r[2],
                    r3 = inout($class) r[3],
                    r4 = inout($class) r[4],
                    r5 = inout($class) r[5],
                    r6 = inout($class) r[6],
                    r7 = inout($class) r[7],
                    options(nostack, readonly),
                );
            }
            std::hint::black_box(sum_words(r, |a, b| $add(a, b)))
        }
    };
}

narrow_read!(
    read256,
    "avx2",
    __m256i,
    _mm256_setzero_si256,
    _mm256_add_epi64,
    32,
    "vmovdqu",
    ymm_reg
);
narrow_read!(
    read128,
    "sse2",
    __m128i,
    _mm_setzero_si128,
    _mm_add_epi64,
    16,
    "movdqu",
    xmm_reg
);

#[cfg(test)]
mod tests {
    use super::super::{Features, x86::KERNELS};
    use super::*;

    /// The wrapping sum of the words of the last `bytes` of `buf`.
    fn sum_of_last(buf: &[u8], bytes: usize) -> u64 {
        let n = buf.len() / BLOCK * BLOCK;
        buf[n.saturating_sub(bytes)..n]
            .chunks_exact(8)
            .map(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")))
            .fold(0, u64::wrapping_add)
    }

    #[test]
    fn reads_end_on_the_last_vectors_whether_or_not_they_prefetch() {
        let features = Features::detect();
        // Shorter than a trip, an odd and an even number of blocks, about
        // the prefetch distance (where the prefetching variant starts to
        // prefetch), and long past it (odd, even).
        let from = (READ_PREFETCH + BLOCK) / BLOCK;
        for blocks in [1, 2, 3, 4, 5, 7, 64, from - 1, from, from + 1, 4096, 4099] {
            for offset in [0, 8] {
                let len = blocks * BLOCK + offset + 40;
                let all: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
                let src = &all[offset..offset + blocks * BLOCK];
                for k in KERNELS
                    .iter()
                    .filter(|k| k.needs.is_none_or(|n| n(&features)))
                {
                    let expected = sum_of_last(src, READ_SUM_VECTORS * k.vector_bytes);
                    assert_eq!(
                        (k.read)(src),
                        expected,
                        "{} read of {blocks} blocks at offset {offset}",
                        k.name
                    );
                    // Looped inside the kernel, each pass starts again at
                    // the first vector and ends on the same last ones.
                    let read_passes = k.read_passes.expect("x86 reads loop inside");
                    let variants = [Some(read_passes), k.read_passes_prefetched];
                    for (read, passes) in variants
                        .iter()
                        .flatten()
                        .flat_map(|r| [0, 1, 3].map(|p| (r, p)))
                    {
                        assert_eq!(
                            read(src, passes),
                            expected,
                            "{} read of {blocks} blocks, {passes} passes",
                            k.name
                        );
                    }
                }
            }
        }
        assert_eq!(READ_PREFETCH % BLOCK, 0);
    }

    /// The sums cannot tell one pass from many (each ends on the same
    /// vectors), so the passes are told by their time: a hundred times the
    /// passes take far more than ten times as long (the fastest of five of
    /// each, so a preempted run does not decide).
    #[test]
    fn reads_loop_the_passes_they_are_asked_for() {
        let features = Features::detect();
        let buf = vec![7u8; 64 << 10];
        for k in KERNELS
            .iter()
            .filter(|k| k.needs.is_none_or(|n| n(&features)))
        {
            let read_passes = k.read_passes.expect("x86 reads loop inside");
            let fastest = |passes: u64| {
                (0..5)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        std::hint::black_box(read_passes(&buf, passes));
                        t.elapsed().as_secs_f64()
                    })
                    .fold(f64::INFINITY, f64::min)
            };
            let (few, many) = (fastest(20), fastest(2000));
            assert!(
                many > 10.0 * few,
                "{}: 20 passes {few} s, 2000 {many} s",
                k.name
            );
        }
    }
}
