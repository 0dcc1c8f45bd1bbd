//! TLB entries by page size (`memlat tlb`, read by `experiments::tlb::conclude`):
//! for N pages, one line a page against the same lines packed; the
//! difference is translation alone, a step where the first-level TLB
//! overflows (an L2 TLB hit) and another where the second does (a walk).
//! The pages of a chain are consecutive, so they fill a set-associative
//! TLB's sets evenly and a cyclic walk over more pages than it holds
//! misses every load: the steps are sharp.

use memlat::experiments::tlb::{self, TlbPageResult, TlbPoint};

use super::every_row;
use super::model::{self, Noise};
use super::rows::{G, Row};

/// Memory the model machine has free (the huge-page plan takes at most a quarter).
const AVAILABLE: u64 = 16 * G;

/// Passes over the page counts (`tlb::PASSES`).
const PASSES: usize = 3;

/// One page size's plan: its bytes, whether it is the base page, and the
/// first- and second-level entries the core has for it.
pub fn plans(row: &Row) -> Vec<(u64, bool, (u64, u64))> {
    let mut out = vec![(row.base_page, true, row.core.tlb_base)];
    if let Some(huge) = row.huge_page {
        out.push((huge, false, row.core.tlb_huge));
    }
    out
}

/// `memlat tlb`'s result for one plan.
pub fn result(row: &Row, seed: u64, page: u64, base: bool, (l1, l2): (u64, u64)) -> TlbPageResult {
    let mut noise = Noise::new(seed ^ page);
    let d = model::draw(row, &mut noise);
    let l2_hit = row.core.l2_tlb_cycles / row.ghz;
    let translation = |pages: u64| match pages {
        p if p <= l1 => 0.0,
        p if p <= l2 => l2_hit,
        _ => l2_hit + row.walk_ns,
    };
    let points = tlb::counts(tlb::default_max_pages(page, base, AVAILABLE))
        .into_iter()
        .map(|pages| {
            // The same lines either way, so the caches serve them alike.
            let data = model::latency(row, &d, pages * 64);
            let packed = noise.jitter(data, 0.02);
            let by_pass: Vec<f64> = (0..PASSES)
                .map(|_| noise.jitter(data + translation(pages), 0.02))
                .collect();
            let mut sorted = by_pass.clone();
            sorted.sort_by(f64::total_cmp);
            TlbPoint {
                pages,
                spread_ns: sorted[PASSES / 2],
                packed_ns: packed,
                translation_ns: sorted[PASSES / 2] - packed,
                spread_ns_by_pass: by_pass,
            }
        })
        .collect();
    let mut r = TlbPageResult {
        page_bytes: page,
        pages_obtained: String::new(),
        points,
        levels: Vec::new(),
        beyond_all_ns: None,
        cpuid: Vec::new(),
        notes: Vec::new(),
        readings: Vec::new(),
        agree: false,
    };
    tlb::conclude(&mut r, row.ghz);
    r
}

/// The levels a plan reaching `max` pages can show: those whose entries
/// leave a doubling of page counts after them for the next plateau.
pub fn reachable(entries: (u64, u64), max: u64) -> Vec<u64> {
    [entries.0, entries.1]
        .into_iter()
        .filter(|&e| 2 * e <= max)
        .collect()
}

#[test]
fn tlb_entries_of_every_page_size() {
    every_row("tlb", |row, seed| {
        for (page, base, entries) in plans(row) {
            let r = result(row, seed, page, base, entries);
            let max = tlb::default_max_pages(page, base, AVAILABLE);
            let want = reachable(entries, max);
            let found: Vec<[u64; 2]> = r.levels.iter().map(|l| l.entries_bracket).collect();
            let right = found.len() == want.len()
                && found
                    .iter()
                    .zip(&want)
                    .all(|(b, &e)| b[0] <= e && e <= b[1]);
            if !right {
                return Err(format!(
                    "{} pages: brackets {found:?}, want {want:?} within them (of {entries:?}, {max} pages measured): {:?}",
                    memlat::units::HumanBytes(page),
                    r.notes
                ));
            }
        }
        Ok(())
    });
}
