//! aarch64 bandwidth kernels: SVE (`asm!`, whatever vector length the CPU
//! has) and NEON (intrinsics, with `stnp` for the non-temporal write), each
//! 256 bytes or more a loop trip. The safe entry points check the feature
//! themselves (a cached flag), so a set taken from the table by hand cannot
//! run an instruction the CPU lacks.

use std::arch::aarch64::*;
use std::arch::asm;

use super::{BLOCK, Features, Kernels};

/// What this CPU reports.
pub(super) fn detect() -> Features {
    Features {
        neon: std::arch::is_aarch64_feature_detected!("neon"),
        sve: std::arch::is_aarch64_feature_detected!("sve"),
        ..Features::default()
    }
}

/// Widest first. SVE's registers are 16 to 256 bytes (the CPU says which);
/// `vector_bytes` gives the least.
pub(super) const KERNELS: [Kernels; 2] = [
    Kernels {
        name: "sve",
        vector_bytes: 16,
        needs: Some(|f: &Features| f.sve),
        read: sve_read,
        read_passes: None,
        read_passes_prefetched: None,
        read_sum_vectors: None,
        write: sve_write,
        copy: sve_copy,
        nt_write: Some(sve_nt_write),
    },
    Kernels {
        name: "neon",
        vector_bytes: 16,
        needs: Some(|f: &Features| f.neon),
        read: neon_read,
        read_passes: None,
        read_passes_prefetched: None,
        read_sum_vectors: None,
        write: neon_write,
        copy: neon_copy,
        nt_write: Some(neon_nt_write),
    },
];

fn has_neon() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

fn has_sve() -> bool {
    std::arch::is_aarch64_feature_detected!("sve")
}

fn neon_read(buf: &[u8]) -> u64 {
    assert!(has_neon(), "NEON kernels on a CPU without NEON");
    // SAFETY: the CPU has NEON (checked above).
    unsafe { neon::read(buf) }
}

fn neon_write(buf: &mut [u8], value: u64) {
    assert!(has_neon(), "NEON kernels on a CPU without NEON");
    // SAFETY: the CPU has NEON (checked above).
    unsafe { neon::write(buf, value) }
}

fn neon_copy(dst: &mut [u8], src: &[u8]) {
    assert!(has_neon(), "NEON kernels on a CPU without NEON");
    // SAFETY: the CPU has NEON (checked above).
    unsafe { neon::copy(dst, src) }
}

fn neon_nt_write(buf: &mut [u8], value: u64) {
    assert!(has_neon(), "NEON kernels on a CPU without NEON");
    // SAFETY: the CPU has NEON (checked above).
    unsafe { neon::nt_write(buf, value) }
}

fn sve_read(buf: &[u8]) -> u64 {
    assert!(has_sve(), "SVE kernels on a CPU without SVE");
    // SAFETY: the CPU has SVE (checked above).
    unsafe { sve::read(buf) }
}

fn sve_write(buf: &mut [u8], value: u64) {
    assert!(has_sve(), "SVE kernels on a CPU without SVE");
    // SAFETY: the CPU has SVE (checked above).
    unsafe { sve::write(buf, value) }
}

fn sve_copy(dst: &mut [u8], src: &[u8]) {
    assert!(has_sve(), "SVE kernels on a CPU without SVE");
    // SAFETY: the CPU has SVE (checked above).
    unsafe { sve::copy(dst, src) }
}

fn sve_nt_write(buf: &mut [u8], value: u64) {
    assert!(has_sve(), "SVE kernels on a CPU without SVE");
    // SAFETY: the CPU has SVE (checked above).
    unsafe { sve::nt_write(buf, value) }
}

/// NEON: four 16-byte registers a load or store (`ld1`/`st1` of four), the
/// read summing into eight accumulators so no add chain paces the loads.
/// Byte loads and stores, so no alignment is assumed.
mod neon {
    use super::*;

    #[target_feature(enable = "neon")]
    pub(super) unsafe fn read(buf: &[u8]) -> u64 {
        let n = buf.len() / BLOCK * BLOCK;
        let p = buf.as_ptr();
        let mut acc = [vdupq_n_u64(0); 8];
        let mut off = 0;
        while off < n {
            let mut k = 0;
            while k < BLOCK {
                // SAFETY: off + k + 128 <= n, within buf (BLOCK is a multiple of 128).
                let (a, b) = unsafe {
                    (
                        vld1q_u8_x4(p.add(off + k)),
                        vld1q_u8_x4(p.add(off + k + 64)),
                    )
                };
                acc[0] = vaddq_u64(acc[0], vreinterpretq_u64_u8(a.0));
                acc[1] = vaddq_u64(acc[1], vreinterpretq_u64_u8(a.1));
                acc[2] = vaddq_u64(acc[2], vreinterpretq_u64_u8(a.2));
                acc[3] = vaddq_u64(acc[3], vreinterpretq_u64_u8(a.3));
                acc[4] = vaddq_u64(acc[4], vreinterpretq_u64_u8(b.0));
                acc[5] = vaddq_u64(acc[5], vreinterpretq_u64_u8(b.1));
                acc[6] = vaddq_u64(acc[6], vreinterpretq_u64_u8(b.2));
                acc[7] = vaddq_u64(acc[7], vreinterpretq_u64_u8(b.3));
                k += 128;
            }
            off += BLOCK;
        }
        let sum = acc.iter().fold(vdupq_n_u64(0), |s, a| vaddq_u64(s, *a));
        std::hint::black_box(vaddvq_u64(sum))
    }

    #[target_feature(enable = "neon")]
    pub(super) unsafe fn write(buf: &mut [u8], value: u64) {
        let n = buf.len() / BLOCK * BLOCK;
        let p = buf.as_mut_ptr();
        let v = vreinterpretq_u8_u64(vdupq_n_u64(value));
        let four = uint8x16x4_t(v, v, v, v);
        let mut off = 0;
        while off < n {
            let mut k = 0;
            while k < BLOCK {
                // SAFETY: off + k + 64 <= n, within buf.
                unsafe { vst1q_u8_x4(p.add(off + k), four) };
                k += 64;
            }
            off += BLOCK;
        }
        std::hint::black_box(buf.as_ptr());
    }

    #[target_feature(enable = "neon")]
    pub(super) unsafe fn copy(dst: &mut [u8], src: &[u8]) {
        let n = dst.len().min(src.len()) / BLOCK * BLOCK;
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        let mut off = 0;
        while off < n {
            let mut k = 0;
            while k < BLOCK {
                // SAFETY: off + k + 64 <= n, within both slices.
                unsafe { vst1q_u8_x4(d.add(off + k), vld1q_u8_x4(s.add(off + k))) };
                k += 64;
            }
            off += BLOCK;
        }
        std::hint::black_box(dst.as_ptr());
    }

    /// `stnp` (store pair, non-temporal hint) of two 16-byte registers, eight
    /// to a 256-byte block. No barrier after: aarch64 stores are weakly
    /// ordered anyway, and the threads that read the buffer synchronise.
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn nt_write(buf: &mut [u8], value: u64) {
        let n = buf.len() / BLOCK * BLOCK;
        if n == 0 {
            return;
        }
        // SAFETY: writes the n bytes from buf's start (n a non-zero multiple
        // of the 256-byte block each trip stores), and only v0, v1 and the
        // flags besides its operands.
        unsafe {
            asm!(
                "dup v0.2d, {value}",
                "mov v1.16b, v0.16b",
                "2:",
                "stnp q0, q1, [{p}]",
                "stnp q0, q1, [{p}, #32]",
                "stnp q0, q1, [{p}, #64]",
                "stnp q0, q1, [{p}, #96]",
                "stnp q0, q1, [{p}, #128]",
                "stnp q0, q1, [{p}, #160]",
                "stnp q0, q1, [{p}, #192]",
                "stnp q0, q1, [{p}, #224]",
                "add {p}, {p}, #256",
                "subs {n}, {n}, #256",
                "b.ne 2b",
                value = in(reg) value,
                p = inout(reg) buf.as_mut_ptr() => _,
                n = inout(reg) n => _,
                out("v0") _,
                out("v1") _,
                options(nostack),
            );
        }
    }
}

/// SVE, vector-length agnostic: four whole registers a trip (`ld1d`/`st1d`
/// with `mul vl` offsets) while four fit, then one register a trip under a
/// `whilelo` predicate for what is left (a 256-byte block need not be a
/// multiple of four registers: 48-byte ones, or 256-byte ones).
mod sve {
    use super::*;

    #[target_feature(enable = "sve")]
    pub(super) unsafe fn read(buf: &[u8]) -> u64 {
        let n = buf.len() / BLOCK * BLOCK;
        let sum: u64;
        // SAFETY: loads only the n bytes from buf's start (the main loop
        // while four registers' worth is left, the tail under a predicate
        // that stops at n / 8 words), and writes only its operands, z0-z7,
        // p0, p1 and the flags.
        unsafe {
            asm!(
                "ptrue p0.d",
                "mov z0.d, #0",
                "mov z1.d, #0",
                "mov z2.d, #0",
                "mov z3.d, #0",
                "cntb {step}, all, mul #4",
                "2:",
                "cmp {left}, {step}",
                "b.lo 3f",
                "ld1d z4.d, p0/z, [{p}]",
                "ld1d z5.d, p0/z, [{p}, #1, mul vl]",
                "ld1d z6.d, p0/z, [{p}, #2, mul vl]",
                "ld1d z7.d, p0/z, [{p}, #3, mul vl]",
                "add z0.d, z0.d, z4.d",
                "add z1.d, z1.d, z5.d",
                "add z2.d, z2.d, z6.d",
                "add z3.d, z3.d, z7.d",
                "addvl {p}, {p}, #4",
                "sub {left}, {left}, {step}",
                "b 2b",
                "3:",
                "lsr {left}, {left}, #3",
                "mov {i}, #0",
                "4:",
                "whilelo p1.d, {i}, {left}",
                "b.none 5f",
                // Inactive lanes load as zero, so the whole register adds.
                "ld1d z4.d, p1/z, [{p}, {i}, lsl #3]",
                "add z0.d, z0.d, z4.d",
                "incd {i}",
                "b 4b",
                "5:",
                "add z0.d, z0.d, z1.d",
                "add z2.d, z2.d, z3.d",
                "add z0.d, z0.d, z2.d",
                "uaddv d0, p0, z0.d",
                "fmov {sum}, d0",
                p = inout(reg) buf.as_ptr() => _,
                left = inout(reg) n => _,
                step = out(reg) _,
                i = out(reg) _,
                sum = out(reg) sum,
                out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                out("v4") _, out("v5") _, out("v6") _, out("v7") _,
                out("p0") _, out("p1") _,
                options(nostack, readonly),
            );
        }
        std::hint::black_box(sum)
    }

    /// The write and the non-temporal write differ only in the store.
    macro_rules! sve_store {
        ($name:ident, $store:literal) => {
            #[target_feature(enable = "sve")]
            pub(super) unsafe fn $name(buf: &mut [u8], value: u64) {
                let n = buf.len() / BLOCK * BLOCK;
                // SAFETY: stores only to the n bytes from buf's start (as in
                // the read), and writes only its operands, z0, p0, p1 and the
                // flags.
                unsafe {
                    asm!(
                        "ptrue p0.d",
                        "mov z0.d, {value}",
                        "cntb {step}, all, mul #4",
                        "2:",
                        "cmp {left}, {step}",
                        "b.lo 3f",
                        concat!($store, " z0.d, p0, [{p}]"),
                        concat!($store, " z0.d, p0, [{p}, #1, mul vl]"),
                        concat!($store, " z0.d, p0, [{p}, #2, mul vl]"),
                        concat!($store, " z0.d, p0, [{p}, #3, mul vl]"),
                        "addvl {p}, {p}, #4",
                        "sub {left}, {left}, {step}",
                        "b 2b",
                        "3:",
                        "lsr {left}, {left}, #3",
                        "mov {i}, #0",
                        "4:",
                        "whilelo p1.d, {i}, {left}",
                        "b.none 5f",
                        concat!($store, " z0.d, p1, [{p}, {i}, lsl #3]"),
                        "incd {i}",
                        "b 4b",
                        "5:",
                        value = in(reg) value,
                        p = inout(reg) buf.as_mut_ptr() => _,
                        left = inout(reg) n => _,
                        step = out(reg) _,
                        i = out(reg) _,
                        out("v0") _,
                        out("p0") _,
                        out("p1") _,
                        options(nostack),
                    );
                }
            }
        };
    }

    sve_store!(write, "st1d");
    // `stnt1d`: the contiguous store with a non-temporal hint.
    sve_store!(nt_write, "stnt1d");

    #[target_feature(enable = "sve")]
    pub(super) unsafe fn copy(dst: &mut [u8], src: &[u8]) {
        let n = dst.len().min(src.len()) / BLOCK * BLOCK;
        // SAFETY: loads from and stores to only the first n bytes of each
        // slice (as in the read), and writes only its operands, z4-z7, p0,
        // p1 and the flags.
        unsafe {
            asm!(
                "ptrue p0.d",
                "cntb {step}, all, mul #4",
                "2:",
                "cmp {left}, {step}",
                "b.lo 3f",
                "ld1d z4.d, p0/z, [{s}]",
                "ld1d z5.d, p0/z, [{s}, #1, mul vl]",
                "ld1d z6.d, p0/z, [{s}, #2, mul vl]",
                "ld1d z7.d, p0/z, [{s}, #3, mul vl]",
                "st1d z4.d, p0, [{d}]",
                "st1d z5.d, p0, [{d}, #1, mul vl]",
                "st1d z6.d, p0, [{d}, #2, mul vl]",
                "st1d z7.d, p0, [{d}, #3, mul vl]",
                "addvl {s}, {s}, #4",
                "addvl {d}, {d}, #4",
                "sub {left}, {left}, {step}",
                "b 2b",
                "3:",
                "lsr {left}, {left}, #3",
                "mov {i}, #0",
                "4:",
                "whilelo p1.d, {i}, {left}",
                "b.none 5f",
                "ld1d z4.d, p1/z, [{s}, {i}, lsl #3]",
                "st1d z4.d, p1, [{d}, {i}, lsl #3]",
                "incd {i}",
                "b 4b",
                "5:",
                s = inout(reg) src.as_ptr() => _,
                d = inout(reg) dst.as_mut_ptr() => _,
                left = inout(reg) n => _,
                step = out(reg) _,
                i = out(reg) _,
                out("v4") _, out("v5") _, out("v6") _, out("v7") _,
                out("p0") _, out("p1") _,
                options(nostack),
            );
        }
    }
}
