//! The load-use kernels: a load, N NOPs, then an `add` that uses the loaded
//! value and makes the next load's address (seed 003's `LW`, NOPs, `ADDU`).
//!
//! Nodes hold the byte distance to the next node (a *delta chain*), so
//! `p += *p` follows the chain: the use is a real ALU instruction on the loaded
//! value, and the next load cannot start before it. Every N is its own kernel,
//! compiled from one generic `asm!` per ISA with N as a `const` operand
//! (`.rept N` / `nop` / `.endr`): no runtime loop or branch around the NOPs.
//! Unrolled kernels repeat the iteration [`UNROLL`] times per loop trip;
//! rolled ones run one iteration per trip, like seed 003's loop, so the
//! difference between the two is the loop's own cost.

use serde::{Deserialize, Serialize};

/// Iterations (load, NOPs, add) per trip of the unrolled loop.
pub const UNROLL: u64 = 16;

/// The largest N a kernel is compiled for.
pub const MAX_NOPS: u32 = 128;

/// Whether this build has load-use kernels (x86_64, aarch64, riscv64).
pub const AVAILABLE: bool = crate::arch::HAS_ASM;

/// How many iterations one loop trip holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// [`UNROLL`] iterations per trip: the loop's cost is spread thin.
    Unrolled,
    /// One iteration per trip, as seed 003's loop.
    Rolled,
}

impl Shape {
    /// Iterations per loop trip.
    pub fn iterations_per_trip(self) -> u64 {
        match self {
            Shape::Unrolled => UNROLL,
            Shape::Rolled => 1,
        }
    }
}

mod table {
    use super::UNROLL;
    use crate::arch;

    /// `(start, trips) -> end`: one compiled kernel.
    pub(super) type Kernel = unsafe fn(*const u64, u64) -> *const u64;

    const U: usize = UNROLL as usize;

    macro_rules! family {
        ($unroll:expr; $($n:literal)*) => {
            [$(arch::load_use::<$n, { $unroll }> as Kernel),*]
        };
    }

    /// Index N: the unrolled kernel with N NOPs.
    pub(super) static UNROLLED: [Kernel; 129] = family!(U;
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33
        34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64
        65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95
        96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119
        120 121 122 123 124 125 126 127 128);

    /// Index N: the one-iteration-per-trip kernel with N NOPs.
    pub(super) static ROLLED: [Kernel; 129] = family!(1;
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33
        34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64
        65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95
        96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119
        120 121 122 123 124 125 126 127 128);
}

/// Follows the delta chain in `base` from byte offset `start` for `trips`
/// loop trips of `shape` with `nops` NOPs per iteration, and returns the byte
/// offset of the node it ends on. `None` when this build has no kernels or
/// `nops` exceeds [`MAX_NOPS`].
///
/// # Safety
/// `base` must point to a live buffer linked as deltas (`NodeEncoding::Delta`:
/// every node reachable from `start` holds the distance to its successor,
/// inside the buffer).
pub unsafe fn chase(
    shape: Shape,
    nops: u32,
    base: *const u64,
    start: u64,
    trips: u64,
) -> Option<u64> {
    if !AVAILABLE {
        return None;
    }
    let family = match shape {
        Shape::Unrolled => &table::UNROLLED,
        Shape::Rolled => &table::ROLLED,
    };
    let kernel = *family.get(nops as usize)?;
    if trips == 0 {
        return Some(start);
    }
    let base_addr = base as u64;
    // SAFETY: the caller guarantees a delta chain inside the buffer; `start`
    // is one of its nodes, so the kernel reads only the buffer.
    let end = unsafe { kernel((base_addr + start) as *const u64, trips) };
    Some(end as u64 - base_addr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NodeEncoding, WORD};

    fn linked(chain: &Chain) -> Vec<u64> {
        let mut words = vec![0u64; (chain.size() / WORD) as usize];
        chain.link_into(&mut words, NodeEncoding::Delta);
        words
    }

    #[test]
    fn deltas_step_through_the_chain() {
        let chain = Chain::random(4096, 64, 9).unwrap();
        let words = linked(&chain);
        let mut here = 0u64;
        for k in 1..=chain.len() * 2 {
            here = here.wrapping_add(words[(here / WORD) as usize]);
            assert_eq!(here, chain.node_offset(k));
        }
    }

    #[test]
    fn every_kernel_ends_where_the_chain_says() {
        if !AVAILABLE {
            return;
        }
        let chains = [
            Chain::random(8 * 1024, 64, 3).unwrap(),
            Chain::stride(4 * 1024 + 64, 192).unwrap(),
        ];
        for chain in &chains {
            let words = linked(chain);
            for nops in 0..=MAX_NOPS {
                for shape in [Shape::Unrolled, Shape::Rolled] {
                    let from = chain.node_offset(5);
                    for trips in [1u64, 3] {
                        // SAFETY: `words` holds the chain as deltas; `from` is a node.
                        let end = unsafe { chase(shape, nops, words.as_ptr(), from, trips) };
                        let loads = 5 + trips * shape.iterations_per_trip();
                        assert_eq!(end, Some(chain.node_offset(loads)), "{shape:?} {nops}");
                    }
                }
            }
        }
    }

    #[test]
    fn no_kernel_past_the_largest_n() {
        let chain = Chain::random(1024, 64, 1).unwrap();
        let words = linked(&chain);
        // SAFETY: `words` holds the chain as deltas.
        let end = unsafe { chase(Shape::Unrolled, MAX_NOPS + 1, words.as_ptr(), 0, 1) };
        assert_eq!(end, None);
    }
}
