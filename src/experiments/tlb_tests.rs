//! Tests of reading TLB levels from page-count curves.

use super::*;

#[test]
fn counts_step_a_quarter_doubling() {
    let c = counts(64);
    assert_eq!(c, [8, 10, 11, 13, 16, 19, 23, 27, 32, 38, 45, 54, 64]);
    assert!(counts(4).is_empty());
}

/// A TLB of `l1` entries (+`stlb` ns beyond) and `l2` entries (+`walk` ns beyond).
fn model(l1: u64, l2: u64, stlb: f64, walk: f64) -> Vec<TlbPoint> {
    counts(16384)
        .into_iter()
        .map(|pages| {
            let t = if pages <= l1 {
                0.0
            } else if pages <= l2 {
                stlb
            } else {
                walk
            };
            TlbPoint {
                pages,
                spread_ns: 1.3 + t,
                packed_ns: 1.3,
                translation_ns: t,
                spread_ns_by_pass: vec![1.3 + t; 3],
            }
        })
        .collect()
}

#[test]
fn finds_both_levels_and_the_walk() {
    let (levels, beyond, notes) = read(&model(96, 2048, 1.8, 25.0), 4096, 3.9);
    assert_eq!(levels.len(), 2, "{levels:?} {notes:?}");
    assert_eq!(levels[0].name, "L1 dTLB");
    let off = |got: u64, want: f64| (got as f64 / want - 1.0).abs();
    assert!(off(levels[0].entries, 96.0) < 0.25, "{levels:?}");
    assert!(off(levels[1].entries, 2048.0) < 0.25, "{levels:?}");
    assert_eq!(levels[0].reach_bytes, levels[0].entries * 4096);
    assert!((levels[0].miss_cost_ns - 1.8).abs() < 0.3);
    assert!((levels[0].miss_cost_cycles - 1.8 * 3.9).abs() < 1.5);
    assert!((beyond.unwrap() - 25.0).abs() < 2.0);
    assert!(notes[0].contains("page walk"));
}

#[test]
fn one_step_or_none_is_said() {
    let (levels, _, notes) = read(&model(32, 1 << 30, 2.0, 0.0), 2 << 20, 0.0);
    assert_eq!(levels.len(), 1);
    assert!(notes[0].contains("cannot tell"));
    assert_eq!(levels[0].miss_cost_cycles, 0.0);
    let (levels, beyond, notes) = read(&model(1 << 30, 1 << 31, 2.0, 9.0), 4096, 3.0);
    assert!(levels.is_empty() && beyond.is_none());
    assert!(notes[0].contains("raise --max-pages"));
    // Every count already misses the first level (a VM's fractured pages).
    let (levels, _, notes) = read(&model(0, 1 << 30, 1.8, 0.0), 2 << 20, 3.0);
    assert!(levels.is_empty());
    assert!(notes[0].contains("already costs 1.80 ns"), "{notes:?}");
}

#[test]
fn passes_agree_only_on_as_many_levels_with_close_entries() {
    let points = model(96, 2048, 1.8, 25.0);
    let readings = pass_readings(&points, 4096);
    assert_eq!(readings.len(), 3);
    assert!(readings_agree(&readings), "{readings:?}");
    assert!(readings_agree(&[
        vec![70, 2651],
        vec![67, 2500],
        vec![72, 2800]
    ]));
    assert!(!readings_agree(&[vec![70, 2651], vec![67], vec![72, 2800]]));
    assert!(!readings_agree(&[vec![70], vec![140], vec![72]]));
    assert!(!readings_agree(&[]));
}

#[test]
fn an_l2_the_passes_disagree_on_leaves_the_l1_standing() {
    // The Zen 5 guest: every pass reads an L1 dTLB near 96 entries, the
    // L2 at 2048, 2900 and 3600 (more than AGREE_RATIO apart).
    let passes: Vec<Vec<TlbPoint>> = [2048, 2900, 3600]
        .iter()
        .map(|&l2| model(96, l2, 1.8, 25.0))
        .collect();
    let mut r = empty_result(4096, &[]);
    r.points = passes[0]
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let by_pass: Vec<f64> = passes.iter().map(|q| q[i].spread_ns).collect();
            let spread = crate::analysis::stats::median(&by_pass);
            TlbPoint {
                spread_ns: spread,
                translation_ns: spread - p.packed_ns,
                spread_ns_by_pass: by_pass,
                ..p.clone()
            }
        })
        .collect();
    conclude(&mut r, 3.9);
    assert_eq!(agreed_levels(&r.readings), 1, "{:?}", r.readings);
    assert!(!r.agree);
    assert_eq!(r.levels.len(), 1, "{:?} {:?}", r.levels, r.notes);
    assert_eq!(r.levels[0].name, "L1 dTLB");
    assert!((r.levels[0].entries as f64 / 96.0 - 1.0).abs() < 0.25);
    assert!(r.beyond_all_ns.is_none());
    assert!(
        r.notes.iter().any(|n| n.contains("first 1 level(s) only")),
        "{:?}",
        r.notes
    );
    // Passes that disagree on the L1 already report nothing.
    assert_eq!(
        agreed_levels(&[vec![70, 2651], vec![140, 2600], vec![72, 2800]]),
        0
    );
    assert_eq!(
        agreed_levels(&[vec![70, 2651], vec![67], vec![72, 2800]]),
        1
    );
}
