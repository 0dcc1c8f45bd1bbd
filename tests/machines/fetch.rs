//! The unit a miss fetches, from the page-random spacing curve (`memlat
//! linesize`: `linesize::estimate`, then `linesize::fetch_bytes` with the
//! tags' line): loads `s` bytes apart, in random order within each page,
//! over the default buffer; a load costs a miss when it is the first in its
//! unit, an L1 hit otherwise. The unit is the line, or two lines where the
//! next line arrives with the miss (the row's fill).

use memlat::analysis::linesize::{self, StridePoint};

use super::every_row;
use super::model::{self, Noise};
use super::rows::Row;

/// `linesize`'s default spacings.
const STRIDES: [u64; 6] = [8, 16, 32, 64, 128, 256];

/// The unit a miss brings into L1 on this row.
pub fn unit(row: &Row) -> u64 {
    if row.fill.next_line_ns.is_some() {
        2 * row.line
    } else {
        row.line
    }
}

/// The page-random spacing curve over `linesize`'s default buffer.
pub fn curve(row: &Row, seed: u64) -> Vec<StridePoint> {
    let mut noise = Noise::new(seed ^ 0xFE7C);
    let d = model::draw(row, &mut noise);
    let level = row.caches.get(1).unwrap_or(&row.caches[0]);
    let miss = model::latency(row, &d, 2 * level.serves.1);
    let hit = d.caches[0].1;
    let unit = unit(row);
    STRIDES
        .iter()
        .map(|&s| {
            let new = s.min(unit) as f64 / unit as f64;
            StridePoint {
                stride: s,
                ns: noise.jitter(hit + new * (miss - hit), 0.02),
            }
        })
        .collect()
}

#[test]
fn the_unit_fetched_from_the_page_random_spacing() {
    every_row("unit fetched", |row, seed| {
        let e = linesize::estimate(&curve(row, seed));
        let fetched = linesize::fetch_bytes(Some(row.line), e.line_bytes);
        if fetched == Some(unit(row)) {
            Ok(())
        } else {
            Err(format!(
                "unit {fetched:?} (knee {:?}), want {}: {:?}",
                e.line_bytes,
                unit(row),
                e.notes
            ))
        }
    });
}
