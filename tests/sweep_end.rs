//! Where a sweep without `--to` ends, replayed on every stored real curve
//! (tests/fixtures/curves/): the grid's points are fed in size order to
//! the rule the sweep runs after each size, and the levels read from the
//! curve cut where it stops must be the levels the whole curve gives.

use std::path::Path;

use memlat::analysis::detect::Detection;
use memlat::experiments::sweep::{SweepResult, end_reason, past_levels};

/// Every stored curve, by file name.
fn curves() -> Vec<(String, SweepResult)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/curves");
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let result = SweepResult::load(&p).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            (name, result)
        })
        .collect()
}

/// `result` as the grid left it at `size`: its grid points up to there, no
/// remeasuring, refinement, spreads or page test yet.
fn grid_up_to(result: &SweepResult, size: u64) -> SweepResult {
    let mut cut = result.clone();
    cut.points
        .retain(|m| m.size <= size && result.config.sizes.contains(&m.size));
    cut.config.remeasured_sizes.clear();
    cut.config.first_pass_levels.clear();
    cut.config.refined_sizes.clear();
    cut.load_spreads.clear();
    cut.page_test = None;
    cut
}

/// `result` with every point past `size` gone, all else kept.
fn cut_at(result: &SweepResult, size: u64) -> SweepResult {
    let mut cut = result.clone();
    cut.points.retain(|m| m.size <= size);
    cut
}

/// The first grid size, in order, at which `rule` (given the grid up to
/// there) answers, with its answer.
fn replay<T>(result: &SweepResult, rule: impl Fn(&SweepResult) -> Option<T>) -> Option<(u64, T)> {
    let mut sizes = result.config.sizes.clone();
    sizes.sort_unstable();
    sizes
        .into_iter()
        .find_map(|s| rule(&grid_up_to(result, s)).map(|r| (s, r)))
}

/// Where the sweep's end rule stops `result`'s grid, and why.
fn replayed_end(result: &SweepResult) -> Option<(u64, &'static str)> {
    replay(result, |grid| end_reason(grid, None))
}

fn caches(d: &Detection) -> Vec<(String, u64, [u64; 2])> {
    d.levels
        .iter()
        .filter_map(|l| Some((l.name.clone(), l.size_bytes?, l.size_bracket_bytes?)))
        .collect()
}

/// The cut curve's caches must be the whole curve's: the same names, each
/// capacity inside the whole curve's bracket.
fn assert_same_caches(name: &str, whole: &Detection, cut: &Detection) {
    let (whole, cut) = (caches(whole), caches(cut));
    assert_eq!(
        whole.iter().map(|c| &c.0).collect::<Vec<_>>(),
        cut.iter().map(|c| &c.0).collect::<Vec<_>>(),
        "{name}: whole {whole:?}, cut {cut:?}"
    );
    for ((level, _, [low, high]), (_, got, _)) in whole.iter().zip(&cut) {
        assert!(
            (low..=high).contains(&got),
            "{name}: {level} {got} outside the whole curve's bracket {low}..{high}"
        );
    }
}

#[test]
fn every_stored_curve_cut_where_its_sweep_would_end_reads_the_same_caches() {
    let mut replayed = 0;
    for (name, result) in curves() {
        let Some((size, reason)) = replayed_end(&result) else {
            // Recorded under an older end rule, short of where today's
            // ends: nothing to cut.
            continue;
        };
        let whole = result.detect().expect("a curve");
        let cut = cut_at(&result, size).detect().expect("a curve");
        eprintln!(
            "{name}: ends at {} MiB ({reason}), recorded to {} MiB",
            size >> 20,
            result.config.sizes.iter().max().copied().unwrap_or(0) >> 20
        );
        assert_same_caches(&name, &whole, &cut);
        replayed += 1;
    }
    assert!(replayed >= 10, "only {replayed} curves replayed to an end");
}

/// The Emerald Rapids guests were given 4-17 MiB of a 300 MiB L3 and swept
/// to 1 GiB for it (2 s of 10). Every listed level has ended by 40 MiB,
/// so memory's size for the share measured (256 MiB) ends the sweep.
#[test]
fn a_guests_share_of_a_far_larger_l3_ends_the_sweep_at_memorys_size_for_the_share() {
    for (name, result) in curves()
        .into_iter()
        .filter(|(n, _)| n.starts_with("intel-xeon-emr-kvm16"))
    {
        let (size, reason) = replayed_end(&result).expect("an end");
        assert_eq!(reason, "measured-memory-size", "{name}");
        assert!(
            size < 300 << 20,
            "{name}: ends at {size}, past the claimed L3"
        );
    }
}

/// The same curve as if the whole 300 MiB L3 served this process (bare
/// metal): its L3 plateau runs on to 288 MiB, two levels end where sysfs
/// lists three, and the sweep must go past the claim to find memory.
#[test]
fn a_whole_l3_still_serving_does_not_end_the_sweep_inside_it() {
    let (name, mut result) = curves()
        .into_iter()
        .find(|(n, _)| n == "intel-xeon-emr-kvm16-2026-11-28-a.json")
        .expect("the fixture");
    let l3 = result
        .points
        .iter()
        .find(|m| m.size >= 8 << 20)
        .expect("an L3 point")
        .clone();
    for m in &mut result.points {
        if m.size > 4 << 20 && m.size <= 288 << 20 {
            m.ns_per_load = l3.ns_per_load;
            m.cycles_per_load = l3.cycles_per_load;
        }
    }
    let (size, reason) = replayed_end(&result).expect("an end");
    eprintln!(
        "{name} with a whole L3: ends at {} MiB ({reason})",
        size >> 20
    );
    assert!(
        size > 300 << 20,
        "{name}: ended inside the L3 at {size} ({reason})"
    );
    assert_ne!(reason, "measured-memory-size");
}

/// Where the grid first shows every listed level ended, as the sweep
/// replays it after each size: the bytes past which its chains ask
/// memory's precision.
fn replayed_past_levels(result: &SweepResult) -> Option<(u64, u64)> {
    replay(result, |grid| {
        past_levels(&grid.curve(), &grid.sysfs_caches)
    })
}

/// Memory's precision starts past every level the whole curve places:
/// never at a size its last cache's bracket still covers.
#[test]
fn memorys_precision_starts_past_the_last_level_of_every_stored_curve() {
    let mut set = 0;
    for (name, result) in curves() {
        let Some((at, past)) = replayed_past_levels(&result) else {
            continue;
        };
        let whole = result.detect().expect("a curve");
        let Some((level, _, [_, high])) = caches(&whole).into_iter().last() else {
            continue;
        };
        assert!(
            at.max(past) >= high,
            "{name}: memory's precision from {past} (set at {at}), inside {level}'s bracket to {high}"
        );
        set += 1;
    }
    assert!(set >= 15, "set on {set} curves only");
}
