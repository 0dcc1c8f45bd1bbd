//! The sweep's page test is exercised end to end: a climb past memory that
//! is translation (a guest whose huge pages' reach the sweep outgrows, then
//! measured again with its base page, which pays the walks everywhere) and
//! one that is a level (CXL, a remote node, whatever the page) both reach
//! `Detection::apply_page_test`, and each is told right.

use memlat::analysis::detect::{self, tail};

use super::claims;
use super::model::{self, Noise};
use super::rows::{Row, rows};

/// The cause the page test gives a row's climb past memory, when the sweep
/// sees one: swept with `swept`'s pages, measured again with `other`'s.
fn cause(swept: &Row, other: &Row, page_bytes: u64) -> Option<Option<tail::ClimbCause>> {
    let curve = model::sweep(swept, 1);
    let mut d = detect::detect(&curve, &claims(swept));
    d.translation?;
    let [start, _] = d.levels.last()?.plateau_bytes?;
    let largest = curve.last()?.size_bytes;
    let draw = model::draw(swept, &mut Noise::new(1));
    d.apply_page_test(&tail::PageTest {
        page_bytes,
        memory_ns: model::latency(other, &draw, start),
        largest_ns: model::latency(other, &draw, largest),
    });
    Some(d.translation.and_then(|t| t.cause))
}

#[test]
fn both_causes_of_a_climb_past_memory_reach_the_page_test() {
    let mut causes = Vec::new();
    for row in rows() {
        // As the rows are swept (huge pages where the system has them), the
        // other page being the base one.
        let base = Row {
            huge_page: None,
            ..row.clone()
        };
        if let Some(c) = cause(&row, &base, row.base_page) {
            causes.push((row.id, row.beyond.is_some(), c));
        }
    }
    // A guest whose 2 MiB pages reach 16 MiB (8 entries held, as under
    // nested paging when the host backs them with small pages) and whose
    // two-dimensional walk costs 150 ns; its base pages pay the walk
    // everywhere.
    let guest = Row {
        l2_tlb: 8,
        walk_ns: 150.0,
        ..rows()[0].clone()
    };
    let base = Row {
        huge_page: None,
        ..guest.clone()
    };
    if let Some(c) = cause(&guest, &base, guest.base_page) {
        causes.push((guest.id, false, c));
    }
    let told = |beyond: bool, cause: tail::ClimbCause| {
        causes
            .iter()
            .any(|&(_, b, c)| b == beyond && c == Some(cause))
    };
    assert!(
        told(false, tail::ClimbCause::Translation) && told(true, tail::ClimbCause::Level),
        "rows with a climb past memory, (id, a tier beyond, cause): {causes:?}"
    );
}
