//! x86_64 kernels: `mov r, [r]` chains in `asm!`.

use std::arch::asm;

pub(crate) unsafe fn chase_pointer(start: *const u64, trips: u64) -> *const u64 {
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

pub(crate) unsafe fn chase_index(base: *const u64, start: u64, trips: u64) -> u64 {
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

pub(crate) fn empty_loop(trips: u64) {
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

// The clock chains. Each instruction depends on the one before through `x`,
// and the other operand `k` is loaded from memory, so no renamer can know
// it. Forms a renamer can fold are avoided: Golden Cove and later Intel
// P-cores execute `add/sub/inc/dec reg, imm` and `lea` with a displacement at
// rename, several a cycle (a chain of them read 19 GHz on a 3.5 GHz core),
// and Zen 3+ and Golden Cove eliminate reg-reg `mov`.

pub(crate) fn add_chain(trips: u64, k: &u64) -> u64 {
    let mut x = 0u64;
    // SAFETY: one 8-byte read of `k`, then register arithmetic only.
    unsafe {
        asm!(
            "mov {k}, qword ptr [{kp}]",
            "2:",
            ".rept 100",
            "add {x}, {k}",
            ".endr",
            "dec {n}",
            "jnz 2b",
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
            "mov {k}, qword ptr [{kp}]",
            "2:",
            ".rept 100",
            "imul {x}, {k}",
            ".endr",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            k = out(reg) _,
            kp = in(reg) k,
            n = inout(reg) trips => _,
            options(nostack, readonly),
        );
    }
    x
}
