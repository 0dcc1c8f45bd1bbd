//! Every chase kernel is the same loop: a body of dependent instructions,
//! repeated `UNROLL` (100) times a trip, closed by the ISA's decrement and
//! branch. [`define_kernels!`] writes the five kernels from an ISA's
//! instructions, so each ISA states only what differs.
//!
//! The clock chains make each instruction depend on the one before through
//! `x`, with an operand `k` loaded from memory so no renamer can know it.
//! Forms a renamer can fold are avoided: Golden Cove and later Intel P-cores
//! execute `add/sub/inc/dec reg, imm` and `lea` with a displacement at
//! rename, several a cycle (a chain of them read 19 GHz on a 3.5 GHz core),
//! and Zen 3+, Golden Cove and Neoverse cores eliminate register moves.

/// Defines `chase_pointer`, `chase_index`, `empty_loop`, `add_chain` and
/// `mul_chain` from an ISA's instructions: `close` ends a trip (decrement
/// `{n}`, branch back to `2:`), `pointer` is `p = *p`, `index` is
/// `k = base[k]` (with extra scratch operands after `with`), `operand`
/// loads `{k}` from `[{kp}]`, `add` and `mul` are `x = x op k`.
macro_rules! define_kernels {
    (
        close: [$($close:literal),+],
        pointer: $pointer:literal,
        index: [$($index:literal),+] $(with [$($scratch:tt)+])?,
        operand: $operand:literal,
        add: $add:literal,
        mul: $mul:literal $(,)?
    ) => {
        /// Follows `trips * 100` pointers from `start`; returns where it ends.
        ///
        /// # Safety
        /// Every node reachable from `start` holds the address of the next one.
        pub(crate) unsafe fn chase_pointer(start: *const u64, trips: u64) -> *const u64 {
            let mut p = start;
            // SAFETY: the caller guarantees every node holds the address of
            // the next one; the asm reads only those nodes, no stack.
            unsafe {
                ::core::arch::asm!(
                    "2:", ".rept 100", $pointer, ".endr", $($close,)+
                    p = inout(reg) p,
                    n = inout(reg) trips => _,
                    options(nostack, readonly),
                );
            }
            p
        }

        /// Follows `trips * 100` word indices from `start` in `base`.
        ///
        /// # Safety
        /// Every node reachable from `start` holds the word index of the next one.
        pub(crate) unsafe fn chase_index(base: *const u64, start: u64, trips: u64) -> u64 {
            let mut k = start;
            // SAFETY: the caller guarantees every node holds the index of the next one.
            unsafe {
                ::core::arch::asm!(
                    "2:", ".rept 100", $($index,)+ ".endr", $($close,)+
                    k = inout(reg) k,
                    base = in(reg) base,
                    n = inout(reg) trips => _,
                    $($($scratch)+,)?
                    options(nostack, readonly),
                );
            }
            k
        }

        /// One load `p = *p` (`memlat mlp` interleaves several chains of these).
        ///
        /// # Safety
        /// `p` must point at a node holding the address of the next one.
        #[inline(always)]
        pub(crate) unsafe fn load_pointer(p: *const u64) -> *const u64 {
            let mut p = p;
            // SAFETY: the caller guarantees `p` holds the next node's address.
            unsafe {
                ::core::arch::asm!(
                    $pointer,
                    p = inout(reg) p,
                    options(nostack, readonly, preserves_flags),
                );
            }
            p
        }

        /// The loop with nothing in it, `trips` times (seed 001's calibration).
        pub(crate) fn empty_loop(trips: u64) {
            // SAFETY: only a register counter and a branch; no memory is touched.
            unsafe {
                ::core::arch::asm!(
                    "2:", $($close,)+
                    n = inout(reg) trips => _,
                    options(nostack, nomem),
                );
            }
        }

        $crate::arch::kernels::define_kernels!(@chain add_chain, 0, $operand, $add, [$($close),+]);
        $crate::arch::kernels::define_kernels!(@chain mul_chain, 1, $operand, $mul, [$($close),+]);
    };
    (@chain $name:ident, $start:expr, $operand:literal, $op:literal, [$($close:literal),+]) => {
        /// `trips * 100` dependent instructions `x = x op k`, `k` loaded from `*k`.
        pub(crate) fn $name(trips: u64, k: &u64) -> u64 {
            let mut x: u64 = $start;
            // SAFETY: one 8-byte read of `k`, then register arithmetic only.
            unsafe {
                ::core::arch::asm!(
                    $operand, "2:", ".rept 100", $op, ".endr", $($close,)+
                    x = inout(reg) x,
                    k = out(reg) _,
                    kp = in(reg) k,
                    n = inout(reg) trips => _,
                    options(nostack, readonly),
                );
            }
            x
        }
    };
}

/// Defines `load_use::<N, U>`, seed 003's kernel: a `load` of `{t}` from
/// `{p}`, N `nop`s, then the `add` that uses the loaded value and makes the
/// next load's address (`p += *p` on a delta chain); U such iterations a
/// trip, closed by `close` (decrement `{c}`, back to `2:`). Every N is its own
/// kernel: no runtime loop or branch around the NOPs.
macro_rules! define_load_use {
    (load: $load:literal, add: $add:literal, close: [$($close:literal),+] $(,)?) => {
        /// Follows a delta chain for `trips * U` iterations of `N` NOPs each.
        ///
        /// # Safety
        /// `p` must point at a node of a delta chain: every node reachable
        /// from it holds the byte distance (wrapping) from itself to the next
        /// node, and every node lies inside one live mapping.
        pub(crate) unsafe fn load_use<const N: usize, const U: usize>(
            p: *const u64,
            trips: u64,
        ) -> *const u64 {
            let mut p = p;
            // SAFETY: the caller guarantees every node reachable from `p`
            // holds the distance to the next node inside the same mapping; the
            // asm reads only those nodes, writes only its own registers and
            // touches no stack.
            unsafe {
                ::core::arch::asm!(
                    // Align the loop head so every N starts its trip at the same
                    // place in the fetch window; the padding runs once.
                    ".p2align 6",
                    "2:",
                    ".rept {u}", $load, ".rept {n}", "nop", ".endr", $add, ".endr",
                    $($close,)+
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
    };
}

pub(crate) use {define_kernels, define_load_use};
