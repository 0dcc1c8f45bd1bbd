//! Where a sweep without `--to` ends, replayed on every stored real curve
//! (tests/fixtures/curves/): the grid's points are fed in size order to
//! the rule the sweep runs after each size, and the levels read from the
//! curve cut where it stops must be the levels the whole curve gives.

use std::path::Path;

use memlat::analysis::detect::Detection;
use memlat::engine::Measurement;
use memlat::experiments::sweep::{Pages, SeriesKey, SweepResult, end_of, past_levels};

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

/// `result` without its page test, which a sweep cut short would make at
/// its own sizes (it can place memory, so the whole sweep's would help).
fn without_page_test(result: &SweepResult) -> SweepResult {
    let mut r = result.clone();
    r.page_test = None;
    r
}

/// `result` as if it had ended at `size`: every point, and every spread of
/// single loads, past it gone, and no page test.
fn cut_at(result: &SweepResult, size: u64) -> SweepResult {
    let mut cut = without_page_test(result);
    cut.points.retain(|m| m.size <= size);
    cut.load_spreads.retain(|l| l.size_bytes <= size);
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

/// The stored sweeps' pages: 2 MiB (THP), and the reach of the 2048
/// second-level TLB entries Golden Cove, Raptor Cove and Zen 3-5 document
/// for them. Explicit, so the replay does not read this host's CPUID.
fn thp() -> Pages {
    Pages {
        bytes: 2 << 20,
        reach: 2048 * (2 << 20),
    }
}

/// Where the sweep's end rule stops `result`'s grid, and why.
fn replayed_end(result: &SweepResult) -> Option<(u64, &'static str)> {
    replay(result, |grid| {
        end_of(&grid.curve(), &grid.sysfs_caches, thp(), 64, None)
    })
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
        let whole = without_page_test(&result).detect().expect("a curve");
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
    let guests: Vec<_> = curves()
        .into_iter()
        .filter(|(n, _)| n.starts_with("intel-xeon-emr-kvm16"))
        .collect();
    assert_eq!(guests.len(), 6, "the six stored 16-vCPU sweeps");
    for (name, result) in guests {
        let (size, reason) = replayed_end(&result).expect("an end");
        assert_eq!(reason, "measured-memory-size", "{name}");
        assert!(
            size < 300 << 20,
            "{name}: ends at {size}, past the claimed L3"
        );
        // With 4 KiB pages the TLBs reach 8 MiB, inside the claimed L3:
        // a step there may be the walks', and the count proves nothing.
        let small = Pages {
            bytes: 4096,
            reach: 8 << 20,
        };
        let by_count = replay(&result, |grid| {
            end_of(&grid.curve(), &grid.sysfs_caches, small, 64, None)
                .filter(|r| *r == "measured-memory-size")
        });
        assert_eq!(by_count, None, "{name}: ended by a count of 4 KiB pages");
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
    // Each series' reading in the middle of the L3's plateau (6 MiB; the
    // share ends at 12.7), carried from 4 to 288 MiB.
    let plateau: Vec<Measurement> = result.points.iter().filter(|m| m.size >= 6 << 20).fold(
        Vec::<Measurement>::new(),
        |mut kept, m| {
            if !kept.iter().any(|k| SeriesKey::of(k) == SeriesKey::of(m)) {
                kept.push(m.clone());
            }
            kept
        },
    );
    assert_eq!(plateau.len(), 2, "a stride and a random reading");
    for m in &mut result.points {
        if m.size > 4 << 20 && m.size <= 288 << 20 {
            let l3 = plateau
                .iter()
                .find(|k| SeriesKey::of(k) == SeriesKey::of(m))
                .expect("its series");
            m.ns_per_load = l3.ns_per_load;
            m.cycles_per_load = l3.cycles_per_load;
        }
    }
    // The random curve now reads the L3's latency, not memory's, to 288 MiB.
    let d = without_page_test(&result).detect().expect("a curve");
    let at_100m = result
        .curve()
        .into_iter()
        .find(|p| p.size_bytes >= 100 << 20)
        .expect("a point at 100 MiB");
    let l3_ns = d.levels[d.levels.len() - 2].latency_ns;
    assert!(
        at_100m.ns < 1.5 * l3_ns && at_100m.ns > 20.0,
        "100 MiB reads {} ns, the L3 {l3_ns}",
        at_100m.ns
    );
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
        past_levels(&grid.curve(), &grid.sysfs_caches, thp())
    })
}

/// The grid asks memory's precision of the sizes after the one where it
/// saw every level end, and above the last one's bracket then (and the
/// precision is cleared before remeasuring and refining): none of them may
/// be a size the whole curve's last cache's bracket still covers.
#[test]
fn the_grid_asks_memorys_precision_only_past_the_last_level_of_every_stored_curve() {
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
