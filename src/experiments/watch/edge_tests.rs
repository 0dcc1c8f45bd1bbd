//! The edge's rules on made-up readings.

use super::*;

const MIB: u64 = 1 << 20;
/// L3 and memory, as a guest's watch reads them.
const L: f64 = 20.0;
const M: f64 = 130.0;

/// The latency a window reads with a share `h` of hits.
fn ns(h: f64) -> f64 {
    h * L + (1.0 - h) * M
}

/// `h` of a full-cycle walk of `s` under random replacement of `c`.
fn random_h(s: f64, c: f64) -> f64 {
    if s <= c {
        return 1.0;
    }
    // h = exp(-(1 - h) s / c): the root below 1, by fixed-point
    // iteration from 0 (it converges there, not to h = 1).
    (0..2000).fold(0.0, |h, _| (-(1.0 - h) * s / c).exp())
}

fn mib(b: u64) -> f64 {
    b as f64 / MIB as f64
}

/// Whether `got` bytes lie within `share` of `want` MiB.
fn near(got: u64, want: f64, share: f64) -> bool {
    (mib(got) - want).abs() <= share * want
}

#[test]
fn under_lru_the_edge_lies_between_the_probes_either_side_of_the_cliff() {
    let sizes = [4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB];
    // A 12 MiB cliff: 4 and 8 MiB hit, 16 and 32 miss (a few ns of noise).
    let r = edge_reading(&sizes, &[ns(1.0), 19.5, 128.0, ns(0.0)], L, M).unwrap();
    assert_eq!(r.bracket, [Some(8 * MIB), Some(16 * MIB)]);
    let edge = r.edge_bytes().unwrap();
    assert!((8 * MIB..16 * MIB).contains(&edge), "{edge}");
    assert_eq!(r.served_bytes, 8 * MIB);
    assert_eq!(r.hit[0], Some(1.0));
    assert!(r.hit[2].unwrap() < 0.05);
    // A ns above the level's reference is within the drift watch
    // cannot tell from none (MIN_SHIFT): the probe is served whole.
    let r = edge_reading(&sizes, &[ns(1.0), 21.0, 128.0, ns(0.0)], L, M).unwrap();
    assert_eq!(r.served_bytes, 8 * MIB);
    // Three ns above it (15%) are misses, 3 in 110: still served more
    // than half, so the edge stays past 8 MiB.
    let r = edge_reading(&sizes, &[ns(1.0), 23.0, 128.0, ns(0.0)], L, M).unwrap();
    assert_eq!(r.bracket, [Some(8 * MIB), Some(16 * MIB)]);
    // Every probe served: at least the largest.
    let all = edge_reading(&sizes, &[L; 4], L, M).unwrap();
    assert_eq!(
        (all.edge_bytes(), all.bracket),
        (Some(32 * MIB), [Some(32 * MIB), None])
    );
    // None served: below the smallest, whatever noise h S gives.
    let none = edge_reading(&sizes, &[125.0, M, M, M], L, M).unwrap();
    assert_eq!(none.bracket, [None, Some(4 * MIB)]);
    assert_eq!(none.edge_bytes(), None);
    assert!(none.served_bytes < 4 * MIB);
}

#[test]
fn under_random_replacement_the_edge_is_where_half_the_loads_are_served() {
    let c = 12.5;
    let sizes = [8 * MIB, 14 * MIB, 20 * MIB, 35 * MIB];
    let readings: Vec<f64> = sizes.iter().map(|&s| ns(random_h(mib(s), c))).collect();
    let r = edge_reading(&sizes, &readings, L, M).unwrap();
    // h = 1/2 at 2 ln 2 C = 1.39 C = 17.3 MiB, between 14 and 20.
    assert_eq!(r.bracket, [Some(14 * MIB), Some(20 * MIB)]);
    let edge = r.edge_bytes().unwrap();
    assert!(near(edge, 2.0 * 2f64.ln() * c, 0.05), "{}", mib(edge));
    // What the level held: about C (14 MiB = 1.12 C holds 0.91 C).
    assert!((0.88 * c..=c).contains(&mib(r.served_bytes)));
    // The facts the doc states.
    assert!((random_h(1.5 * c, c) * 1.5 - 0.63).abs() < 0.01);
    assert!((random_h(2.0 * c, c) * 2.0 - 0.41).abs() < 0.01);
    assert!((random_h(2.0 * 2f64.ln() * c, c) - 0.5).abs() < 0.01);
}

#[test]
fn under_adaptive_insertion_the_edge_is_twice_what_the_level_keeps() {
    // h = C / S for S > C, a half at 2 C: over the Intel guest's probes
    // (14.7-35.3 MiB) 25 MiB, between 20 and 26 MiB; the level held C.
    let c = 12.5;
    let sizes = [15413248, 20971520, 27262976, 37014016];
    let readings: Vec<f64> = sizes.iter().map(|&s| ns(c / mib(s))).collect();
    let r = edge_reading(&sizes, &readings, L, M).unwrap();
    assert_eq!(r.bracket, [Some(20971520), Some(27262976)]);
    let edge = r.edge_bytes().unwrap();
    assert!(near(edge, 2.0 * c, 0.05), "{}", mib(edge));
    assert!((mib(r.served_bytes) - c).abs() < 0.01, "{}", r.served_bytes);
}

#[test]
fn a_neighbour_shrinking_the_share_shrinks_the_edge() {
    let sizes = [4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB];
    // Adaptive, 12 MiB alone (a half at 24), 6 MiB while a neighbour
    // streams (a half at 12; memory slower too: the references move
    // with it).
    let alone: Vec<f64> = sizes
        .iter()
        .map(|&s| ns((12.0 / mib(s)).min(1.0)))
        .collect();
    let r = edge_reading(&sizes, &alone, L, M).unwrap();
    assert!(near(r.edge_bytes().unwrap(), 24.0, 0.1));
    assert_eq!(r.bracket, [Some(16 * MIB), Some(32 * MIB)]);
    let m = 160.0;
    let shared: Vec<f64> = sizes
        .iter()
        .map(|&s| {
            let h = (6.0 / mib(s)).min(1.0);
            h * L + (1.0 - h) * m
        })
        .collect();
    let r = edge_reading(&sizes, &shared, L, m).unwrap();
    assert!(near(r.edge_bytes().unwrap(), 12.0, 0.1));
    assert_eq!(r.bracket, [Some(8 * MIB), Some(16 * MIB)]);
    // The level's own middle no longer served: no edge this interval.
    assert_eq!(edge_reading(&sizes, &shared, 120.0, m), None);
    // A probe with no reading is left out.
    let r = edge_reading(&sizes, &[L, f64::NAN, M, M], L, M).unwrap();
    assert_eq!(r.hit[1], None);
    assert_eq!(r.bracket, [Some(4 * MIB), Some(16 * MIB)]);
    assert_eq!(r.served_bytes, 4 * MIB);
    assert_eq!(edge_reading(&sizes, &[f64::NAN; 4], L, M), None);
}

#[test]
fn the_settle_pass_says_when_the_edge_is_outside_the_sweeps_bounds() {
    let sizes = [15413248, 20971520, 27262976, 37014016];
    let lru = edge_reading(&sizes, &[128.0, M, M, 131.0], L, M).unwrap();
    let check = settle_check(
        "L3",
        Some(&lru),
        Some(sizes[0]),
        Some(sizes[0]),
        Some(sizes[3]),
    );
    assert_eq!(check.agrees, Some(false));
    assert!(check.note.contains("<14.7 MiB"), "{}", check.note);
    assert!(
        check.note.contains("under the sweep's pooled bounds"),
        "{}",
        check.note
    );
    let inside = edge_reading(&sizes, &[L, ns(0.9), M, M], L, M).unwrap();
    let check = settle_check(
        "L3",
        Some(&inside),
        Some(sizes[0]),
        Some(sizes[0]),
        Some(sizes[3]),
    );
    assert_eq!(check.agrees, Some(true), "{}", check.note);
    // The largest probe served whole: the sweep said none is from there on.
    let all = edge_reading(&sizes, &[L; 4], L, M).unwrap();
    let check = settle_check(
        "L3",
        Some(&all),
        Some(sizes[0]),
        Some(sizes[0]),
        Some(sizes[3]),
    );
    assert_eq!(check.agrees, Some(false));
    assert!(check.note.contains(">=35.3 MiB"), "{}", check.note);
    assert!(check.note.contains("over the sweep's"), "{}", check.note);
    // The 16-vCPU Emerald Rapids guest's settle pass: 53% of the
    // smallest probe (the sweeps' at-least, 7.3 MiB) served and little
    // of the next: the edge lies between them, within the bounds, where
    // the largest h S (3.9 MiB) read under them.
    let erp = [7_654_400, 7_733_248, 7_812_096, 7_969_177];
    let r = edge_reading(&erp, &[ns(0.53), ns(0.1), ns(0.05), ns(0.02)], L, M).unwrap();
    assert!(mib(r.served_bytes) < 4.0);
    let check = settle_check("L3", Some(&r), Some(erp[0]), Some(erp[0]), Some(erp[3]));
    assert_eq!(check.agrees, Some(true), "{}", check.note);
    // No bounds: nothing to check; no reading: said so.
    assert_eq!(
        settle_check("L3", Some(&all), None, None, None).agrees,
        None
    );
    assert_eq!(settle_check("L3", None, None, Some(1), None).agrees, None);
}

#[test]
fn a_miss_costs_what_the_miss_probe_reads_where_it_lies_between_the_level_and_memory() {
    let (level, memory) = (15.0, 180.0);
    // The miss probe at the probes' footprint (140) is the miss.
    assert_eq!(miss_reference(140.0, level, memory), 140.0);
    // None (an old plan), or one the level served (a reading within
    // REFERENCE_GAP of its middle): the memory probe.
    assert_eq!(miss_reference(f64::NAN, level, memory), memory);
    assert_eq!(miss_reference(16.0, level, memory), memory);
    // Slower than memory (a blip in its window): the memory probe.
    assert_eq!(miss_reference(200.0, level, memory), memory);
    // Against the footprint's own miss the 60 ns probe is served 2/3,
    // against the memory probe's 3/4: nearer a miss than it looked.
    let h = |miss: f64| hit_fraction(60.0, level, miss_reference(miss, level, memory)).unwrap();
    assert!((h(140.0) - 80.0 / 125.0).abs() < 1e-9, "{}", h(140.0));
    assert!(
        (h(f64::NAN) - 120.0 / 165.0).abs() < 1e-9,
        "{}",
        h(f64::NAN)
    );
}

/// The row-6 draw of the catalogue (tests/machines) that a cold probe's
/// reading broke: a 96 MiB L3, probes of 60-101 MiB, the largest walked
/// less than a cycle and read at 59 ns, a third of it still served. As
/// the miss it put the edge at 84 MiB where every whole interval read 94;
/// the miss probe's reading (the level serving none of it) keeps 94.
#[test]
fn a_cold_probe_the_level_partly_served_does_not_move_the_edge() {
    use Walk::{Cold, Whole};
    let sizes = [62_505_856, 74_453_120, 88_683_968, 105_634_816];
    let (level, memory) = (10.9, 81.1);
    let whole = edge_reading(&sizes, &[14.5, 20.6, 35.1, 52.0], level, memory).unwrap();
    let walks = [Whole, Whole, Whole, Cold];
    let cold = [14.5, 20.6, 35.1, 59.0];
    let read = interval_edge(&sizes, &cold, &walks, (level, memory), 80.0).unwrap();
    assert_eq!(read.bracket, [Some(88_683_968), None], "{read:?}");
    let half = whole.half_bytes as f64;
    assert!(half > 88_683_968.0, "{whole:?}");
    // Its half lies at least as high as the whole interval's did.
    assert!(read.half_bytes >= 88_683_968, "{read:?}");
    // The old rule, the cold reading as the miss: under 85 MiB.
    let old = interval_edge(&sizes, &cold, &walks, (level, memory), 59.0).unwrap();
    assert!(
        (old.half_bytes as f64) < half / 1.1,
        "{old:?} against {half}"
    );
}

#[test]
fn a_walk_is_whole_at_its_cycles_cold_under_one() {
    assert_eq!(Walk::of(200, 100, 2), Walk::Whole);
    assert_eq!(Walk::of(199, 100, 2), Walk::Partial);
    assert_eq!(Walk::of(100, 100, 2), Walk::Partial);
    assert_eq!(Walk::of(99, 100, 2), Walk::Cold);
    // The settle pass: one cycle is whole.
    assert_eq!(Walk::of(100, 100, 1), Walk::Whole);
    assert_eq!(Walk::of(0, 0, 2), Walk::Whole);
}

#[test]
fn a_probe_walked_short_of_its_cycles_counts_only_when_served() {
    let (level, memory) = (15.0, 150.0);
    // 2.6 MiB walked whole and served; 4.9 MiB walked whole and
    // missing; 9.1 MiB walked short and missing; 16.8 MiB walked short
    // and served more than half.
    use Walk::{Cold, Partial, Whole};
    let ns = [16.0, 120.0, 140.0, 60.0];
    let read = judged(&ns, &[Whole, Whole, Cold, Cold], level, memory);
    assert_eq!(read[..2], ns[..2]);
    assert!(read[2].is_nan());
    assert_eq!(read[3], 60.0);
    // Walked a cycle or more but short of whole: the same.
    let partial = judged(&ns, &[Whole, Whole, Partial, Partial], level, memory);
    assert!(partial[2].is_nan() && partial[3] == 60.0);
    // The edge then lies between the two whole probes, not below the
    // short one's miss.
    let sizes = [2_683_328, 4_948_992, 9_127_808, 16_834_944];
    let r = edge_reading(&sizes, &read, level, memory).unwrap();
    assert_eq!(r.bracket, [Some(2_683_328), Some(4_948_992)]);
    assert!(r.hit[2].is_none());
    // Walked short and missing everywhere: no probe says where the
    // level stops, and no edge is read.
    let short = judged(&[140.0; 4], &[Cold; 4], level, memory);
    assert!(edge_reading(&sizes, &short, level, memory).is_none());
}

#[test]
fn a_level_that_does_not_serve_its_own_middle_is_read_against_the_settle_pass() {
    // A stream beside the Zen 4 guest's watch: the middle 173 ns and
    // memory 414 against the settle pass's 14 and 170.
    let settle = Some((14.0, 170.0));
    assert_eq!(references((173.0, 414.0), settle), (14.0, 170.0));
    let sizes = [2 * MIB + MIB / 2, 5 * MIB, 10 * MIB, 20 * MIB];
    let probes = [166.0, 162.0, 175.0, 200.0];
    let whole = [Walk::Whole, Walk::Whole, Walk::Cold, Walk::Cold];
    let (level, memory) = references((173.0, 414.0), settle);
    let read = interval_edge(&sizes, &probes, &whole, (level, memory), 200.0).unwrap();
    assert_eq!(read.edge_bytes(), None, "below the smallest: {read:?}");
    // Its own pair would have read every probe served.
    let own = interval_edge(&sizes, &probes, &whole, (173.0, 414.0), 200.0).unwrap();
    assert_eq!(own.bracket, [Some(20 * MIB), None], "{own:?}");
    // A middle served, if slower (a host's blip): the interval's memory,
    // and the lesser reading of a hit; a faster one is the interval's own.
    assert_eq!(references((35.0, 180.0), settle), (14.0, 180.0));
    assert_eq!(references((12.0, 180.0), settle), (12.0, 180.0));
    // No settle pair (it did not hold): the interval's own.
    assert_eq!(references((173.0, 414.0), None), (173.0, 414.0));
}

#[test]
fn the_settle_pass_is_trusted_only_where_the_sweep_says_its_middle_was_served() {
    let swept = Some((14.0, 170.0));
    // A quiet settle pass: its own pair.
    assert_eq!(
        trusted_references(Some((15.0, 180.0)), swept),
        Some((15.0, 180.0))
    );
    // Beside a build on both CPUs: a middle at 120 ns is a miss by the sweep's pair.
    assert_eq!(trusted_references(Some((120.0, 216.0)), swept), swept);
    // A pair that does not hold is no reference; either alone serves.
    assert_eq!(trusted_references(Some((120.0, 130.0)), swept), swept);
    assert_eq!(
        trusted_references(Some((15.0, 180.0)), None),
        Some((15.0, 180.0))
    );
    assert_eq!(trusted_references(None, swept), swept);
    assert_eq!(trusted_references(None, None), None);
    // And an interval's middle at 126 ns is then read against the sweep's.
    let trusted = trusted_references(Some((120.0, 216.0)), swept);
    assert_eq!(references((126.0, 216.0), trusted), (14.0, 170.0));
}
