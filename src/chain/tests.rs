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
    // 4 KiB pages (x86) and 16 KiB (Apple silicon): the page is the system's.
    let (size, line) = (256 * 1024, 64);
    for page in [4096, 16384] {
        let chain = Chain::page_random(size, line, page, 3).unwrap();
        assert!(is_single_cycle(&linked(&chain), chain.len()));
        let per_page = page / line;
        for k in 0..chain.len() {
            let here = chain.node_offset(k) / page;
            let page_of_first = chain.node_offset(k - k % per_page) / page;
            assert_eq!(
                here, page_of_first,
                "node {k} left its {page}-byte page early"
            );
        }
    }
    assert_eq!(
        page_random_page(),
        crate::platform::system::base_page_bytes()
    );
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
    assert!(Chain::page_random(100, 64, page_random_page(), 0).is_err());
}

#[test]
fn a_broken_chain_is_not_a_single_cycle() {
    assert!(!is_single_cycle(&[1, 0, 2], 3));
    assert!(!is_single_cycle(&[1, 1], 2));
    assert!(is_single_cycle(&[1, 2, 0], 3));
}

#[test]
fn a_chain_linked_in_pieces_is_the_chain_linked_whole() {
    let chains = [
        Chain::random(1 << 20, 64, 5).unwrap(),
        Chain::random(1 << 20, 128, 6).unwrap().with_pair(64),
        Chain::random(1 << 20, 256, 7).unwrap().with_skew(64),
        Chain::page_random(1 << 20, 64, 4096, 8).unwrap(),
        Chain::page_random((1 << 20) + 3 * 64, 64, 4096, 9).unwrap(),
        Chain::interleaved(1 << 20, 64, 6, 10).unwrap(),
        Chain::stride(1 << 20, 192).unwrap(),
    ];
    for chain in &chains {
        let whole = linked(chain);
        for parts in [1, 2, 3, 7] {
            let mut words = vec![u64::MAX; whole.len()];
            let pieces = chain.link_pieces(parts, words.len());
            assert!(pieces.len() as u64 <= parts, "{chain:?}: {pieces:?}");
            // The pieces cover the buffer, in order, without overlap.
            assert_eq!(pieces[0].words.start, 0);
            assert_eq!(pieces.last().unwrap().words.end, words.len());
            assert!(
                pieces
                    .windows(2)
                    .all(|w| w[0].words.end == w[1].words.start)
            );
            for piece in &pieces {
                chain.link_piece(
                    &mut words[piece.words.clone()],
                    piece,
                    NodeEncoding::WordIndex,
                );
            }
            assert!(words == whole, "{chain:?} in {parts} parts");
        }
    }
}
