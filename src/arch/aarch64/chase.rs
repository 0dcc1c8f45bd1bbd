//! aarch64 kernels: `ldr x, [x]` chains in `asm!`.

use std::arch::asm;

pub(crate) unsafe fn chase_pointer(start: *const u64, trips: u64) -> *const u64 {
    let mut p = start;
    // SAFETY: the caller guarantees every node holds the address of the next one;
    // the asm reads only those nodes and touches no other memory or the stack.
    unsafe {
        asm!(
            "2:",
            ".rept 100",
            "ldr {p}, [{p}]",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            p = inout(reg) p,
            n = inout(reg) trips => _,
            options(nostack, readonly),
        );
    }
    p
}

pub(crate) unsafe fn chase_index(base: *const u64, start: u64, trips: u64) -> u64 {
    let mut k = start;
    // SAFETY: the caller guarantees every node holds the word index of the next one.
    unsafe {
        asm!(
            "2:",
            ".rept 100",
            "ldr {k}, [{base}, {k}, lsl #3]",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            k = inout(reg) k,
            base = in(reg) base,
            n = inout(reg) trips => _,
            options(nostack, readonly),
        );
    }
    k
}

pub(crate) fn empty_loop(trips: u64) {
    // SAFETY: only a register counter and a branch; no memory is touched.
    unsafe {
        asm!(
            "2:",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            n = inout(reg) trips => _,
            options(nostack, nomem),
        );
    }
}

// The clock chains: each instruction depends on the one before through `x`,
// and `k` is loaded from memory so no renamer can know it (immediate adds and
// register moves are eliminated at rename on some cores).

pub(crate) fn add_chain(trips: u64, k: &u64) -> u64 {
    let mut x = 0u64;
    // SAFETY: one 8-byte read of `k`, then register arithmetic only.
    unsafe {
        asm!(
            "ldr {k}, [{kp}]",
            "2:",
            ".rept 100",
            "add {x}, {x}, {k}",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            x = inout(reg) x,
            k = out(reg) _,
            kp = in(reg) k,
            n = inout(reg) trips => _,
            options(nostack, readonly),
        );
    }
    x
}

pub(crate) fn mul_chain(trips: u64, k: &u64) -> u64 {
    let mut x = 1u64;
    // SAFETY: one 8-byte read of `k`, then register arithmetic only.
    unsafe {
        asm!(
            "ldr {k}, [{kp}]",
            "2:",
            ".rept 100",
            "mul {x}, {x}, {k}",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            x = inout(reg) x,
            k = out(reg) _,
            kp = in(reg) k,
            n = inout(reg) trips => _,
            options(nostack, readonly),
        );
    }
    x
}
