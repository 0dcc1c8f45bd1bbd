//! The sweep's page test is exercised end to end: the curve's last step and
//! a climb past memory, measured again with the other page size, are told
//! page walks (a guest whose huge pages' reach the sweep outgrows, then
//! measured again with its base page, which pays the walks everywhere) or
//! a level (CXL, a remote node, whatever the page), through
//! `detect::detect_with_pages` as a sweep reads them.

use memlat::analysis::detect::{Detection, tail};

use super::model;
use super::rows::{Row, rows};

/// A guest whose 2 MiB pages reach 16 MiB (8 entries held, as under nested
/// paging when the host backs them with small pages), its walk costing
/// `walk_ns`; its base pages pay the walk everywhere.
fn guest(walk_ns: f64) -> Row {
    Row {
        l2_tlb: 8,
        walk_ns,
        ..rows()[0].clone()
    }
}

/// Names and memory's latency, for a failure's message.
fn levels(d: &Detection) -> String {
    let levels: Vec<String> = d
        .levels
        .iter()
        .map(|l| format!("{} {:.1} ns", l.name, l.latency_ns))
        .collect();
    format!("{levels:?}\n{:#?}", d.notes)
}

/// A guest's walks are told translation, whether they cost less than a
/// level's step (40 ns: the climb is gradual and joins memory's plateau)
/// or more (150 ns: the walks make a plateau a level's step above memory,
/// which one curve takes for a farther level); memory is the level after
/// the L3, at the row's memory latency.
#[test]
fn a_guests_walks_are_told_translation_with_memory_where_it_is() {
    for walk_ns in [40.0, 150.0] {
        let row = guest(walk_ns);
        let d = model::detect_swept(&row, 1);
        let names: Vec<&str> = d.levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            ["L1", "L2", "L3", "memory"],
            "{walk_ns} ns walks: {}",
            levels(&d)
        );
        let memory = d.levels.last().unwrap().latency_ns;
        let (lo, hi) = row.memory_ns;
        assert!(
            (lo * 0.9..=hi * 1.3).contains(&memory),
            "{walk_ns} ns walks: memory at {memory:.1} ns, the row says {lo}..{hi}: {}",
            levels(&d)
        );
        let t = d
            .translation
            .unwrap_or_else(|| panic!("{walk_ns} ns walks: no climb told: {}", levels(&d)));
        assert_eq!(
            t.cause,
            Some(tail::ClimbCause::Translation),
            "{walk_ns} ns walks: {}",
            levels(&d)
        );
        assert!(t.page_test.is_some());
    }
}

/// Every row with a tier beyond memory (CXL, a remote node) is told a
/// level, whatever the page: its last step and its climb stay.
#[test]
fn a_tier_beyond_memory_is_told_a_level() {
    let mut seen = 0;
    for row in rows().into_iter().filter(|r| r.beyond.is_some()) {
        seen += 1;
        let d = model::detect_swept(&row, 1);
        let cause = d.translation.and_then(|t| t.cause);
        assert_eq!(
            cause,
            Some(tail::ClimbCause::Level),
            "row {} ({}): {}",
            row.id,
            row.name,
            levels(&d)
        );
        assert_eq!(
            d.levels.last().map(|l| l.name.as_str()),
            Some("memory"),
            "row {}",
            row.id
        );
    }
    assert!(seen > 0, "no row has a tier beyond memory");
}
