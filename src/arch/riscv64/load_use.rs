//! riscv64 load-use kernels: `ld t, 0(p)`, N `nop`s, `add p, p, t`.
//!
//! The `add` is the use: it needs the loaded value, and its result is the next
//! load's address, so every iteration waits for the previous load (a loop of
//! `U` such iterations closed once per trip).
//!
//! A conditional branch reaches only 4 KiB, less than the largest unrolled
//! body, so the loop closes with `beqz` over a `j` (which reaches 1 MiB): one
//! instruction more per trip, measured with the rest of the loop overhead.

use std::arch::asm;

/// Follows a delta chain for `trips * U` iterations of `N` NOPs each.
///
/// # Safety
/// `p` must point at a node of a delta chain: every node reachable from it
/// holds the byte distance (wrapping) from itself to the next node, and every
/// node lies inside one live mapping.
pub(crate) unsafe fn load_use<const N: usize, const U: usize>(
    p: *const u64,
    trips: u64,
) -> *const u64 {
    let mut p = p;
    // SAFETY: the caller guarantees every node reachable from `p` holds the
    // distance to the next node inside the same mapping; the asm reads only
    // those nodes, writes only its own registers and touches no stack.
    unsafe {
        asm!(
            // Align the loop head; the padding runs once, before the loop.
            ".p2align 6",
            "2:",
            ".rept {u}",
            "ld {t}, 0({p})",
            ".rept {n}",
            "nop",
            ".endr",
            "add {p}, {p}, {t}",
            ".endr",
            "addi {c}, {c}, -1",
            "beqz {c}, 3f",
            "j 2b",
            "3:",
            p = inout(reg) p,
            t = out(reg) _,
            c = inout(reg) trips => _,
            n = const N,
            u = const U,
            options(nostack, readonly),
        );
    }
    p
}
