//! The remembered plateaus of this machine: the complete, quiet sweeps of
//! the last `REMEMBER_DAYS` (plateaus.rs) days, combined so that a size
//! belongs to a level's plateau only where the sweeps agree.
//!
//! One sweep is not enough on a shared machine: the edge of a shared L3
//! moves with the other tenants, and one sweep of the Zen 5 guest of issue
//! 27 took a 1.0-1.5 MiB stretch of the L2 -> L3 ramp as the L3 plateau,
//! after which the quick table measured "L3" at 1.2 MiB. Combined:
//! - each sweep's level `Lk` counts only when its latency is within
//!   [`LEVEL_RATIO`](crate::analysis::detect::LEVEL_RATIO) of the median of the sweeps' `Lk` (a ramp stretch taken
//!   as a level is slower or faster than the level by more than that);
//! - of those, the plateaus that overlap the size most of them cover form
//!   the agreement, which must hold more than half of all the sweeps; the
//!   others are outvoted;
//! - the combined plateau is the sizes every agreeing sweep put on it (the
//!   intersection), its bounds what every one of them agrees it serves (the
//!   lowest `at_least`) and does not (the highest `at_most`).

use super::plateau_levels::{MeasuredLevels, Plateau};
use crate::analysis::detect::{CapacityBounds, same_level};
use crate::analysis::stats::median;

/// The most sweeps remembered. The week's sweeps, not the last hour's: a
/// shared level's pooled capacity bounds are what every one of them agreed
/// on, and ten sweeps can be one afternoon's batch, after which the low a
/// level reached earlier that week drops out and comes back with the next
/// busy minute (this Zen 4 guest's L2 at_least: 418 KiB at 15:54, gone
/// from ten kept by 18:10, back at 18:12). Thirty files of about 250 KB
/// each read in well under a second.
pub const KEEP_SWEEPS: usize = 30;

/// The plateaus all of `sweeps` (newest last, each with its `measured`
/// start time) agree on; `None` when none is given. A level without a
/// majority is left out and named in the returned notes.
pub fn combine(sweeps: &[MeasuredLevels]) -> Option<(MeasuredLevels, Vec<String>)> {
    let newest = sweeps.last()?;
    if sweeps.len() == 1 {
        return Some((newest.clone(), Vec::new()));
    }
    let mut notes = Vec::new();
    let count = sweeps.iter().map(|s| s.levels.len()).max().unwrap_or(0);
    let mut levels = Vec::new();
    for k in 1..=count as u32 {
        let found: Vec<&Plateau> = sweeps.iter().filter_map(|s| s.level(k)).collect();
        match agreed(&found, sweeps.len()) {
            Some(p) => levels.push(p),
            None => notes.push(format!(
                "L{k}: no majority of the {} remembered sweeps agrees on where its plateau lies ({} found one); left out",
                sweeps.len(),
                found.len()
            )),
        }
    }
    let memory: Vec<f64> = sweeps.iter().filter_map(|s| s.memory_ns).collect();
    let combined = MeasuredLevels {
        source: newest.source.clone(),
        file: newest.file.clone(),
        measured: format!(
            "{}..{} ({} sweeps combined)",
            sweeps[0].measured,
            newest.measured,
            sweeps.len()
        ),
        levels,
        memory_ns: (!memory.is_empty()).then(|| median(&memory)),
    };
    Some((combined, notes))
}

/// The plateau most of `found` (one level's plateaus from the sweeps that
/// have it, of `sweeps` in all) agree on, or `None` without a majority of
/// all the sweeps (a level one sweep of five found is not taken).
fn agreed(found: &[&Plateau], sweeps: usize) -> Option<Plateau> {
    let ns: Vec<f64> = found.iter().map(|p| p.ns).collect();
    if ns.is_empty() {
        return None;
    }
    let typical = median(&ns);
    let alike: Vec<&Plateau> = found
        .iter()
        .copied()
        .filter(|p| same_level(p.ns, typical))
        .collect();
    // The size most plateaus cover: one of their starts (coverage only
    // changes there), the smallest on a tie.
    let covering = |size: u64| -> Vec<&Plateau> {
        alike
            .iter()
            .copied()
            .filter(|p| p.from_bytes <= size && size <= p.to_bytes)
            .collect()
    };
    let best = alike
        .iter()
        .map(|p| covering(p.from_bytes))
        .max_by_key(|c| c.len())?;
    if 2 * best.len() <= sweeps {
        return None;
    }
    let capacities: Vec<f64> = best
        .iter()
        .filter_map(|p| p.capacity_bytes)
        .map(|c| c as f64)
        .collect();
    let bounds: Vec<CapacityBounds> = best.iter().filter_map(|p| p.capacity_bounds).collect();
    Some(Plateau {
        name: best[0].name.clone(),
        from_bytes: best.iter().map(|p| p.from_bytes).max()?,
        to_bytes: best.iter().map(|p| p.to_bytes).min()?,
        ns: median(&best.iter().map(|p| p.ns).collect::<Vec<_>>()),
        capacity_bytes: (!capacities.is_empty()).then(|| median(&capacities) as u64),
        capacity_bounds: (!bounds.is_empty()).then(|| CapacityBounds::pool(&bounds)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;
    const K: u64 = 1 << 10;

    fn plateau(name: &str, from: u64, to: u64, ns: f64, bounds: (u64, u64)) -> Plateau {
        Plateau {
            name: name.into(),
            from_bytes: from,
            to_bytes: to,
            ns,
            capacity_bytes: Some(to + to / 4),
            capacity_bounds: Some(CapacityBounds {
                at_least_bytes: Some(bounds.0),
                at_most_bytes: Some(bounds.1),
            }),
        }
    }

    fn sweep(when: &str, l3: Plateau) -> MeasuredLevels {
        MeasuredLevels {
            source: "remembered".into(),
            file: None,
            measured: when.into(),
            levels: vec![
                plateau("L1", 4 * K, 40 * K, 0.94, (48 * K, 51 * K)),
                plateau("L2", 64 * K, 420 * K, 3.3, (700 * K, 1500 * K)),
                l3,
            ],
            memory_ns: Some(139.0),
        }
    }

    #[test]
    fn a_ramp_taken_as_l3_by_the_last_sweep_is_outvoted() {
        // Issue 27's Zen 5 guest: three sweeps put L3 at 11 ns on 2-4.5 MiB
        // with edges 5.3-8 MiB; the last took 1.0-1.5 MiB at 7.5 ns.
        let sweeps = [
            sweep(
                "a",
                plateau("L3", 2 * M, 4 * M + M / 2, 11.2, (4 * M, 12 * M)),
            ),
            sweep("b", plateau("L3", 2 * M, 5 * M, 11.5, (5 * M, 10 * M))),
            sweep(
                "c",
                plateau("L3", 2 * M + M / 2, 4 * M, 11.0, (3 * M, 16 * M)),
            ),
            sweep("d", plateau("L3", M, M + M / 2, 7.5, (M + M / 2, 2 * M))),
        ];
        let (combined, notes) = combine(&sweeps).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        let l3 = combined.level(3).unwrap();
        assert_eq!((l3.from_bytes, l3.to_bytes), (2 * M + M / 2, 4 * M));
        assert!((11.0..=11.5).contains(&l3.ns), "{l3:?}");
        let b = l3.capacity_bounds.unwrap();
        assert_eq!(
            (b.at_least_bytes, b.at_most_bytes),
            (Some(3 * M), Some(16 * M))
        );
        // The quick table now measures L3 inside every agreeing plateau.
        let mid = l3.middle(64);
        assert!((2 * M + M / 2..=4 * M).contains(&mid), "{mid}");
        assert!(combined.measured.contains("4 sweeps"));
    }

    #[test]
    fn two_sweeps_that_disagree_leave_the_level_out() {
        let sweeps = [
            sweep("a", plateau("L3", 2 * M, 4 * M, 11.2, (4 * M, 12 * M))),
            sweep("b", plateau("L3", M, M + M / 2, 10.0, (M + M / 2, 2 * M))),
        ];
        let (combined, notes) = combine(&sweeps).unwrap();
        assert!(combined.level(3).is_none());
        assert_eq!(combined.levels.len(), 2);
        assert!(notes[0].starts_with("L3:"), "{notes:?}");
    }

    #[test]
    fn a_level_one_sweep_of_three_found_is_not_taken() {
        let l3 = || plateau("L3", 2 * M, 4 * M, 11.2, (4 * M, 12 * M));
        let mut extra = sweep("c", l3());
        extra
            .levels
            .push(plateau("L4", 20 * M, 30 * M, 40.0, (30 * M, 40 * M)));
        let (combined, notes) = combine(&[sweep("a", l3()), sweep("b", l3()), extra]).unwrap();
        assert_eq!(combined.levels.len(), 3);
        assert!(
            notes[0].starts_with("L4: no majority of the 3"),
            "{notes:?}"
        );
    }

    #[test]
    fn one_sweep_is_taken_as_it_is() {
        let one = sweep("a", plateau("L3", 2 * M, 4 * M, 11.2, (4 * M, 12 * M)));
        let (combined, notes) = combine(std::slice::from_ref(&one)).unwrap();
        assert_eq!(combined, one);
        assert!(notes.is_empty());
        assert!(combine(&[]).is_none());
    }
}
