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

pub(crate) fn add_chain(trips: u64, k: &u64) -> u64 {
    let k = std::hint::black_box(*k);
    let mut x = 0u64;
    for _ in 0..trips * UNROLL {
        // black_box keeps each add a separate dependent instruction (through
        // memory, so this chain is slower than one add a cycle: a rough clock).
        x = black_box(x.wrapping_add(k));
    }
    x
}

pub(crate) fn mul_chain(trips: u64, k: &u64) -> u64 {
    let k = std::hint::black_box(*k);
    let mut x = 1u64;
    for _ in 0..trips * UNROLL {
        x = black_box(x.wrapping_mul(k));
    }
    x
}
