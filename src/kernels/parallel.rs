//! Several chains walked side by side in one thread (`memlat mlp`): each
//! round loads once from every chain, `p[i] = *p[i]`. Loads of one chain
//! depend on each other; loads of different chains do not, so the core
//! keeps as many misses in flight as there are chains, up to what it can.
//!
//! Each load is the ISA's `asm!` load (`arch::load_pointer`) or a volatile
//! read (`--kernel portable`); the chain count is a compile-time constant of
//! each instance, so the pointers live in registers (spilled to the stack,
//! an L1 hit, only beyond the ISA's registers).

use crate::arch;

/// Chains walked side by side at most.
pub const MAX_CHAINS: usize = 16;

/// Loads from every chain per loop trip.
pub const ROUNDS: u64 = 16;

/// Walks `N` chains `trips * ROUNDS` loads each, from the byte offsets in
/// `offsets` (relative to `base`), leaving each chain's end there.
///
/// # Safety
/// Every node reachable from each offset holds the address of its successor
/// inside the buffer at `base`.
unsafe fn walk<const N: usize>(base: *const u64, offsets: &mut [u64], trips: u64, portable: bool) {
    let base = base as u64;
    let mut p: [*const u64; N] = std::array::from_fn(|i| (base + offsets[i]) as *const u64);
    for _ in 0..trips {
        for _ in 0..ROUNDS {
            for q in p.iter_mut() {
                // SAFETY: the caller guarantees every node holds its successor's address.
                *q = unsafe {
                    if portable {
                        arch::portable::load_pointer(*q)
                    } else {
                        arch::load_pointer(*q)
                    }
                };
            }
        }
    }
    for (offset, q) in offsets.iter_mut().zip(p) {
        *offset = q as u64 - base;
    }
}

/// Walks `offsets.len()` chains (1 to [`MAX_CHAINS`]) interleaved for
/// `trips` trips of [`ROUNDS`] loads each; `None` for another count.
///
/// # Safety
/// As [`walk`]: every node reachable from each offset holds the address of
/// its successor inside the buffer at `base`.
pub unsafe fn chase(
    base: *const u64,
    offsets: &mut [u64],
    trips: u64,
    portable: bool,
) -> Option<()> {
    macro_rules! dispatch {
        ($($n:literal)+) => {
            match offsets.len() {
                // SAFETY: the caller's guarantee is walk's precondition.
                $($n => unsafe { walk::<$n>(base, offsets, trips, portable) },)+
                _ => return None,
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    Some(())
}
