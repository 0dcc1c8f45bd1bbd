//! x86_64 load-use kernels: `mov t, [p]`, N `nop`s, `add p, t`.
//!
//! The `add` is the use: it needs the loaded value, and its result is the next
//! load's address, so every iteration waits for the previous load (a
//! `jnz`-closed loop of `U` such iterations, `dec` + `jnz` once per trip).

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
            // Align the loop head so every N starts its trip at the same place
            // in the fetch window; the padding runs once, before the loop.
            ".p2align 6",
            "2:",
            ".rept {u}",
            "mov {t}, qword ptr [{p}]",
            ".rept {n}",
            "nop",
            ".endr",
            "add {p}, {t}",
            ".endr",
            "dec {c}",
            "jnz 2b",
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
