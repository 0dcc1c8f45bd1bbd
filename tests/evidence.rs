//! The raw evidence of the machines memlat was developed on
//! (tests/fixtures/evidence/, described in its README), read again by the
//! verdicts as they are now: a rule that changes must still read these
//! right. Each file is a command's JSON kept as it came out.

use std::path::Path;

use memlat::analysis::linesize::{self, PairPoint, TagPoint, TagReferences};

fn load(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
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
        let v = load(name);
        for pass in v["readings"].as_array().unwrap() {
            let tags: Vec<TagPoint> = serde_json::from_value(pass["tags"].clone()).unwrap();
            let refs: TagReferences = serde_json::from_value(pass["tag_refs"].clone()).unwrap();
            let r = linesize::read_tags(&tags, refs);
            assert_eq!(r.line_bytes, Some(64), "{name}: {r:?}");
            let pairs: Vec<PairPoint> = serde_json::from_value(pass["pairs"].clone()).unwrap();
            let lone = pass["lone_ns"].as_f64().unwrap();
            // One cycle of the guest's 3.1 GHz core.
            let f = linesize::read_fill(&pairs, 64, lone, 1.0 / 3.1);
            assert_ne!(f.chunk_bytes, Some(32), "{name}: {f:?}");
        }
    }
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
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence/amd-epyc-zen3-fc-sweep-busy.json");
    let d = memlat::experiments::sweep::SweepResult::load(&path)
        .unwrap()
        .detect()
        .unwrap();
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
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence/amd-epyc-zen3-kvm-quick-sweep-l2-share.json");
    let d = memlat::experiments::sweep::SweepResult::load(&path)
        .unwrap()
        .detect()
        .unwrap();
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
