//! The detector on real curves (tests/fixtures/curves/, described in its
//! README): the levels an independent check found must come out, with no
//! level invented. Expectations are per machine; the detector has no
//! special case for any of them.

use std::path::{Path, PathBuf};

use memlat::analysis::detect::{DetectedLevel, Detection};
use memlat::experiments::sweep::SweepResult;

const K: u64 = 1 << 10;
const M: u64 = 1 << 20;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/curves")
        .join(name)
}

fn detect(name: &str) -> Detection {
    let path = fixture(name);
    let result = SweepResult::load(&path).expect("fixture parses");
    result.detect().expect("fixture has a curve")
}

fn describe(d: &Detection) -> String {
    memlat::output::detect::table(d)
}

fn level<'a>(d: &'a Detection, name: &str) -> &'a DetectedLevel {
    d.levels
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no {name} in\n{}", describe(d)))
}

fn names(d: &Detection) -> Vec<&str> {
    d.levels.iter().map(|l| l.name.as_str()).collect()
}

/// Asserts that `level`'s capacity lies in `low..=high` and its latency in `ns`.
/// Capacity is where the level serves half the loads: under LRU just past
/// its size, in a guest whose pages scatter over the host's sets further
/// (Golden Cove's 2 MiB L2 reads 2.2-2.3 MiB, Zen 4's 1 MiB L2 1.2-1.3).
fn check(d: &Detection, name: &str, size: Option<(u64, u64)>, ns: (f64, f64)) {
    let l = level(d, name);
    if let Some((low, high)) = size {
        let got = l.size_bytes.expect("a cache has a capacity");
        assert!(
            (low..=high).contains(&got),
            "{name} capacity {got} outside {low}..={high}\n{}",
            describe(d)
        );
        let [a, b] = l.size_bracket_bytes.expect("a cache has a bracket");
        assert!(
            a <= got && got <= b,
            "{name}: {got} outside its bracket {a}..{b}"
        );
    }
    assert!(
        (ns.0..=ns.1).contains(&l.latency_ns),
        "{name} latency {} outside {:?}\n{}",
        l.latency_ns,
        ns,
        describe(d)
    );
}

/// `name` read as L1, L2, L3 and memory, each cache's capacity and ns
/// within `caches` (in that order) and memory's ns within `memory_ns`.
fn three_caches(
    name: &str,
    caches: [((u64, u64), (f64, f64)); 3],
    memory_ns: (f64, f64),
) -> Detection {
    let d = detect(name);
    assert_eq!(
        names(&d),
        ["L1", "L2", "L3", "memory"],
        "{name}\n{}",
        describe(&d)
    );
    for (level, (size, ns)) in ["L1", "L2", "L3"].into_iter().zip(caches) {
        check(&d, level, Some(size), ns);
    }
    check(&d, "memory", None, memory_ns);
    d
}

#[test]
fn intel_golden_cove_guest_from_the_shared_corpus() {
    let d = detect("intel-xeon-glc-kvm-thp.json");
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L1", Some((44 * K, 53 * K)), (1.4, 1.5));
    check(&d, "L2", Some((M, 5 * M / 2)), (4.5, 4.8));
    check(&d, "L3", Some((3 * M, 12 * M)), (33.0, 45.0));
    check(&d, "memory", None, (160.0, 185.0));
    let t = d
        .translation
        .unwrap_or_else(|| panic!("no translation climb\n{}", describe(&d)));
    assert!(
        (512 * M..=1100 * M).contains(&t.starts_bytes),
        "translation starts at {}",
        t.starts_bytes
    );
    assert!(t.latency_ns_at_largest > 200.0);
    assert!(
        d.notes
            .iter()
            .any(|n| n.starts_with("translation cost beyond")),
        "{}",
        describe(&d)
    );
    // The file holds no page test: the climb stays undetermined, the last
    // step is read as detected, and a note says so.
    assert_eq!(t.cause, None);
    assert!(
        d.notes.iter().any(|n| n.starts_with("no page test")),
        "{}",
        describe(&d)
    );
}

#[test]
fn intel_golden_cove_guest_of_this_project() {
    let d = detect("intel-glc-kvm-2026-11-22.json");
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L1", Some((44 * K, 53 * K)), (1.2, 1.4));
    check(&d, "L2", Some((M, 5 * M / 2)), (3.9, 4.4));
    check(&d, "L3", Some((12 * M, 40 * M)), (34.0, 45.0));
    check(&d, "memory", None, (130.0, 160.0));
    assert_eq!(d.translation, None, "{}", describe(&d));
    // Refined: the brackets of L1 and L3 within 5%. (The sweep refined
    // around the crossing of its day's definition, twice the plateau; L2's
    // half-served crossing lies past it, in a grid step of 1.3x, sizes
    // rounded to the line.)
    for l in d.levels.iter().filter(|l| l.size_bytes.is_some()) {
        let [a, b] = l.size_bracket_bytes.unwrap();
        let step = if l.name == "L2" { 1.31 } else { 1.05 };
        assert!(b as f64 <= a as f64 * step, "{}: {a}..{b}", l.name);
    }
}

#[test]
fn intel_golden_cove_guest_to_2g_shows_translation_cost() {
    let d = detect("intel-glc-kvm-2026-11-22-to-2g.json");
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L1", Some((44 * K, 53 * K)), (1.2, 1.4));
    check(&d, "L2", Some((M, 5 * M / 2)), (3.9, 4.4));
    check(&d, "L3", Some((12 * M, 40 * M)), (30.0, 45.0));
    check(&d, "memory", None, (130.0, 160.0));
    let t = d
        .translation
        .unwrap_or_else(|| panic!("no translation climb\n{}", describe(&d)));
    assert!(
        (400 * M..=1200 * M).contains(&t.starts_bytes),
        "translation starts at {}",
        t.starts_bytes
    );
}

#[test]
fn detect_json_carries_brackets_and_the_translation() {
    let out = assert_cmd::Command::cargo_bin("memlat")
        .unwrap()
        .args(["detect", "--format", "json"])
        .arg(fixture("intel-xeon-glc-kvm-thp.json"))
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let levels = v["levels"].as_array().unwrap();
    for l in &levels[..levels.len() - 1] {
        let bracket = l["size_bracket_bytes"].as_array().unwrap();
        assert!(bracket[0].as_u64() <= l["size_bytes"].as_u64());
        assert!(l["size_bytes"].as_u64() <= bracket[1].as_u64());
    }
    assert!(levels[levels.len() - 1]["size_bracket_bytes"].is_null());
    assert!(v["translation"]["starts_bytes"].as_u64().unwrap() > 512 * M);
    assert!(v["translation"]["latency_ns_at_largest"].as_f64().unwrap() > 200.0);
    assert!(
        v["capacity_definition"]
            .as_str()
            .unwrap()
            .contains("bracket")
    );
}

#[test]
fn version_0_1_0_files_read_as_schema_1_and_compare() {
    let old = fixture("intel-xeon-glc-kvm-thp.json");
    let result = SweepResult::load(&old).unwrap();
    assert_eq!((result.schema_version, result.kind.as_str()), (1, "sweep"));
    assert!(result.host.is_none());
    assert!(result.older_notice(&old).unwrap().contains("schema 1"));
    // Two Intel guests' sweeps, 0.1.0 against this version's: every level
    // and point they share, with the conditions that differ first.
    let out = assert_cmd::Command::cargo_bin("memlat")
        .unwrap()
        .arg("compare")
        .arg(&old)
        .arg(fixture("intel-glc-kvm-2026-11-22.json"))
        .args(["--format", "json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["key"] == "level L1"), "{rows:?}");
    let first = &v["conditions"][0];
    assert_eq!(first["differs"], true, "{first}");
}

/// The two Zen 3 Firecracker sweeps of ../shared/curves: `-a` once read as
/// five cache levels (a noisy 3-point stretch of the L2 -> L3 ramp and 4
/// noisy points at the end of the L3 share). Both must give three, with the
/// ramp set aside as unresolved rather than named.
fn zen3_guest(name: &str) -> Detection {
    let d = detect(name);
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L1", Some((28 * K, 40 * K)), (1.2, 1.5));
    check(&d, "L2", Some((200 * K, 560 * K)), (3.7, 4.3));
    check(&d, "L3", Some((1800 * K, 8600 * K)), (14.0, 18.0));
    check(&d, "memory", None, (100.0, 165.0));
    for l in &d.levels[1..d.levels.len() - 1] {
        let e = l.evidence.against_ramp.expect("a middle level was tested");
        assert!(
            e >= memlat::analysis::detect::EVIDENCE_MIN,
            "{}: {e}",
            l.name
        );
    }
    d
}

#[test]
fn amd_zen3_guest_run_a_has_three_levels_and_two_unresolved_stretches() {
    let d = zen3_guest("amd-epyc-zen3-fc-thp-a.json");
    let stretches: Vec<(u64, u64)> = d
        .unresolved
        .iter()
        .map(|u| (u.from_bytes, u.to_bytes))
        .collect();
    // The ramp's 6-7 ns stretch (about 250-370 KiB) and the 20-27 ns one
    // at the end of the L3 share (2.6-3.9 MiB).
    assert!(
        stretches.iter().any(|&(a, b)| a >= 240 * K && b <= 400 * K),
        "{stretches:?}\n{}",
        describe(&d)
    );
    // The end of the share is never a level of its own: unresolved, or (its
    // points' fastest repeats read the L3's latency) the end of the L3.
    let l3 = &d.levels[2];
    let [_, l3_end] = l3.plateau_bytes.unwrap();
    assert!(
        stretches.iter().any(|&(a, b)| a >= 2 * M && b <= 5 * M)
            || (l3_end >= 2 * M && l3.size_bytes.unwrap() <= 5 * M),
        "{stretches:?}\n{}",
        describe(&d)
    );
    let v = serde_json::to_value(&d).unwrap();
    assert!(v["unresolved"][0]["ns_min"].as_f64().unwrap() > 4.0);
    assert!(v["levels"][0]["evidence"]["passes"].as_u64().unwrap() >= 1);
}

#[test]
fn amd_zen3_guest_run_b_has_three_levels() {
    zen3_guest("amd-epyc-zen3-fc-thp-b.json");
}

#[test]
fn amd_zen4_guest_of_this_project() {
    let d = detect("amd-epyc-zen4-kvm-2026-11-24.json");
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L1", Some((28 * K, 40 * K)), (1.0, 1.2));
    check(&d, "L2", Some((512 * K, 1536 * K)), (3.6, 4.1));
    check(&d, "L3", Some((6 * M, 20 * M)), (12.0, 18.0));
    check(&d, "memory", None, (100.0, 170.0));
}

/// Two default sweeps on the Zen 4 guest of 2026-11-25 that the detector of
/// that morning got wrong: in `-ramp` it took the L2 -> L3 mixture at
/// 0.95-1.2 MiB (8.4 ns) for the L3; in `-missed` the L3 share's points
/// read memory in some repeats and no L3 was found. Both have the L3 share
/// at 12-16 ns from about 1.5 MiB in every repeat's fastest reading.
#[test]
fn amd_zen4_guest_l3_is_not_the_ramp_below_it() {
    for name in [
        "amd-epyc-zen4-kvm-2026-11-25-ramp.json",
        "amd-epyc-zen4-kvm-2026-11-25-missed.json",
    ] {
        let d = three_caches(
            name,
            [
                ((28 * K, 40 * K), (1.0, 1.2)),
                ((512 * K, 1200 * K), (3.6, 4.1)),
                ((1500 * K, 6 * M), (12.0, 16.0)),
            ],
            (100.0, 170.0),
        );
        let [l3_from, _] = level(&d, "L3").plateau_bytes.unwrap();
        assert!(
            l3_from >= 1200 * K,
            "{name}: L3 from {l3_from}\n{}",
            describe(&d)
        );
        assert!(level(&d, "L3").capacity_bounds.is_some());
    }
}

/// A sweep whose stretch between the L3 and memory (106.8 ns over 6.0-9.5
/// MiB) the curve alone reads as a fourth cache: its single loads, timed by
/// the sweep, split between memory and the L3's own latency, so it is their
/// mixture (`detect::one_latency`).
#[test]
fn amd_zen4_guest_mixture_told_by_its_loads() {
    told_by_its_loads(
        "amd-epyc-zen4-kvm-2026-11-28-spreads.json",
        "mixture of its neighbours",
        (3 * M, 16 * M),
        (12.0, 16.0),
    );
}

/// The Zen 4 guest with a compiler on the other CPU: its L2 read 5.0-10.2 ns
/// over 418-706 KiB (a cache of its own by the curve, 1.51x the L2), and its
/// loads, timed one by one there, took the L2's latency: the level below,
/// slowed while the curve was read (`SpreadVerdict::served_as_below`).
#[test]
fn amd_zen4_guest_slowed_l2_told_by_its_loads() {
    told_by_its_loads(
        "amd-epyc-zen4-kvm-2026-11-28-l2-slowed.json",
        "slowed at times",
        (2 * M, 8 * M),
        (14.0, 16.0),
    );
}

/// Asserts that fixture `name` reads L1, L2, L3 (its capacity within
/// `l3_bytes`, its latency within `l3_ns`) and memory, with a note saying
/// `why` a stretch was set aside by its loads, and a fourth cache from its
/// curve alone.
fn told_by_its_loads(name: &str, why: &str, l3_bytes: (u64, u64), l3_ns: (f64, f64)) {
    let d = detect(name);
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L3", Some(l3_bytes), l3_ns);
    assert!(d.notes.iter().any(|n| n.contains(why)), "{}", describe(&d));
    let alone = without_spreads(name);
    assert_eq!(
        names(&alone),
        ["L1", "L2", "L3", "L4", "memory"],
        "{}",
        describe(&alone)
    );
}

/// The levels of fixture `name` read from its curve alone, its single-load
/// spreads left out.
fn without_spreads(name: &str) -> Detection {
    let mut result = SweepResult::load(&fixture(name)).unwrap();
    assert!(!result.load_spreads.is_empty(), "{name} has no spreads");
    result.load_spreads.clear();
    result.detect().unwrap()
}

/// Asserts that `name` has bounds, the lower within `least` and the upper
/// within `most`, its capacity between them.
fn check_bounds(d: &Detection, name: &str, least: (u64, u64), most: (u64, u64)) {
    let l = level(d, name);
    let b = l
        .capacity_bounds
        .unwrap_or_else(|| panic!("{name} has no bounds\n{}", describe(d)));
    let (low, high) = (b.at_least_bytes.unwrap(), b.at_most_bytes.unwrap());
    assert!(
        (least.0..=least.1).contains(&low) && (most.0..=most.1).contains(&high),
        "{name} bounds {low}..{high} outside {least:?} and {most:?}\n{}",
        describe(d)
    );
    let size = l.size_bytes.unwrap();
    assert!(low <= size && size <= high, "{name}: {size} outside {b:?}");
}

/// The Zen 5 guest of issue 27: its L3 share's edge moves with other
/// tenants (5.3-8 MiB in three sweeps); every repeat read L3 latency to
/// about 4.3 MiB and memory latency from 9.5-16 MiB on.
#[test]
fn amd_zen5_guest_gives_three_levels_with_bounds() {
    let d = detect("amd-epyc-zen5-kvm-thp.json");
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L1", Some((44 * K, 54 * K)), (0.9, 1.0));
    check(&d, "L2", Some((800 * K, 1280 * K)), (3.2, 3.5));
    check(&d, "L3", Some((3 * M, 16 * M)), (10.0, 14.0));
    check(&d, "memory", None, (130.0, 180.0));
    // L1 ends in a sharp step between 48.1 and 51.3 KiB.
    check_bounds(&d, "L1", (46 * K, 49 * K), (49 * K, 52 * K));
    check_bounds(&d, "L2", (400 * K, 1024 * K), (1024 * K, 1600 * K));
    check_bounds(&d, "L3", (3 * M, 5 * M), (9 * M, 17 * M));
    assert!(level(&d, "memory").capacity_bounds.is_none());
    let l3 = level(&d, "L3");
    assert!(
        l3.notes
            .iter()
            .any(|n| n.starts_with("serves at least") && n.contains("edge moved")),
        "{}",
        describe(&d)
    );
}

/// A second Zen 5 guest (the same family 0x1a model 0x2, 2026-11-29), its
/// L3 share at its smallest of that hour: an independent chase (CPU 0)
/// minutes later read 1.09 ns at 16 KiB, 3.35 at 128 KiB, 12.1 at 4 MiB and
/// memory from 8 MiB on (119-156 ns); the sweep's repeats read the L3 to
/// 6.8 MiB and none past 9.5.
#[test]
fn a_second_zen5_guest_reads_its_small_share_as_the_l3() {
    let d = detect("amd-epyc-zen5-kvm-2026-11-29.json");
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L1", Some((44 * K, 54 * K)), (0.9, 1.0));
    check(&d, "L2", Some((800 * K, 1400 * K)), (3.2, 3.5));
    check(&d, "L3", Some((5 * M, 10 * M)), (11.0, 14.0));
    check(&d, "memory", None, (130.0, 170.0));
    check_bounds(&d, "L1", (46 * K, 49 * K), (49 * K, 52 * K));
    check_bounds(&d, "L3", (4 * M, 8 * M), (8 * M, 12 * M));
}

/// The remembered plateaus of two sweeps minutes apart (the Zen 3 guest):
/// each level's combined plateau is what both put on it, inside each one's.
#[test]
fn two_real_sweeps_combine_where_they_agree() {
    use memlat::experiments::plateaus::MeasuredLevels;
    let sweeps: Vec<MeasuredLevels> =
        ["amd-epyc-zen3-fc-thp-a.json", "amd-epyc-zen3-fc-thp-b.json"]
            .iter()
            .map(|name| {
                let result = SweepResult::load(&fixture(name)).unwrap();
                MeasuredLevels::from_sweep(&result, "remembered").unwrap()
            })
            .collect();
    let (combined, notes) = memlat::experiments::plateau_history::combine(&sweeps).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(combined.levels.len(), 3, "{combined:?}");
    for (k, level) in combined.levels.iter().enumerate() {
        for one in &sweeps {
            let p = &one.levels[k];
            assert!(
                p.from_bytes <= level.from_bytes && level.to_bytes <= p.to_bytes,
                "{level:?} not inside {p:?}"
            );
        }
        let b = level.capacity_bounds.expect("bounds combined");
        let lows: Vec<u64> = sweeps
            .iter()
            .filter_map(|s| s.levels[k].capacity_bounds?.at_least_bytes)
            .collect();
        assert_eq!(b.at_least_bytes, lows.iter().min().copied());
    }
    assert!(combined.measured.contains("2 sweeps combined"));
}

/// The Emerald Rapids guest (issue 36; its README): L1 48 KiB at 1.67 ns,
/// L2 2 MiB at 5.3 ns, an L3 share of about 9-13 MiB at 32-37 ns (sysfs
/// claims 260 MiB), memory 126-145 ns to 512 MiB, a translation climb at 2 GiB.
#[test]
fn intel_emerald_rapids_guest_gives_three_levels() {
    let d = detect("intel-xeon-emr-kvm-thp.json");
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L1", Some((40 * K, 56 * K)), (1.5, 1.8));
    check(&d, "L2", Some((M, 3 * M)), (5.0, 7.0));
    check(&d, "L3", Some((6 * M, 16 * M)), (30.0, 45.0));
    check(&d, "memory", None, (120.0, 150.0));
}

/// A 16-vCPU KVM guest of an Emerald Rapids Xeon (family 6 model 0xCF,
/// sysfs L3 300 MiB; README): three default sweeps within three minutes.
/// An independent full-cycle chase on the same guest read 1.96 ns at 16 KiB,
/// memory (124-129 ns) from 8 MiB on; the L3 share moved between the
/// sweeps (7.5 MiB in two, 3.5 MiB in the third, as other guests' load
/// came and went). Two of three sweeps put the L1's half point at 40 KiB
/// of its 48: recorded, not tuned away.
#[test]
fn intel_emerald_rapids_16_cpu_guest_sweeps_give_three_levels() {
    for name in [
        "intel-xeon-emr-kvm16-2026-11-27-a.json",
        "intel-xeon-emr-kvm16-2026-11-27-b.json",
        "intel-xeon-emr-kvm16-2026-11-27-c.json",
    ] {
        let d = three_caches(
            name,
            [
                ((36 * K, 52 * K), (1.9, 2.3)),
                ((900 * K, 2600 * K), (6.0, 7.2)),
                ((3 * M, 8 * M), (37.0, 46.0)),
            ],
            (120.0, 150.0),
        );
        assert!(
            d.translation.is_some(),
            "{name}: the climb past 300 MiB\n{}",
            describe(&d)
        );
    }
}

/// The same kind of 16-vCPU Emerald Rapids guest a day later, quieter
/// (README): the core at 3.0 GHz, the L3 at 31-36 ns serving about 12.5
/// MiB, memory from 12.8-16.6 MiB. Two back-to-back default sweeps and one
/// on a fresh machine minutes later.
#[test]
fn intel_emerald_rapids_16_cpu_guest_quieter_sweeps_give_three_levels() {
    for name in [
        "intel-xeon-emr-kvm16-2026-11-28-a.json",
        "intel-xeon-emr-kvm16-2026-11-28-b.json",
        "intel-xeon-emr-kvm16-2026-11-28-c.json",
    ] {
        three_caches(
            name,
            [
                ((38 * K, 52 * K), (1.5, 1.8)),
                ((1200 * K, 2600 * K), (5.0, 5.7)),
                ((9 * M, 17 * M), (30.0, 42.0)),
            ],
            (85.0, 130.0),
        );
    }
}

/// This project's Zen 3 guest on a quiet morning (README: two default sweeps
/// of five that all read three levels, 18 s each): L1 32 KiB at 1.3-1.5 ns,
/// L2 at 4.0-4.4 ns serving to about 250-450 KiB, an L3 share at 15-19 ns
/// whose end moved between 2 and 3 MiB in an independent chase (memory
/// from 2.5-4 MiB, 155-215 ns), and a climb past memory that the sweep's
/// page test moved with the page: translation, not a level.
#[test]
fn amd_zen3_kvm_guest_quiet_sweeps_give_three_levels_and_translation() {
    for name in [
        "amd-epyc-zen3-kvm-2026-11-27-a.json",
        "amd-epyc-zen3-kvm-2026-11-27-b.json",
    ] {
        let d = detect(name);
        assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
        check(&d, "L1", Some((28 * K, 40 * K)), (1.2, 1.6));
        check(&d, "L2", Some((250 * K, 560 * K)), (3.9, 4.4));
        check(&d, "L3", Some((1200 * K, 3500 * K)), (14.0, 19.0));
        check(&d, "memory", None, (150.0, 215.0));
        let climb = d
            .translation
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: no climb past memory\n{}", describe(&d)));
        assert_eq!(
            climb.cause,
            Some(memlat::analysis::detect::tail::ClimbCause::Translation),
            "{name}: {climb:?}"
        );
    }
}

#[test]
fn this_zen3_guests_page_test_that_a_grown_share_misled() {
    let path = fixture("amd-epyc-zen3-kvm-2026-11-27-moved-share.json");
    let mut result = SweepResult::load(&path).expect("fixture parses");
    // As recorded (no upper control): the step read as page walks, and
    // memory as the L3's 17 ns. The control now in `sweep` voids such a test.
    let recorded = result.detect().unwrap();
    assert_eq!(
        names(&recorded),
        ["L1", "L2", "memory"],
        "{}",
        describe(&recorded)
    );
    let test = result.page_test.expect("the file has its page test");
    assert!(
        test.memory_here_ns.is_none() && test.memory_ns < 20.0,
        "{test:?}"
    );
    // The curve alone shows the L3 and memory.
    result.page_test = None;
    let d = result.detect().unwrap();
    assert_eq!(names(&d), ["L1", "L2", "L3", "memory"], "{}", describe(&d));
    check(&d, "L3", None, (15.0, 19.0));
    check(&d, "memory", None, (120.0, 200.0));
}

#[test]
fn this_zen3_guests_sweep_whose_l3_share_moved_while_it_measured() {
    // Repeats at 2.6 and 3.3 MiB read both the L3 (17 ns) and memory
    // (153 ns); their medians sat level at about 100 ns. Read as a level,
    // that stretch became memory once the page test (measured in its
    // middle, where 4 KiB pages read memory) "flattened" the step after it.
    let path = fixture("amd-epyc-zen3-kvm-2026-11-27-mixture.json");
    let mut result = SweepResult::load(&path).expect("fixture parses");
    for with_test in [true, false] {
        if !with_test {
            result.page_test = None;
        }
        let d = result.detect().unwrap();
        assert_eq!(
            names(&d),
            ["L1", "L2", "L3", "memory"],
            "page test {with_test}: {}",
            describe(&d)
        );
        check(&d, "memory", None, (140.0, 190.0));
        assert!(
            d.notes.iter().any(|n| n.contains("looks level")),
            "page test {with_test}: {}",
            describe(&d)
        );
    }
}
