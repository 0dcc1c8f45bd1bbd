//! The page test read: one curve cannot tell page walks (once the TLBs stop
//! reaching) from a farther level, at its last step or in a climb after it;
//! the same sizes measured again with the other page size can, since
//! translation moves with the page and a level does not
//! ([`tail::step_cause`], [`tail::climb_cause`]).
//!
//! In order: the last step (the level below the last one to the last
//! level's first size). Where it flattened with the other page, the last
//! "level" was translation cost: the curve is read again with its plateaus
//! taken for a climb past memory, and memory is the level below. Where it
//! stayed, the last level stands, and what follows it is judged: a climb
//! past it ([`tail`]), or a rise across its own plateau of a climb's size
//! (a walk cost small enough to join memory's plateau).

use super::level_notes::{CLIMB_ADVICE_VOIDED, translation_note};
use super::tail::{self, CLIMB_RATIO, ClimbCause, PageTest, Translation};
use super::{CurvePoint, Detection, detect_from, same_level};
use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;

/// Finds the levels in `curve` as [`super::detect`] does, and reads the
/// page test where the sweep made one (and its single-load spreads); without it, says the last step was
/// read from one page size.
pub fn detect_with_pages(
    curve: &[CurvePoint],
    sysfs: &[CacheInfo],
    test: Option<&PageTest>,
    spreads: &[super::LoadSpread],
) -> Detection {
    let mut d = detect_from(curve, sysfs, None, spreads);
    let Some(test) = test else {
        if let [.., below, last] = d.levels.as_slice() {
            d.notes.push(format!(
                "no page test: the last step ({} -> {}, {:.1} to {:.1} ns) is read from one page size, which cannot tell a level from page walks once the TLBs stop reaching; `memlat sweep` measures its ends again with the other page size where the system has one",
                below.name, last.name, below.latency_ns, last.latency_ns
            ));
        }
        return d;
    };
    // The controls: the level below must still serve the lower end now,
    // and the last level the upper end.
    let upper_served = match (d.levels.last(), test.memory_here_ns) {
        (Some(last), Some(here)) => same_level(here, last.latency_ns),
        _ => true,
    };
    let moved = match (d.levels.as_slice(), test.below_here_ns, test.memory_here_ns) {
        ([.., below, _], Some(here), _) if !same_level(here, below.latency_ns) => Some(format!(
            "the page test cannot tell the last step: its lower end ({}) read {here:.1} ns again with the sweep's own pages, not the {}'s {:.1} ns (a shared level's share moved, or a disturbed run); read as detected",
            HumanBytes(test.below_bytes.unwrap_or(0)),
            below.name,
            below.latency_ns
        )),
        ([.., last], _, Some(here)) if !upper_served => Some(format!(
            "the page test cannot tell the last step, nor a climb past it: its upper end ({}) read {here:.1} ns again with the sweep's own pages, not the {}'s {:.1} ns (a shared level's share grew over it, or a disturbed run); read as detected",
            last.plateau_bytes
                .map_or("-".to_string(), |[a, _]| HumanBytes(a).to_string()),
            last.name,
            last.latency_ns
        )),
        _ => None,
    };
    if let Some(note) = moved {
        d.notes.push(note);
    } else if let [.., below, last] = d.levels.as_slice()
        && let Some(cause) = tail::step_cause(below.latency_ns, test)
    {
        let step = format!(
            "the last step ({} at {:.1} ns -> {} at {:.1} ns)",
            below.name, below.latency_ns, last.name, last.latency_ns
        );
        let other = read_with(test, test.below_ns.unwrap_or(0.0), test.memory_ns);
        match cause {
            ClimbCause::Translation => {
                let mut again = detect_from(curve, sysfs, below.plateau_bytes, spreads);
                if let Some(t) = again.translation.as_mut() {
                    t.page_test = Some(*test);
                    t.cause = Some(ClimbCause::Translation);
                    drop_undetermined(&mut again.notes);
                    again.notes.push(format!(
                        "{step} flattened with the other page size ({other}): page walks once the TLBs stop reaching, not a level; memory is the level below, and the latency past it climbs by translation cost to {:.1} ns at the largest size",
                        t.latency_ns_at_largest
                    ));
                    return again;
                }
                d.notes.push(format!(
                    "{step} flattened with the other page size ({other}), but without it the curve shows no climb past a level: read as detected"
                ));
            }
            ClimbCause::Level => d.notes.push(format!(
                "{step} stayed with the other page size ({other}): a level, not page walks"
            )),
        }
    }
    // The climb's lower end is the step's upper one: where the last level
    // no longer served it, the test tells the climb nothing either.
    if upper_served {
        judge_climb(curve, &mut d, test);
    } else if let (Some(t), Some(memory)) = (d.translation, d.levels.last()) {
        drop_undetermined(&mut d.notes);
        let note = translation_note(&t, memory.latency_ns, CLIMB_ADVICE_VOIDED);
        d.notes.push(note);
    }
    d
}

/// Drops the note that left a climb undetermined, once the page test told it.
fn drop_undetermined(notes: &mut Vec<String>) {
    notes.retain(|n| !n.starts_with("translation cost beyond"));
}

/// Judges what follows the last level with the page test: the climb past
/// it where the curve has one, else a rise across its own plateau from its
/// first size to the largest of a climb's size ([`CLIMB_RATIO`]).
fn judge_climb(curve: &[CurvePoint], d: &mut Detection, test: &PageTest) {
    let Some(memory) = d.levels.last() else {
        return;
    };
    let memory_ns = memory.latency_ns;
    // The climb's lower end as the other page measured it: memory's first size.
    let first = memory.plateau_bytes.map(|[a, _]| a);
    let at = |size: u64| curve.iter().find(|p| p.size_bytes == size).map(|p| p.ns);
    let start_ns = first.and_then(at);
    if let Some(t) = d.translation.as_mut() {
        let from = start_ns.unwrap_or(memory_ns);
        let cause = tail::climb_cause(from, t.latency_ns_at_largest, test);
        t.page_test = Some(*test);
        t.cause = Some(cause);
        let largest = t.latency_ns_at_largest;
        drop_undetermined(&mut d.notes);
        d.notes.push(climb_note(cause, test, largest));
        return;
    }
    // A walk cost too small for a step joins memory's plateau: the rise
    // across it, from its first size to the largest.
    let (Some(first), Some(start_ns), Some(largest)) =
        (first, start_ns, curve.iter().max_by_key(|p| p.size_bytes))
    else {
        return;
    };
    if largest.ns < start_ns * CLIMB_RATIO {
        return;
    }
    let cause = tail::climb_cause(start_ns, largest.ns, test);
    let rise = format!(
        "memory's plateau rises from {start_ns:.1} ns at {} to {:.1} ns at {}",
        HumanBytes(first),
        largest.ns,
        HumanBytes(largest.size_bytes)
    );
    let with = read_with(test, test.memory_ns, test.largest_ns);
    // From the first size on which every later one stays above the start by a climb's ratio.
    let mut sizes: Vec<&CurvePoint> = curve.iter().filter(|p| p.size_bytes >= first).collect();
    sizes.sort_by_key(|p| p.size_bytes);
    let held = sizes
        .iter()
        .rev()
        .take_while(|p| p.ns >= start_ns * CLIMB_RATIO)
        .count();
    let starts = sizes[sizes.len() - held.max(1)].size_bytes;
    let note = match cause {
        ClimbCause::Level if rises_late(curve, first, largest, start_ns) => format!(
            "{rise}, most of it in the plateau's upper half, and the rise stayed when the page size changed ({with}): not the tail of the step into memory (a level's tail rises most just past its step) but a farther tier from about {}",
            HumanBytes(starts)
        ),
        ClimbCause::Translation => format!(
            "{rise}, and the rise moved with the page size ({with}): translation cost from about {}, confirmed; memory's figure ({memory_ns:.1} ns, its plateau's median) includes part of it, its first size reads {start_ns:.1} ns",
            HumanBytes(starts)
        ),
        ClimbCause::Level => {
            d.notes.push(format!(
                "{rise}, and the rise stayed when the page size changed ({with}): not translation (the tail of the step into memory, or the start of a farther tier)"
            ));
            return;
        }
    };
    d.translation = Some(Translation {
        starts_bytes: starts,
        latency_ns_at_largest: largest.ns,
        page_test: Some(*test),
        cause: Some(cause),
    });
    d.notes.push(note);
    if cause == ClimbCause::Level {
        d.notes.push(climb_note(cause, test, largest.ns));
    }
}

/// Whether memory's plateau, from `first` (read `start_ns`) to `largest`,
/// rises more over its upper half in log size than over its lower half,
/// and by a climb's ratio ([`CLIMB_RATIO`]) over the upper half alone.
/// The tail of the step into memory cannot: the share of loads the level
/// below still serves falls fastest just past its capacity (to nothing
/// under LRU, as `C / S` under adaptive insertion, faster under random
/// replacement), so each size adds less of the rise than the one before. A
/// farther tier from a size `F` adds nothing before `F` (a remote node
/// past the local one's free memory, CXL past local DRAM).
fn rises_late(curve: &[CurvePoint], first: u64, largest: &CurvePoint, start_ns: f64) -> bool {
    let Some(middle) = tail::middle(curve, [first, largest.size_bytes])
        .and_then(|m| curve.iter().find(|p| p.size_bytes == m))
    else {
        return false;
    };
    let (early, late) = (middle.ns - start_ns, largest.ns - middle.ns);
    late > early && largest.ns >= middle.ns * CLIMB_RATIO
}

/// What the page test says of a climb past memory.
fn climb_note(cause: ClimbCause, test: &PageTest, largest_ns: f64) -> String {
    let with = read_with(test, test.memory_ns, test.largest_ns);
    match cause {
        ClimbCause::Translation => format!(
            "the climb past memory moved with the page size ({with}): translation cost, confirmed"
        ),
        ClimbCause::Level => format!(
            "the climb past memory stayed when the page size changed ({with}): not this system's page walks but a farther tier (CXL memory, a remote NUMA node, a memory-side cache's misses) or, in a virtual machine, the host's page walks, which the guest's page size does not change; memory's figure is the nearer tier's, and the largest size reads {largest_ns:.1} ns"
        ),
    }
}

/// `with 4 KiB pages the same two sizes read 210.0 and 212.0 ns`.
fn read_with(test: &PageTest, a: f64, b: f64) -> String {
    format!(
        "with {} pages the same two sizes read {a:.1} and {b:.1} ns",
        HumanBytes(test.page_bytes)
    )
}
