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

mod permutation;
mod rng;

pub use permutation::{Permutation, ZeroFirst};
pub use rng::SplitMix64;

use serde::{Deserialize, Serialize};

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
    /// Random within each 4 KiB page, pages in random order: cache misses without TLB misses.
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

/// The page size `page-random` keeps its nodes within.
pub const PAGE_RANDOM_PAGE: u64 = 4096;

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

/// Pages in a random order, nodes in a random order within each page.
#[derive(Debug, Clone)]
struct PageOrder {
    nodes: u64,
    spacing: u64,
    per_page: u64,
    /// Pages in visiting order: page 0 first, a partial last page last.
    pages: ZeroFirst,
    /// Full pages (the partial one, if any, is not permuted).
    full_pages: u64,
    seed: u64,
}

impl PageOrder {
    fn page(&self, position: u64) -> u64 {
        if position < self.full_pages {
            self.pages.apply(position)
        } else {
            position
        }
    }

    fn page_position(&self, page: u64) -> u64 {
        if page < self.full_pages {
            self.pages.invert(page)
        } else {
            page
        }
    }

    /// The order of the nodes within `page`: node 0 first in page 0.
    fn within(&self, page: u64) -> ZeroFirst {
        let count = (self.nodes - page * self.per_page).min(self.per_page);
        ZeroFirst::new(count, self.seed ^ mix_page(page))
    }

    fn node(&self, position: u64) -> u64 {
        let page = self.page(position / self.per_page);
        page * self.per_page + self.within(page).apply(position % self.per_page)
    }
}

/// How far into its slot a skewed chain puts slot `slot`'s node.
fn skewed(slot: u64, skew: u64, spacing: u64) -> u64 {
    if skew == 0 {
        0
    } else {
        ((slot as u128 * skew as u128) % spacing as u128) as u64
    }
}

/// A per-page key: each page's nodes get their own order.
fn mix_page(page: u64) -> u64 {
    SplitMix64::new(page).next_u64()
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

    /// Pages in random order, each page's slots in random order before the next page.
    pub fn page_random(size: u64, line: u64, seed: u64) -> Result<Chain, ChainError> {
        let nodes = Self::slot_count(size, line, "page-random")?;
        let per_page = (PAGE_RANDOM_PAGE / line).max(1);
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
            Pattern::PageRandom => Chain::page_random(size, line, seed),
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

    /// Writes the chain into `words` (the buffer as 8-byte words): every node
    /// gets its successor, encoded for the kernel that will follow it. Random
    /// orders are written node by node in address order (sequential writes,
    /// at memory bandwidth), each node's successor computed from the order.
    pub fn link_into(&self, words: &mut [u64], encoding: NodeEncoding) {
        let encode = |here: u64, next: u64| match encoding {
            NodeEncoding::Address(base) => base + next,
            NodeEncoding::WordIndex => next / WORD,
            NodeEncoding::Delta => next.wrapping_sub(here),
        };
        let len = self.len();
        match &self.order {
            Order::Stride { .. } => {
                let mut here = self.node_offset(0);
                for k in 1..=len {
                    let next = self.node_offset(k);
                    words[(here / WORD) as usize] = encode(here, next);
                    here = next;
                }
            }
            Order::Random {
                order,
                nodes,
                spacing,
                offset,
                pair,
                skew,
            } => {
                let place = |slot: u64| slot * spacing + offset + skewed(slot, *skew, *spacing);
                for node in 0..*nodes {
                    let next = place(order.apply((order.invert(node) + 1) % nodes));
                    let mut here = place(node);
                    if *pair > 0 {
                        words[(here / WORD) as usize] = encode(here, here + pair);
                        here += pair;
                    }
                    words[(here / WORD) as usize] = encode(here, next);
                }
            }
            Order::Interleaved {
                order,
                nodes,
                spacing,
                cycles,
                per_cycle,
            } => {
                let used = cycles * per_cycle;
                for node in 0..*nodes {
                    let position = order.invert(node);
                    if position >= used {
                        continue; // a leftover slot: on no cycle
                    }
                    let (cycle, step) = (position / per_cycle, position % per_cycle);
                    let next = order.apply(cycle * per_cycle + (step + 1) % per_cycle) * spacing;
                    let here = node * spacing;
                    words[(here / WORD) as usize] = encode(here, next);
                }
            }
            Order::PageRandom(p) => {
                // Page by page, so each page's order is made once.
                for page in 0..len.div_ceil(p.per_page) {
                    let within = p.within(page);
                    let first = page * p.per_page;
                    let count = (len - first).min(p.per_page);
                    for j in 0..count {
                        let here = (first + j) * p.spacing;
                        let at = within.invert(j);
                        let next = if at + 1 < count {
                            first + within.apply(at + 1)
                        } else {
                            // The page's last node leads to the next page's first.
                            let position = p.page_position(page) * p.per_page + count;
                            p.node(position % len)
                        };
                        words[(here / WORD) as usize] = encode(here, next * p.spacing);
                    }
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
mod tests {
    use super::*;

    fn linked(chain: &Chain) -> Vec<u64> {
        let mut words = vec![u64::MAX; (chain.size() / WORD) as usize];
        chain.link_into(&mut words, NodeEncoding::WordIndex);
        words
    }

    /// Follows a linked chain from its first node: every step must land
    /// where `node_offset` says, and the walk must close after `len` steps.
    fn follows_its_offsets(chain: &Chain) {
        let words = linked(chain);
        let mut at = chain.node_offset(0);
        for k in 1..=chain.len() {
            at = words[(at / WORD) as usize] * WORD;
            assert_eq!(at, chain.node_offset(k), "step {k}");
        }
        assert_eq!(at, chain.node_offset(0));
    }

    #[test]
    fn offsets_and_pairs_move_nodes_within_their_slots() {
        // 12 lines a page apart, in set 37 of a 64-set L1 (memlat assoc).
        let chain = Chain::stride(12 * 4096, 4096).unwrap().with_offset(37 * 64);
        assert!((0..12).all(|k| chain.node_offset(k) % 4096 == 37 * 64));
        follows_its_offsets(&chain);
        let chain = Chain::random(12 * 4096, 4096, 3)
            .unwrap()
            .with_offset(37 * 64);
        assert!((0..12).all(|k| chain.node_offset(k) % 4096 == 37 * 64));
        follows_its_offsets(&chain);
        // Dependent pairs: slot X, then X + 64, then the next slot.
        let chain = Chain::random(64 * 512, 512, 9).unwrap().with_pair(64);
        assert_eq!(chain.len(), 128);
        assert_eq!(chain.node_offset(1), chain.node_offset(0) + 64);
        assert_eq!(chain.distinct_blocks(64), 128);
        follows_its_offsets(&chain);
        // Skewed: one line a page, successive pages in successive sets.
        let chain = Chain::random(100 * 4096, 4096, 2).unwrap().with_skew(64);
        assert!((0..100).all(|k| {
            let at = chain.node_offset(k);
            at % 4096 == (at / 4096 * 64) % 4096
        }));
        follows_its_offsets(&chain);
        // What does not fit is left as it was.
        let chain = Chain::random(64 * 512, 512, 9).unwrap().with_pair(512);
        assert_eq!(chain.len(), 64);
        let chain = Chain::stride(10_000, 4096).unwrap().with_offset(64);
        assert_eq!(chain.node_offset(0), 0);
    }

    #[test]
    fn interleaved_cycles_are_disjoint_and_cover_the_buffer() {
        for (nodes, cycles) in [(1000u64, 1u64), (1000, 3), (4096, 16), (35, 16)] {
            let chain = Chain::interleaved(nodes * 64, 64, cycles, 7).unwrap();
            assert_eq!(chain.cycles(), cycles);
            let per_cycle = nodes / cycles;
            assert_eq!(chain.len(), cycles * per_cycle);
            let words = linked(&chain);
            let mut seen = std::collections::HashSet::new();
            for j in 0..cycles {
                // Cycle j: from its first node, per_cycle steps back to it,
                // every step where node_offset (interleaved) says.
                let start = chain.node_offset(j);
                let mut at = start;
                for step in 1..=per_cycle {
                    assert!(seen.insert(at), "node {at} on two cycles");
                    at = words[(at / WORD) as usize] * WORD;
                    assert_eq!(
                        at,
                        chain.node_offset(step * cycles + j),
                        "cycle {j} step {step}"
                    );
                }
                assert_eq!(at, start, "cycle {j} closes");
            }
            // Every slot but fewer than `cycles` leftovers is on a cycle.
            assert!(nodes - (seen.len() as u64) < cycles);
        }
        assert!(Chain::interleaved(64 * 20, 64, 16, 1).is_err());
    }

    #[test]
    fn seed_004_distinct_block_examples() {
        let k16 = 16 * 1024;
        assert_eq!(Chain::stride(k16, 64).unwrap().distinct_blocks(64), 256);
        assert_eq!(Chain::stride(k16, 128).unwrap().distinct_blocks(64), 128);
        assert_eq!(Chain::stride(k16, 256).unwrap().distinct_blocks(64), 64);
        assert_eq!(
            Chain::stride(k16 + 64, 256).unwrap().distinct_blocks(64),
            257
        );
    }

    #[test]
    fn seed_004_visiting_order_for_576_bytes_stride_128() {
        // a[0], a[16], a[32], a[48], a[64], a[8], a[24], a[40], a[56], a[0], ...
        let chain = Chain::stride(576, 128).unwrap();
        let visited: Vec<u64> = (0..10).map(|k| chain.node_offset(k) / WORD).collect();
        assert_eq!(visited, [0, 16, 32, 48, 64, 8, 24, 40, 56, 0]);
        assert_eq!(chain.len(), 9);
    }

    #[test]
    fn stride_final_element_matches_seed_004_formula() {
        // seed 004 asserts last == (A * stride) % n (in elements).
        let chain = Chain::stride(12352, 128).unwrap();
        let (n, s) = (12352 / 8, 16);
        for a in [0u64, 1, 99, 1000, 123_457] {
            assert_eq!(chain.node_offset(a) / WORD, a * s % n);
        }
    }

    #[test]
    fn stride_chains_are_single_cycles() {
        for (size, stride) in [
            (16384, 64),
            (16384, 4096),
            (4096 * 13, 4096),
            (576, 128),
            (8, 8),
        ] {
            let chain = Chain::stride(size, stride).unwrap();
            assert!(
                is_single_cycle(&linked(&chain), chain.len()),
                "{size}/{stride}"
            );
        }
    }

    #[test]
    fn every_random_chain_is_one_cycle_through_all_nodes() {
        for seed in 0..20 {
            for (size, line) in [(128, 64), (16384, 64), (100_000, 64), (65536, 128)] {
                let chain = Chain::random(size, line, seed).unwrap();
                assert_eq!(chain.len(), size / line);
                assert!(is_single_cycle(&linked(&chain), chain.len()));
            }
        }
    }

    #[test]
    fn page_random_stays_in_a_page_until_it_is_done() {
        let (size, line) = (64 * 1024, 64);
        let chain = Chain::page_random(size, line, 3).unwrap();
        assert!(is_single_cycle(&linked(&chain), chain.len()));
        let per_page = PAGE_RANDOM_PAGE / line;
        for k in 0..chain.len() {
            let page = chain.node_offset(k) / PAGE_RANDOM_PAGE;
            let page_of_first = chain.node_offset(k - k % per_page) / PAGE_RANDOM_PAGE;
            assert_eq!(page, page_of_first, "node {k} left its page early");
        }
    }

    #[test]
    fn random_orders_give_prefetchers_nothing_to_follow() {
        // 65536 nodes in 1024 pages: a uniformly random order puts a node's
        // successor in the same or a neighbouring page about 3 times in 1024.
        let chain = Chain::random(4 << 20, 64, 11).unwrap();
        let n = chain.len();
        let page = |k: u64| chain.node_offset(k) / 4096;
        let near = (0..n)
            .filter(|&k| page(k).abs_diff(page(k + 1)) <= 1)
            .count() as f64;
        assert!(
            near < 4.0 * 3.0 * n as f64 / 1024.0,
            "{near} near successors of {n}"
        );
        // No one distance between successors dominates.
        let mut strides = std::collections::HashMap::new();
        for k in 0..n {
            let d = chain.node_offset(k + 1).wrapping_sub(chain.node_offset(k));
            *strides.entry(d).or_insert(0u32) += 1;
        }
        let most = strides.values().copied().max().unwrap();
        assert!(most < 20, "one stride {most} times in {n}");
    }

    #[test]
    fn random_chains_depend_on_the_seed_only() {
        let a = Chain::random(16384, 64, 1).unwrap();
        let b = Chain::random(16384, 64, 1).unwrap();
        let c = Chain::random(16384, 64, 2).unwrap();
        let offsets = |ch: &Chain| (0..ch.len()).map(|k| ch.node_offset(k)).collect::<Vec<_>>();
        assert_eq!(offsets(&a), offsets(&b));
        assert_ne!(offsets(&a), offsets(&c));
    }

    #[test]
    fn address_encoding_points_at_successor_addresses() {
        let chain = Chain::random(1024, 64, 9).unwrap();
        let base = 0x10_0000;
        let mut words = vec![0u64; 128];
        chain.link_into(&mut words, NodeEncoding::Address(base));
        let first = words[0];
        assert_eq!(first, base + chain.node_offset(1));
    }

    #[test]
    fn too_small_buffers_are_refused() {
        assert!(Chain::stride(0, 64).is_err());
        assert!(Chain::random(64, 64, 0).is_err());
        assert!(Chain::page_random(100, 64, 0).is_err());
    }

    #[test]
    fn a_broken_chain_is_not_a_single_cycle() {
        assert!(!is_single_cycle(&[1, 0, 2], 3));
        assert!(!is_single_cycle(&[1, 1], 2));
        assert!(is_single_cycle(&[1, 2, 0], 3));
    }
}
