//! Portable kernels: volatile reads in plain Rust, for ISAs without `asm!` ones.
//! The compiler may add address arithmetic or spills around them, which is why
//! the asm kernels are preferred where they exist.

// Only `chase_pointer` serves every ISA (`--kernel portable`); the rest
// stand in for the asm on ISAs without it.
#![allow(dead_code)]

use std::hint::black_box;
use std::ptr::read_volatile;

use super::UNROLL;

pub(crate) unsafe fn chase_pointer(start: *const u64, trips: u64) -> *const u64 {
    let mut p = start;
    for _ in 0..trips {
        for _ in 0..UNROLL {
            // SAFETY: the caller guarantees every node holds the address of the next one.
            p = unsafe { read_volatile(p) } as *const u64;
        }
    }
    p
}

/// One volatile load `p = *p`.
///
/// # Safety
/// `p` must point at a node holding the address of the next one.
#[inline(always)]
pub(crate) unsafe fn load_pointer(p: *const u64) -> *const u64 {
    // SAFETY: the caller guarantees `p` holds the next node's address.
    unsafe { read_volatile(p) as *const u64 }
}

pub(crate) unsafe fn chase_index(base: *const u64, start: u64, trips: u64) -> u64 {
    let mut k = start;
    for _ in 0..trips {
        for _ in 0..UNROLL {
            // SAFETY: the caller guarantees every node holds the index of the next one.
            k = unsafe { read_volatile(base.add(k as usize)) };
        }
    }
    k
}

pub(crate) fn empty_loop(trips: u64) {
    for i in 0..trips {
        black_box(i);
    }
}

/// `trips * UNROLL` dependent adds of `k`. Each step's operand passes
/// through black_box, so the compiler can neither fold the chain into one
/// multiply nor reassociate it, while the chain itself stays in a register:
/// the operand's store and load lie off it (on ppc64le the loop is `std`,
/// `ld`, `add`, `bdnz`), and the chain times the add's own latency.
pub(crate) fn add_chain(trips: u64, k: &u64) -> u64 {
    let mut x = 0u64;
    for _ in 0..trips * UNROLL {
        x = x.wrapping_add(black_box(*k));
    }
    x
}

/// `trips * UNROLL` dependent multiplies by `k`, kept as [`add_chain`] keeps its adds.
pub(crate) fn mul_chain(trips: u64, k: &u64) -> u64 {
    let mut x = 1u64;
    for _ in 0..trips * UNROLL {
        x = x.wrapping_mul(black_box(*k));
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chains_compute_what_their_instructions_do() {
        // Every step is one add or multiply of the operand: n k and k^n.
        let k = 3u64;
        assert_eq!(add_chain(5, &k), 5 * UNROLL * k);
        assert_eq!(mul_chain(2, &k), k.wrapping_pow(2 * UNROLL as u32));
        assert_eq!((add_chain(0, &k), mul_chain(0, &k)), (0, 1));
    }
}
