//! aarch64 load-use kernels: `ldr t, [p]`, N `nop`s, `add p, p, t`.
//!
//! The `add` is the use: it needs the loaded value, and its result is the next
//! load's address, so every iteration waits for the previous load (a loop of
//! `U` such iterations, `subs` + `b.ne` once per trip).

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
            "ldr {t}, [{p}]",
            ".rept {n}",
            "nop",
            ".endr",
            "add {p}, {p}, {t}",
            ".endr",
            "subs {c}, {c}, #1",
            "b.ne 2b",
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
