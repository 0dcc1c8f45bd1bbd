//! riscv64 bandwidth kernels with RVV 1.0 (`asm!` between `.option arch, +v`
//! and `.option pop`, since riscv64gc code may not use V otherwise), four
//! register groups of four (`m4`) a loop trip: 256 bytes a trip at the least
//! vector length (128 bits), more on wider CPUs. riscv64 has no non-temporal
//! store, so there is no such kernel. The safe entry points check V
//! themselves, so a set taken from the table by hand cannot run an
//! instruction the CPU lacks; without RVV the portable set is the fallback.

use std::arch::asm;
use std::sync::OnceLock;

use super::{BLOCK, Features, Kernels, PORTABLE};

/// What this CPU reports.
pub(super) fn detect() -> Features {
    Features {
        rvv: has_v(),
        ..Features::default()
    }
}

/// Whether Linux says the V extension is there and enabled: bit 'v' of
/// `AT_HWCAP` (`is_riscv_feature_detected!` is not stable yet). Read once.
fn has_v() -> bool {
    static V: OnceLock<bool> = OnceLock::new();
    *V.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: getauxval only reads the process's auxiliary vector.
            let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
            hwcap & (1 << (b'v' - b'a')) != 0
        }
        #[cfg(not(target_os = "linux"))]
        false
    })
}

/// The one set: RVV registers are 16 bytes at the least (the CPU's may be
/// wider; the kernels ask at run time).
pub(super) const KERNELS: [Kernels; 1] = [Kernels {
    name: "rvv",
    vector_bytes: 16,
    needs: Some(|f: &Features| f.rvv),
    read: rvv_read,
    read_passes: None,
    read_passes_prefetched: None,
    read_sum_vectors: None,
    write: rvv_write,
    copy: rvv_copy,
    nt_write: None,
}];

/// Whether every pointer is 8-byte aligned: RVV implementations may trap on
/// misaligned 64-bit elements, so other buffers (never memlat's own, which
/// are page-aligned) take the portable loop.
fn aligned(pointers: &[*const u8]) -> bool {
    pointers.iter().all(|p| p.align_offset(8) == 0)
}

fn rvv_read(buf: &[u8]) -> u64 {
    assert!(has_v(), "RVV kernels on a CPU without V");
    if !aligned(&[buf.as_ptr()]) {
        return (PORTABLE.read)(buf);
    }
    let n = buf.len() / BLOCK * BLOCK;
    let sum: u64;
    // SAFETY: the CPU has V (checked above) and buf is 8-byte aligned. Loads
    // only the n bytes from buf's start (four groups a trip while that much
    // is left, then one group of at most the words left, as vsetvli sets
    // vl), and writes only its operands and v0-v31 (vl and vtype, which no
    // compiled riscv64gc code keeps anything in).
    unsafe {
        asm!(
            ".option push",
            ".option arch, +v",
            "vsetvli {vl}, zero, e64, m4, ta, ma",
            "vmv.v.i v16, 0",
            "vmv.v.i v20, 0",
            "vmv.v.i v24, 0",
            "vmv.v.i v28, 0",
            "slli {group}, {vl}, 3",
            "slli {four}, {group}, 2",
            "2:",
            "bltu {left}, {four}, 3f",
            "vle64.v v0, ({p})",
            "add {q}, {p}, {group}",
            "vle64.v v4, ({q})",
            "add {q}, {q}, {group}",
            "vle64.v v8, ({q})",
            "add {q}, {q}, {group}",
            "vle64.v v12, ({q})",
            "vadd.vv v16, v16, v0",
            "vadd.vv v20, v20, v4",
            "vadd.vv v24, v24, v8",
            "vadd.vv v28, v28, v12",
            "add {p}, {p}, {four}",
            "sub {left}, {left}, {four}",
            "j 2b",
            "3:",
            "srli {left}, {left}, 3",
            "4:",
            "beqz {left}, 5f",
            // Tail undisturbed: the accumulator's lanes past vl keep their sums.
            "vsetvli {vl}, {left}, e64, m4, tu, ma",
            "vle64.v v0, ({p})",
            "vadd.vv v16, v16, v0",
            "slli {q}, {vl}, 3",
            "add {p}, {p}, {q}",
            "sub {left}, {left}, {vl}",
            "j 4b",
            "5:",
            "vsetvli {vl}, zero, e64, m4, ta, ma",
            "vadd.vv v16, v16, v20",
            "vadd.vv v24, v24, v28",
            "vadd.vv v16, v16, v24",
            "vmv.s.x v0, zero",
            "vredsum.vs v0, v16, v0",
            "vmv.x.s {sum}, v0",
            ".option pop",
            p = inout(reg) buf.as_ptr() => _,
            left = inout(reg) n => _,
            vl = out(reg) _,
            group = out(reg) _,
            four = out(reg) _,
            q = out(reg) _,
            sum = out(reg) sum,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _,
            out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v24") _, out("v25") _, out("v26") _, out("v27") _,
            out("v28") _, out("v29") _, out("v30") _, out("v31") _,
            options(nostack, readonly),
        );
    }
    std::hint::black_box(sum)
}

fn rvv_write(buf: &mut [u8], value: u64) {
    assert!(has_v(), "RVV kernels on a CPU without V");
    if !aligned(&[buf.as_ptr()]) {
        return (PORTABLE.write)(buf, value);
    }
    let n = buf.len() / BLOCK * BLOCK;
    // SAFETY: as in the read: the CPU has V, buf is aligned, only the n
    // bytes from its start are stored to, and only the operands, v0-v3 (vl
    // and vtype) are written.
    unsafe {
        asm!(
            ".option push",
            ".option arch, +v",
            "vsetvli {vl}, zero, e64, m4, ta, ma",
            "vmv.v.x v0, {value}",
            "slli {group}, {vl}, 3",
            "slli {four}, {group}, 2",
            "2:",
            "bltu {left}, {four}, 3f",
            "vse64.v v0, ({p})",
            "add {q}, {p}, {group}",
            "vse64.v v0, ({q})",
            "add {q}, {q}, {group}",
            "vse64.v v0, ({q})",
            "add {q}, {q}, {group}",
            "vse64.v v0, ({q})",
            "add {p}, {p}, {four}",
            "sub {left}, {left}, {four}",
            "j 2b",
            "3:",
            "srli {left}, {left}, 3",
            "4:",
            "beqz {left}, 5f",
            // A shorter vl leaves the splatted lanes below it as they were.
            "vsetvli {vl}, {left}, e64, m4, ta, ma",
            "vse64.v v0, ({p})",
            "slli {q}, {vl}, 3",
            "add {p}, {p}, {q}",
            "sub {left}, {left}, {vl}",
            "j 4b",
            "5:",
            ".option pop",
            value = in(reg) value,
            p = inout(reg) buf.as_mut_ptr() => _,
            left = inout(reg) n => _,
            vl = out(reg) _,
            group = out(reg) _,
            four = out(reg) _,
            q = out(reg) _,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            options(nostack),
        );
    }
    std::hint::black_box(buf.as_ptr());
}

fn rvv_copy(dst: &mut [u8], src: &[u8]) {
    assert!(has_v(), "RVV kernels on a CPU without V");
    if !aligned(&[dst.as_ptr(), src.as_ptr()]) {
        return (PORTABLE.copy)(dst, src);
    }
    let n = dst.len().min(src.len()) / BLOCK * BLOCK;
    // SAFETY: as in the read: the CPU has V, both slices are aligned, only
    // the first n bytes of each are loaded and stored, and only the
    // operands, v0-v15 (vl and vtype) are written.
    unsafe {
        asm!(
            ".option push",
            ".option arch, +v",
            "vsetvli {vl}, zero, e64, m4, ta, ma",
            "slli {group}, {vl}, 3",
            "slli {four}, {group}, 2",
            "2:",
            "bltu {left}, {four}, 3f",
            "vle64.v v0, ({s})",
            "add {q}, {s}, {group}",
            "vle64.v v4, ({q})",
            "add {q}, {q}, {group}",
            "vle64.v v8, ({q})",
            "add {q}, {q}, {group}",
            "vle64.v v12, ({q})",
            "vse64.v v0, ({d})",
            "add {q}, {d}, {group}",
            "vse64.v v4, ({q})",
            "add {q}, {q}, {group}",
            "vse64.v v8, ({q})",
            "add {q}, {q}, {group}",
            "vse64.v v12, ({q})",
            "add {s}, {s}, {four}",
            "add {d}, {d}, {four}",
            "sub {left}, {left}, {four}",
            "j 2b",
            "3:",
            "srli {left}, {left}, 3",
            "4:",
            "beqz {left}, 5f",
            "vsetvli {vl}, {left}, e64, m4, ta, ma",
            "vle64.v v0, ({s})",
            "vse64.v v0, ({d})",
            "slli {q}, {vl}, 3",
            "add {s}, {s}, {q}",
            "add {d}, {d}, {q}",
            "sub {left}, {left}, {vl}",
            "j 4b",
            "5:",
            ".option pop",
            s = inout(reg) src.as_ptr() => _,
            d = inout(reg) dst.as_mut_ptr() => _,
            left = inout(reg) n => _,
            vl = out(reg) _,
            group = out(reg) _,
            four = out(reg) _,
            q = out(reg) _,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _,
            options(nostack),
        );
    }
    std::hint::black_box(dst.as_ptr());
}
