//! Where a sweep without `--to` ends (`experiments::sweep::end_of`, run
//! after each grid size): the model's sweep fed to it size by size, and
//! the levels read from the curve cut where it stops must be the row's
//! levels. A rule that stops inside a cache that sysfs lists, or before a
//! level's end, fails here.

use memlat::analysis::detect;
use memlat::experiments::sweep::end_of;

use super::model;
use super::{claims, every_row};

#[test]
fn the_sweep_ends_past_every_level_and_its_cut_curve_reads_them_all() {
    every_row("sweep end", |row, seed| {
        let curve = model::sweep(row, seed);
        let sysfs = claims(row);
        let page = row.huge_page.unwrap_or(row.base_page);
        let Some((end, reason)) = (1..=curve.len())
            .find_map(|n| end_of(&curve[..n], &sysfs, page, row.line, None).map(|r| (n, r)))
        else {
            // The model's sweep ends before the rule does: no cut to read.
            return Ok(());
        };
        let cut = detect::detect(&curve[..end], &sysfs);
        let names: Vec<&str> = cut.levels.iter().map(|l| l.name.as_str()).collect();
        let want = super::level_names(row);
        if names != want {
            return Err(format!(
                "ended at {} ({reason}): levels {names:?}, want {want:?}\n{}",
                curve[end - 1].size_bytes,
                memlat::output::detect::table(&cut)
            ));
        }
        let whole = detect::detect(&curve, &sysfs);
        for (c, w) in cut.levels.iter().zip(&whole.levels) {
            if let (Some(got), Some([low, high])) = (c.size_bytes, w.size_bracket_bytes)
                && !(low..=high).contains(&got)
            {
                return Err(format!(
                    "ended at {} ({reason}): {} {got} outside the whole curve's {low}..{high}",
                    curve[end - 1].size_bytes,
                    c.name
                ));
            }
        }
        Ok(())
    });
}
