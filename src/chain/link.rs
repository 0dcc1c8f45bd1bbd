//! Writing a chain into a buffer: every node gets its successor, encoded
//! for the kernel that will follow it. Random orders are written node by
//! node in address order (sequential writes), each successor computed from
//! the order, so the buffer can be cut into pieces that write disjoint
//! words and link in parallel ([`Chain::link_pieces`]): a GiB chain is 16
//! million successors of a few multiplications each, a second on one core.

use std::ops::Range;

use super::{Chain, NodeEncoding, Order, WORD, skewed};

/// A part of a chain whose links lie in words no other part writes: the
/// slots (node places in address order) it links, and those words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPiece {
    /// Slots linked, in address order.
    pub slots: Range<u64>,
    /// The words of the buffer they are written in.
    pub words: Range<usize>,
}

impl Chain {
    /// The chain cut into at most `parts` pieces of whole slots (of whole
    /// pages for `page-random`, whose pages are linked one at a time), the
    /// words of each its own. A stride chain is one piece: it is linked by
    /// following it, which costs no more than the writes.
    pub fn link_pieces(&self, parts: u64, buffer_words: usize) -> Vec<LinkPiece> {
        let whole = || {
            vec![LinkPiece {
                slots: 0..self.linked_slots(),
                words: 0..buffer_words,
            }]
        };
        let (slots, spacing, align) = match &self.order {
            Order::Stride { .. } => return whole(),
            Order::Random { nodes, spacing, .. } | Order::Interleaved { nodes, spacing, .. } => {
                (*nodes, *spacing, 1)
            }
            Order::PageRandom(p) => (p.nodes, p.spacing, p.per_page),
        };
        // A slot whose bytes do not start on a word could share its first
        // word with the slot before: no cut between them.
        if parts <= 1 || !spacing.is_multiple_of(WORD) {
            return whole();
        }
        let units = slots.div_ceil(align);
        let per_part = units.div_ceil(parts.min(units).max(1));
        let word_at = |slot: u64| ((slot * spacing / WORD) as usize).min(buffer_words);
        (0..units)
            .step_by(per_part as usize)
            .map(|first| {
                let start = first * align;
                let end = ((first + per_part) * align).min(slots);
                let last = end == slots;
                LinkPiece {
                    slots: start..end,
                    words: word_at(start)..if last { buffer_words } else { word_at(end) },
                }
            })
            .collect()
    }

    /// Slots a chain's links are written over (nodes for most orders).
    fn linked_slots(&self) -> u64 {
        match &self.order {
            Order::Stride { len, .. } => *len,
            Order::Random { nodes, .. } | Order::Interleaved { nodes, .. } => *nodes,
            Order::PageRandom(p) => p.nodes,
        }
    }

    /// Writes the whole chain into `words` (the buffer as 8-byte words).
    pub fn link_into(&self, words: &mut [u64], encoding: NodeEncoding) {
        let whole = LinkPiece {
            slots: 0..self.linked_slots(),
            words: 0..words.len(),
        };
        self.link_piece(words, &whole, encoding);
    }

    /// Writes the links of `piece` into `words`, the buffer's words
    /// `piece.words` (one piece of [`Chain::link_pieces`]).
    pub fn link_piece(&self, words: &mut [u64], piece: &LinkPiece, encoding: NodeEncoding) {
        let first_word = piece.words.start as u64;
        let mut put = |here: u64, next: u64| {
            let value = match encoding {
                NodeEncoding::Address(base) => base + next,
                NodeEncoding::WordIndex => next / WORD,
                NodeEncoding::Delta => next.wrapping_sub(here),
            };
            words[(here / WORD - first_word) as usize] = value;
        };
        let len = self.len();
        match &self.order {
            Order::Stride { .. } => {
                let mut here = self.node_offset(0);
                for k in 1..=len {
                    let next = self.node_offset(k);
                    put(here, next);
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
                for node in piece.slots.clone() {
                    let next = place(order.apply((order.invert(node) + 1) % nodes));
                    let mut here = place(node);
                    if *pair > 0 {
                        put(here, here + pair);
                        here += pair;
                    }
                    put(here, next);
                }
            }
            Order::Interleaved {
                order,
                spacing,
                cycles,
                per_cycle,
                ..
            } => {
                let used = cycles * per_cycle;
                for node in piece.slots.clone() {
                    let position = order.invert(node);
                    if position >= used {
                        continue; // a leftover slot: on no cycle
                    }
                    let (cycle, step) = (position / per_cycle, position % per_cycle);
                    let next = order.apply(cycle * per_cycle + (step + 1) % per_cycle) * spacing;
                    put(node * spacing, next);
                }
            }
            Order::PageRandom(p) => {
                // Page by page, so each page's order is made once.
                let pages = piece.slots.start / p.per_page..piece.slots.end.div_ceil(p.per_page);
                for page in pages {
                    let within = p.within(page);
                    let first = page * p.per_page;
                    let count = (len - first).min(p.per_page);
                    for j in 0..count {
                        let at = within.invert(j);
                        let next = if at + 1 < count {
                            first + within.apply(at + 1)
                        } else {
                            // The page's last node leads to the next page's first.
                            let position = p.page_position(page) * p.per_page + count;
                            p.node(position % len)
                        };
                        put((first + j) * p.spacing, next * p.spacing);
                    }
                }
            }
        }
    }
}
