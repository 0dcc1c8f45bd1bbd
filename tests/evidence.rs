//! The raw evidence of the machines memlat was developed on
//! (tests/fixtures/evidence/, described in its README), read again by the
//! verdicts as they are now: a rule that changes must still read these
//! right. Each file is a command's JSON kept as it came out.

use std::path::{Path, PathBuf};

use memlat::analysis::linesize::{self, PairPoint, TagPoint, TagReferences};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence")
        .join(name)
}

fn load(name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

/// The levels the detector reads now in the sweep fixture `name`.
fn detected(name: &str) -> memlat::analysis::detect::Detection {
    memlat::experiments::sweep::SweepResult::load(&fixture(name))
        .unwrap()
        .detect()
        .unwrap()
}

/// The Zen 3 guest (AMD EPYC, family 0x19 model 0x1): every pass's line-tag
/// table reads 64-byte lines from the raw tables, at the default 1 MiB
/// (an L3 lone load) and at 512 MiB (memory), and the pairs read the whole
/// line arriving at once with the next line coming with the miss.
#[test]
fn the_zen3_guests_tags_read_64_byte_lines() {
    for name in [
        "amd-epyc-zen3-fc-linesize.json",
        "amd-epyc-zen3-fc-linesize-512m.json",
    ] {
        // One cycle of the guest's 3.1 GHz core.
        for (line, fill) in passes_read_again(name, 1.0 / 3.1) {
            assert_eq!(line.line_bytes, Some(64), "{name}: {line:?}");
            assert_ne!(fill.chunk_bytes, Some(32), "{name}: {fill:?}");
        }
    }
}

/// Each pass of a linesize fixture read again: the line from its tags, the
/// fill from its pairs (`cycle_ns`: one core cycle).
fn passes_read_again(
    name: &str,
    cycle_ns: f64,
) -> Vec<(linesize::TagReading, linesize::FillReading)> {
    let v = load(name);
    v["readings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pass| {
            let tags: Vec<TagPoint> = serde_json::from_value(pass["tags"].clone()).unwrap();
            let refs: TagReferences = serde_json::from_value(pass["tag_refs"].clone()).unwrap();
            let pairs: Vec<PairPoint> = serde_json::from_value(pass["pairs"].clone()).unwrap();
            let lone = pass["lone_ns"].as_f64().unwrap();
            (
                linesize::read_tags(&tags, refs),
                linesize::read_fill(&pairs, 64, lone, cycle_ns),
            )
        })
        .collect()
}

/// The same guest's `assoc --levels 1`: 1-8 lines 4 KiB apart read
/// 1.29-1.40 ns, 9 lines 7.2, 10-18 lines 4.8-5.2 (its L2 at 4.1): 8 ways,
/// as AMD documents for Zen 3's L1d, by the any-policy bound.
#[test]
fn the_zen3_guests_l1_set_reads_8_ways() {
    let v = load("amd-epyc-zen3-fc-assoc-l1.json");
    let level = &v["levels"][0];
    let points: Vec<memlat::analysis::assoc::AssocPoint> =
        serde_json::from_value(level["points"].clone()).unwrap();
    let (hit, miss) = (
        level["hit_ns"].as_f64().unwrap(),
        level["miss_ns"].as_f64().unwrap(),
    );
    let e = memlat::analysis::assoc::estimate_ways(&points, hit, miss);
    assert_eq!(e.ways, Some(8), "{e:?}");
}

/// The same guest's default sweep while three builds ran: the detector
/// still reads three caches and memory (the L3 share was down to about
/// 1.6 MiB that minute: other tenants and the builds took the rest).
#[test]
fn the_zen3_guests_busy_sweep_reads_three_caches() {
    let d = detected("amd-epyc-zen3-fc-sweep-busy.json");
    let names: Vec<&str> = d.levels.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        ["L1", "L2", "L3", "memory"],
        "{}",
        memlat::output::detect::table(&d)
    );
}

/// A quick characterize's sweep on the same guest (stop 46) whose L2 edge
/// paused at 11 ns over 367-543 KiB (about half the loads missing the
/// 512 KiB L2, which an SMT sibling on the host shares), taken for a level
/// of its own: 1 of 5 quick runs. Not yet told apart by any rule (see the
/// README); what must hold meanwhile is that the report says so: the two
/// first levels and memory are right, and a cache count beyond sysfs's is
/// named in a note.
#[test]
fn the_zen3_guests_split_l2_edge_is_said_when_read_as_a_level() {
    let d = detected("amd-epyc-zen3-kvm-quick-sweep-l2-share.json");
    let table = memlat::output::detect::table(&d);
    let ns: Vec<f64> = d.levels.iter().map(|l| l.latency_ns).collect();
    assert!(
        (1.2..1.6).contains(&ns[0]) && (3.8..4.6).contains(&ns[1]),
        "{table}"
    );
    let memory = d.levels.last().unwrap();
    assert!(
        memory.name == "memory" && (140.0..200.0).contains(&memory.latency_ns),
        "{table}"
    );
    if d.levels.len() > 4 {
        assert!(
            d.notes.iter().any(|n| n.contains("where sysfs lists 3")),
            "{table}\n{:#?}",
            d.notes
        );
    }
}

/// The Zen 4 guest (AMD EPYC, family 0x19 model 0x11; sysfs L1d 32 KiB,
/// L2 1 MiB, L3 32 MiB): the tags read 64-byte lines at the default size
/// (2 MiB, twice the L2: an L3 lone load) and at 512 MiB (memory), and the
/// pairs the whole line at once, the next line coming with the miss.
#[test]
fn the_zen4_guests_tags_read_64_byte_lines_arriving_whole() {
    // One cycle of the guest's 3.6 GHz core.
    lines_of_64_bytes_arriving_whole(
        &[
            "amd-epyc-zen4-kvm-linesize.json",
            "amd-epyc-zen4-kvm-linesize-512m.json",
        ],
        1.0 / 3.6,
    );
}

/// Every pass of each linesize fixture reads 64-byte lines by the tags and
/// no 32-byte fill, and at least two of three the whole line at once
/// (`cycle_ns`: one core cycle). Returns each pass's fill.
fn lines_of_64_bytes_arriving_whole(names: &[&str], cycle_ns: f64) -> Vec<linesize::FillReading> {
    let mut fills = Vec::new();
    for name in names {
        let mut whole = 0;
        for (line, fill) in passes_read_again(name, cycle_ns) {
            assert_eq!(line.line_bytes, Some(64), "{name}: {line:?}");
            assert_ne!(fill.chunk_bytes, Some(32), "{name}: {fill:?}");
            whole += usize::from(fill.chunk_bytes == Some(64));
            fills.push(fill);
        }
        assert!(whole >= 2, "{name}: the whole line in {whole} passes");
    }
    fills
}

/// The same guest's `assoc` with no flags: the L1 reads 8 ways (AMD
/// documents 8); lines 128 KiB and 2 MiB apart fill the L1's set at 9
/// lines and then hit the L2 up to 18 and 34 lines, so neither the L2 nor
/// the L3 shows ways of its own (guest huge pages need not be host huge
/// pages): no number is read for them.
#[test]
fn the_zen4_guests_assoc_reads_8_l1_ways_and_no_l2_or_l3_number() {
    assert_eq!(
        ways_read_again("amd-epyc-zen4-kvm-assoc.json"),
        [Some(8), None, None]
    );
}

/// Each level's ways in an `assoc` fixture, read again from its points.
fn ways_read_again(name: &str) -> Vec<Option<u64>> {
    let v = load(name);
    v["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|level| {
            let points: Vec<memlat::analysis::assoc::AssocPoint> =
                serde_json::from_value(level["points"].clone()).unwrap();
            let (hit, miss) = (
                level["hit_ns"].as_f64().unwrap(),
                level["miss_ns"].as_f64().unwrap(),
            );
            memlat::analysis::assoc::estimate_ways(&points, hit, miss).ways
        })
        .collect()
}

/// The same guest's `tlb`: every pass reads the L1 dTLB at 70-72 entries
/// with 4 KiB and with 2 MiB pages, and the bracket holds CPUID's 72.
#[test]
fn the_zen4_guests_l1_dtlb_brackets_cpuids_72_entries() {
    l1_dtlb_brackets("amd-epyc-zen4-kvm-tlb.json", 72);
}

/// A `tlb` fixture's page sizes each read again as they read then, its
/// passes agreeing and the first level's bracket holding `documented`.
fn l1_dtlb_brackets(name: &str, documented: u64) {
    let v = load(name);
    for page in v["page_bytes"].as_array().unwrap() {
        let mut r: memlat::experiments::tlb::TlbPageResult =
            serde_json::from_value(page.clone()).unwrap();
        let (levels, readings) = (r.levels.clone(), r.readings.clone());
        r.levels.clear();
        r.readings.clear();
        r.notes.clear();
        memlat::experiments::tlb::conclude(&mut r, 0.0);
        assert_eq!(r.readings, readings, "{name}: {}", r.page_bytes);
        let first = &r.levels[0];
        assert_eq!(first.name, levels[0].name);
        let [lo, hi] = first.entries_bracket;
        assert!(
            r.agree && lo <= documented && documented <= hi,
            "{name}: {}: {first:?}",
            r.page_bytes
        );
    }
}

/// The Zen 5 guest (AMD EPYC, family 0x1a model 0x2; sysfs L1d 48 KiB
/// 12-way, L2 1 MiB 16-way, L3 32 MiB): the tags read 64-byte lines at the
/// default size (an L3 lone load, 13 ns) and at 512 MiB (memory, 157 ns),
/// and the pairs the whole line at once, the next line coming with the
/// miss (4 ns after in the L3, 21 from memory). Issue 36 named this core's
/// next-line gap as the one no pair-test constant tells from Emerald
/// Rapids' second half; the tags do not need one.
#[test]
fn the_zen5_guests_tags_read_64_byte_lines_arriving_whole() {
    // One cycle of the guest's 4.2 GHz core.
    let fills = lines_of_64_bytes_arriving_whole(
        &[
            "amd-epyc-zen5-kvm-linesize.json",
            "amd-epyc-zen5-kvm-linesize-512m.json",
        ],
        1.0 / 4.2,
    );
    for fill in fills {
        assert_eq!(fill.next_line_with_miss, Some(true), "{fill:?}");
    }
}

/// The Zen 5 guest's `assoc` with no flags (21 s): 1-12 lines 4 KiB apart
/// hit the L1 at 0.94 ns, 13 and more the L2 at 3.3: 12 ways (sysfs: 12).
/// Lines 64 KiB and 2 MiB apart fill the same L1 set and then hit the L2
/// up to 34 lines: no L2 or L3 number, as on the Zen 4 guest.
#[test]
fn the_zen5_guests_assoc_reads_12_l1_ways_and_no_l2_or_l3_number() {
    assert_eq!(
        ways_read_again("amd-epyc-zen5-kvm-assoc.json"),
        [Some(12), None, None]
    );
}

/// The Zen 5 guest's `tlb`: 3 of 3 passes read the L1 dTLB at 99 entries
/// with 4 KiB pages and 100 with 2 MiB ones, brackets 91..108 holding the
/// 96 AMD documents for Zen 5.
#[test]
fn the_zen5_guests_l1_dtlb_brackets_amds_96_entries() {
    l1_dtlb_brackets("amd-epyc-zen5-kvm-tlb.json", 96);
}

/// One `characterize --quick` sweep of the Zen 4 guest (1 of 5 that hour)
/// whose L2 edge paused at 8.3-8.5 ns over 706-860 KiB (about 40% of the
/// loads missing the 1 MiB L2, as on the Zen 3 guest above), while the L3
/// share served only 1.5-2.6 MiB at 13-14 ns before memory. The detector
/// takes the pause for the L3 (8.3 ns, 2.7 MiB): the count of caches is
/// right, the third one's latency is the pause's. What must hold until a
/// rule tells a pause from a level: L1, L2 and memory right, three caches.
#[test]
fn the_zen4_guests_l2_pause_is_read_with_the_right_neighbours() {
    let d = detected("amd-epyc-zen4-kvm-quick-sweep-l2-pause.json");
    let table = memlat::output::detect::table(&d);
    let names: Vec<&str> = d.levels.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["L1", "L2", "L3", "memory"], "{table}");
    let ns: Vec<f64> = d.levels.iter().map(|l| l.latency_ns).collect();
    assert!(
        (1.0..1.4).contains(&ns[0]) && (3.7..4.3).contains(&ns[1]),
        "{table}"
    );
    assert!((110.0..200.0).contains(&ns[3]), "{table}");
}
