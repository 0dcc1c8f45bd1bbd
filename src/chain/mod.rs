//! Pure chain builders: which node follows which, and where each node lives.
//!
//! A chain is a single cycle through nodes placed in a buffer. The kernel
//! follows it load by load; the runner asks `node_offset(k)` which node the
//! chain says must come after k loads, to check the kernel's final pointer.
//!
//! Three patterns:
//! - `stride` (seed 004): elements of 8 bytes, `a[k] = (k + s) mod n`, starting at 0;
//!   the cycle has `n / gcd(n, s)` nodes and may leave blocks untouched.
//! - `random`: one node every `line` bytes, all of them in one random cycle,
//!   node 0 first; the order is a keyed bijection ([`Permutation`]) computed
//!   on demand, so no order array is kept and every node's link is written in
//!   address order (see `permutation.rs`).
//! - `page-random`: pages in random order, and within each page all its nodes in
//!   random order before the next page, so a walk takes one TLB miss per page
//!   rather than one per load; a partial last page comes last.

mod link;
mod page_order;
mod permutation;
mod rng;

pub use link::LinkPiece;
pub use permutation::{Permutation, ZeroFirst};
pub use rng::SplitMix64;

use serde::{Deserialize, Serialize};

use page_order::PageOrder;

/// The size of the 8-byte words a chain is made of.
pub const WORD: u64 = 8;

/// How nodes are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Fixed stride: `a[k] = (k + stride) mod n` (seed 004); prefetchers see it.
    Stride,
    /// One node per line, visited in one random cycle; defeats prefetchers.
    Random,
    /// Random within each base page ([`page_random_page`]: 4 KiB on x86),
    /// pages in random order: cache misses without TLB misses.
    PageRandom,
}

impl Pattern {
    /// The name used on the command line and in output.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Stride => "stride",
            Pattern::Random => "random",
            Pattern::PageRandom => "page-random",
        }
    }
}

/// How a node stores its successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeEncoding {
    /// The successor's address: the buffer starts at this address (`p = *p`).
    Address(u64),
    /// The successor's index in 8-byte words from the buffer start (`k = a[k]`).
    WordIndex,
    /// The byte distance (wrapping) from the node to its successor (`p += *p`:
    /// the load-use kernels, whose add uses the loaded value).
    Delta,
}

/// The page size `page-random` keeps its nodes within: the system's base
/// page (4 KiB on x86, 16 KiB on Apple silicon under Linux, 64 KiB on
/// ppc64le and some arm64 kernels), the unit one TLB entry maps.
pub fn page_random_page() -> u64 {
    crate::platform::system::base_page_bytes()
}

/// A cycle of nodes in a buffer of `size` bytes.
#[derive(Debug, Clone)]
pub struct Chain {
    size: u64,
    order: Order,
}

#[derive(Debug, Clone)]
enum Order {
    /// Node k sits at word `(k * step) mod words`, plus `offset` bytes; the
    /// cycle has `len` nodes.
    Stride {
        words: u64,
        step: u64,
        len: u64,
        offset: u64,
    },
    /// Node k sits at byte `order.apply(k) * spacing + offset` (plus
    /// `(slot * skew) mod spacing` with a skew); with a `pair`, each such node
    /// is followed by one `pair` bytes after it.
    Random {
        order: ZeroFirst,
        nodes: u64,
        spacing: u64,
        offset: u64,
        pair: u64,
        skew: u64,
    },
    /// `cycles` disjoint random cycles of `per_cycle` nodes each, walked
    /// interleaved (`memlat mlp`): load k is cycle `k mod cycles`, step
    /// `k / cycles` of it; cycle j holds the nodes at positions
    /// `j * per_cycle ..` of one random order of all slots.
    Interleaved {
        order: ZeroFirst,
        nodes: u64,
        spacing: u64,
        cycles: u64,
        per_cycle: u64,
    },
    /// Node k is in the page `pages.apply(k / per_page)` (the partial last
    /// page, if any, last), at the place within it that page's permutation gives.
    PageRandom(PageOrder),
}

/// How far into its slot a skewed chain puts slot `slot`'s node.
fn skewed(slot: u64, skew: u64, spacing: u64) -> u64 {
    if skew == 0 {
        0
    } else {
        ((slot as u128 * skew as u128) % spacing as u128) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Why a chain cannot be built from the given sizes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The buffer holds fewer than the nodes the pattern needs.
    #[error("a {pattern} chain of {spacing}-byte nodes needs at least {needed} bytes, got {size}")]
    TooSmall {
        /// The pattern's name.
        pattern: &'static str,
        /// Bytes between nodes.
        spacing: u64,
        /// The smallest size that works.
        needed: u64,
        /// The size given.
        size: u64,
    },
}

impl Chain {
    /// Seed 004's chain: words of 8 bytes, `a[k] = (k + stride/8) mod (size/8)`.
    /// `size` and `stride` must already be multiples of 8.
    pub fn stride(size: u64, stride: u64) -> Result<Chain, ChainError> {
        if size < WORD {
            return Err(ChainError::TooSmall {
                pattern: "stride",
                spacing: WORD,
                needed: WORD,
                size,
            });
        }
        let words = size / WORD;
        let step = (stride / WORD) % words;
        let len = words / gcd(words, step);
        Ok(Chain {
            size,
            order: Order::Stride {
                words,
                step,
                len,
                offset: 0,
            },
        })
    }

    /// The chain moved `offset` bytes up: every node at the same place within
    /// its stride (or random slot), so that N lines a way-size apart fall in
    /// a chosen set (`memlat assoc`). Only for a stride that divides `size`
    /// or a random chain, with `offset` a multiple of 8 below the stride or
    /// slot; other chains are returned as they are.
    pub fn with_offset(mut self, offset: u64) -> Chain {
        if !offset.is_multiple_of(WORD) {
            return self;
        }
        match &mut self.order {
            Order::Stride {
                words,
                step,
                offset: at,
                ..
            } if *step > 0 && (*words).is_multiple_of(*step) && offset < *step * WORD => {
                *at = offset;
            }
            Order::Random {
                spacing,
                offset: at,
                skew: 0,
                ..
            } if offset < *spacing => *at = offset,
            _ => {}
        }
        self
    }

    /// `cycles` disjoint random cycles through the `line`-byte slots of
    /// `size` bytes (together every slot but fewer than `cycles` left over),
    /// for a kernel that walks them interleaved: their loads are
    /// independent, so a core overlaps their misses.
    pub fn interleaved(size: u64, line: u64, cycles: u64, seed: u64) -> Result<Chain, ChainError> {
        let nodes = Self::slot_count(size, line, "interleaved")?;
        let cycles = cycles.max(1);
        if nodes < 2 * cycles {
            return Err(ChainError::TooSmall {
                pattern: "interleaved",
                spacing: line,
                needed: 2 * cycles * line,
                size,
            });
        }
        Ok(Chain {
            size,
            order: Order::Interleaved {
                order: ZeroFirst::new(nodes, seed),
                nodes,
                spacing: line,
                cycles,
                per_cycle: nodes / cycles,
            },
        })
    }

    /// How many cycles are walked side by side (1 but for [`Chain::interleaved`]).
    pub fn cycles(&self) -> u64 {
        match &self.order {
            Order::Interleaved { cycles, .. } => *cycles,
            _ => 1,
        }
    }

    /// The random chain with slot `s`'s node `(s * skew) mod line` bytes
    /// into its slot (`memlat tlb`: one line per page, successive pages'
    /// lines in successive cache sets, so that many pages' lines fit the
    /// caches as well as the same lines packed). Only for a random chain
    /// without offset or pair, `skew` a multiple of 8 below the slot; other
    /// chains are returned as they are.
    pub fn with_skew(mut self, skew: u64) -> Chain {
        if let Order::Random {
            spacing,
            offset: 0,
            pair: 0,
            skew: at,
            ..
        } = &mut self.order
            && skew.is_multiple_of(WORD)
            && skew < *spacing
        {
            *at = skew;
        }
        self
    }

    /// The random chain with a dependent second load in every slot: slot X,
    /// then X + `pair`, then the next slot (multichase's `critword`): the
    /// second load hits in X's line, in a line fetched with it, or misses.
    /// Only for a random chain, with `pair` a multiple of 8 in the slot
    /// (after any offset); other chains are returned as they are.
    pub fn with_pair(mut self, pair: u64) -> Chain {
        if let Order::Random {
            spacing,
            offset,
            pair: at,
            skew: 0,
            ..
        } = &mut self.order
            && pair.is_multiple_of(WORD)
            && *offset + pair < *spacing
        {
            *at = pair;
        }
        self
    }

    /// A random single cycle through every `line`-byte slot, node 0 first;
    /// the same seed gives the same cycle.
    pub fn random(size: u64, line: u64, seed: u64) -> Result<Chain, ChainError> {
        let nodes = Self::slot_count(size, line, "random")?;
        Ok(Chain {
            size,
            order: Order::Random {
                order: ZeroFirst::new(nodes, seed),
                nodes,
                spacing: line,
                offset: 0,
                pair: 0,
                skew: 0,
            },
        })
    }

    /// Pages of `page` bytes in random order, each page's slots in random
    /// order before the next page.
    pub fn page_random(size: u64, line: u64, page: u64, seed: u64) -> Result<Chain, ChainError> {
        let nodes = Self::slot_count(size, line, "page-random")?;
        let per_page = (page / line).max(1);
        let full_pages = nodes / per_page;
        Ok(Chain {
            size,
            order: Order::PageRandom(PageOrder {
                nodes,
                spacing: line,
                per_page,
                pages: ZeroFirst::new(full_pages.max(1), seed),
                full_pages,
                seed,
            }),
        })
    }

    /// The chain of `pattern`: `stride` applies to stride chains, `line` and
    /// `seed` to the random ones.
    pub fn build(
        pattern: Pattern,
        size: u64,
        stride: u64,
        line: u64,
        seed: u64,
    ) -> Result<Chain, ChainError> {
        match pattern {
            Pattern::Stride => Chain::stride(size, stride),
            Pattern::Random => Chain::random(size, line, seed),
            Pattern::PageRandom => Chain::page_random(size, line, page_random_page(), seed),
        }
    }

    fn slot_count(size: u64, line: u64, pattern: &'static str) -> Result<u64, ChainError> {
        let nodes = size / line;
        if nodes < 2 {
            return Err(ChainError::TooSmall {
                pattern,
                spacing: line,
                needed: 2 * line,
                size,
            });
        }
        Ok(nodes)
    }

    /// The buffer size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Nodes in the cycle: after this many loads the walk is back at node 0.
    pub fn len(&self) -> u64 {
        match &self.order {
            Order::Stride { len, .. } => *len,
            Order::Random { nodes, pair, .. } => nodes * if *pair > 0 { 2 } else { 1 },
            Order::Interleaved {
                cycles, per_cycle, ..
            } => cycles * per_cycle,
            Order::PageRandom(p) => p.nodes,
        }
    }

    /// Always false: a chain has at least one node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Byte offset of the node reached after `loads` loads from node 0.
    pub fn node_offset(&self, loads: u64) -> u64 {
        let position = loads % self.len();
        match &self.order {
            Order::Stride {
                words,
                step,
                offset,
                ..
            } => ((position as u128 * *step as u128) % *words as u128) as u64 * WORD + offset,
            Order::Random {
                order,
                spacing,
                offset,
                pair: 0,
                skew,
                ..
            } => {
                let slot = order.apply(position);
                slot * spacing + offset + skewed(slot, *skew, *spacing)
            }
            Order::Random {
                order,
                spacing,
                offset,
                pair,
                ..
            } => order.apply(position / 2) * spacing + offset + (position % 2) * pair,
            Order::Interleaved {
                order,
                spacing,
                cycles,
                per_cycle,
                ..
            } => order.apply((position % cycles) * per_cycle + position / cycles) * spacing,
            Order::PageRandom(p) => p.node(position) * p.spacing,
        }
    }

    /// How many distinct `block`-byte blocks the cycle touches (seed 004's
    /// `distinct_blocks`, with 64-byte blocks).
    pub fn distinct_blocks(&self, block: u64) -> u64 {
        match &self.order {
            Order::Stride { words, step, .. } => {
                // The cycle visits exactly the multiples of g = gcd(words, step).
                let g = gcd(*words, *step).max(1);
                let words_per_block = (block / WORD).max(1);
                let blocks = words.div_ceil(words_per_block);
                (0..blocks)
                    .filter(|b| {
                        let first = b * words_per_block;
                        let end = (first + words_per_block).min(*words);
                        first.div_ceil(g) * g < end
                    })
                    .count() as u64
            }
            Order::Random {
                nodes,
                pair,
                spacing,
                ..
            } if *pair > 0 => nodes * if pair / block > 0 { 2 } else { 1 },
            Order::Interleaved {
                cycles,
                per_cycle,
                spacing,
                ..
            } if *spacing >= block => cycles * per_cycle,
            Order::Interleaved {
                cycles,
                per_cycle,
                spacing,
                ..
            } => (cycles * per_cycle * spacing).div_ceil(block),
            Order::Random { nodes, spacing, .. }
            | Order::PageRandom(PageOrder { nodes, spacing, .. }) => {
                if *spacing >= block {
                    *nodes
                } else {
                    (nodes * spacing).div_ceil(block)
                }
            }
        }
    }
}

/// Follows `words` (index encoding) from word 0 and says whether it returns to
/// word 0 after exactly `expected_len` steps, visiting no word twice
/// (multichase's `is_a_permutation`, for chains).
pub fn is_single_cycle(words: &[u64], expected_len: u64) -> bool {
    let mut seen = vec![false; words.len()];
    let mut k = 0usize;
    for _ in 0..expected_len {
        if k >= words.len() || seen[k] {
            return false;
        }
        seen[k] = true;
        k = words[k] as usize;
    }
    k == 0
}

#[cfg(test)]
mod tests;
