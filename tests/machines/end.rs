//! Where a sweep without `--to` ends (`experiments::sweep::end_of`, run
//! after each grid size): the model's sweep fed to it size by size, and
//! the levels read from the curve cut where it stops must be the row's
//! levels. A rule that stops inside a cache that sysfs lists, or before a
//! level's end, fails here.

use std::sync::atomic::{AtomicUsize, Ordering};

use memlat::analysis::detect;
use memlat::experiments::sweep::{Pages, end_of, past_levels};

use super::model;
use super::rows::Row;
use super::{claims, every_row};

/// The row's sweep pages ([`Row::sweep_pages`]) as the end rule takes them.
fn pages(row: &Row) -> Pages {
    let (bytes, reach) = row.sweep_pages();
    Pages { bytes, reach }
}

#[test]
fn the_sweep_ends_past_every_level_and_its_cut_curve_reads_them_all() {
    let ended = AtomicUsize::new(0);
    every_row("sweep end", |row, seed| {
        let curve = model::sweep(row, seed);
        let sysfs = claims(row);
        let Some((end, reason)) = (1..=curve.len())
            .find_map(|n| end_of(&curve[..n], &sysfs, pages(row), row.line, None).map(|r| (n, r)))
        else {
            // The model's sweep ends before the rule does: no cut to read.
            return Ok(());
        };
        ended.fetch_add(1, Ordering::Relaxed);
        // The guests listed a far larger L3 than they were served (480 and
        // 260 MiB): memory's size for the share measured ends their sweeps.
        let last = row.caches.last().expect("a cache");
        if last.listed > 16 * last.serves.1 && reason != "measured-memory-size" {
            return Err(format!(
                "ended at {} by {reason}, not by the levels measured",
                curve[end - 1].size_bytes
            ));
        }
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
        // Each capacity is known to its bracket (the sizes either side of
        // where half the loads stop being served): the cut curve's must
        // meet the whole curve's. Its memory plateau rests on fewer points,
        // so a crossing at a grid size may fall on the size's other side
        // (0.2% under it, draw 18 of rows 5 and 9 at 100 draws).
        let whole = detect::detect(&curve, &sysfs);
        for (c, w) in cut.levels.iter().zip(&whole.levels) {
            if let (Some(got), Some([cut_low, cut_high]), Some([low, high])) =
                (c.size_bytes, c.size_bracket_bytes, w.size_bracket_bytes)
                && (cut_high < low || cut_low > high)
            {
                return Err(format!(
                    "ended at {} ({reason}): {} {got} ({cut_low}..{cut_high}) apart from the whole curve's {low}..{high}",
                    curve[end - 1].size_bytes,
                    c.name
                ));
            }
        }
        Ok(())
    });
    let ended = ended.into_inner();
    assert!(
        ended >= 60,
        "the rule ended only {ended} of 80 model sweeps"
    );
}

/// The grid's sizes after the sweep sees every level end ask memory's
/// precision (`Engine::set_past_levels`): none may be a size the whole
/// curve's last level still serves part of.
#[test]
fn the_grid_asks_memorys_precision_only_past_the_last_level_on_every_row() {
    every_row("past the levels", |row, seed| {
        let curve = model::sweep(row, seed);
        let sysfs = claims(row);
        let Some((n, past)) = (1..=curve.len())
            .find_map(|n| past_levels(&curve[..n], &sysfs, pages(row)).map(|b| (n, b)))
        else {
            return Ok(());
        };
        let whole = detect::detect(&curve, &sysfs);
        let high = whole
            .levels
            .iter()
            .filter_map(|l| l.size_bracket_bytes)
            .map(|[_, high]| high)
            .next_back()
            .unwrap_or(0);
        // The grid goes on from the size it was set at, every later size
        // above `past`: none may lie inside the whole curve's last bracket.
        let at = curve[n - 1].size_bytes;
        if at.max(past) < high {
            return Err(format!(
                "memory's precision from {past} (set at {at}), inside the last level's bracket to {high}"
            ));
        }
        Ok(())
    });
}
