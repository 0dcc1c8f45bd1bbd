//! x86_64 kernels: `mov r, [r]` chains in `asm!`.

use std::arch::asm;

pub(super) unsafe fn chase_pointer(start: *const u64, trips: u64) -> *const u64 {
    let mut p = start;
    // SAFETY: the caller guarantees every node holds the address of the next one;
    // the asm reads only those nodes and touches no other memory or the stack.
    unsafe {
        asm!(
            "2:",
            ".rept 100",
            "mov {p}, qword ptr [{p}]",
            ".endr",
            "dec {n}",
            "jnz 2b",
            p = inout(reg) p,
            n = inout(reg) trips => _,
            options(nostack, readonly),
        );
    }
    p
}

pub(super) unsafe fn chase_index(base: *const u64, start: u64, trips: u64) -> u64 {
    let mut k = start;
    // SAFETY: the caller guarantees every node holds the word index of the next one.
    unsafe {
        asm!(
            "2:",
            ".rept 100",
            "mov {k}, qword ptr [{base} + {k} * 8]",
            ".endr",
            "dec {n}",
            "jnz 2b",
            k = inout(reg) k,
            base = in(reg) base,
            n = inout(reg) trips => _,
            options(nostack, readonly),
        );
    }
    k
}

pub(super) fn empty_loop(trips: u64) {
    // SAFETY: only a register counter and a branch; no memory is touched.
    unsafe {
        asm!(
            "2:",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) trips => _,
            options(nostack, nomem),
        );
    }
}

pub(super) fn add_chain(trips: u64) -> u64 {
    let mut x = 0u64;
    // SAFETY: register arithmetic only.
    unsafe {
        asm!(
            "2:",
            ".rept 100",
            "add {x}, 1",
            ".endr",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) trips => _,
            options(nostack, nomem),
        );
    }
    x
}
