use super::*;

fn sweep(line: u64, hit: f64, miss: f64, noise: f64) -> Vec<StridePoint> {
    [8u64, 16, 32, 64, 128, 256]
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let frac = s.min(line) as f64 / line as f64;
            let jitter = 1.0 + noise * if i.is_multiple_of(2) { 1.0 } else { -1.0 };
            StridePoint {
                stride: s,
                ns: (hit + (miss - hit) * frac) * jitter,
            }
        })
        .collect()
}

#[test]
fn finds_64_and_128_byte_lines() {
    assert_eq!(estimate(&sweep(64, 1.1, 4.0, 0.02)).line_bytes, Some(64));
    assert_eq!(estimate(&sweep(128, 1.1, 4.0, 0.02)).line_bytes, Some(128));
    assert_eq!(estimate(&sweep(32, 1.1, 4.0, 0.0)).line_bytes, Some(32));
}

#[test]
fn this_machines_page_random_sweeps_give_64() {
    let at = |ns: [f64; 6]| -> Vec<StridePoint> {
        [8u64, 16, 32, 64, 128, 256]
            .iter()
            .zip(ns)
            .map(|(&stride, ns)| StridePoint { stride, ns })
            .collect()
    };
    // 8 MiB (memory here): doubling up to 64 bytes, then a region prefetch dip.
    let e = estimate(&at([11.0, 22.05, 42.3, 92.1, 38.6, 74.5]));
    assert_eq!(e.line_bytes, Some(64), "{e:?}");
    assert!(e.growth > 5.0);
    // 128 KiB (L2): a smaller contrast.
    let e = estimate(&at([1.373, 1.464, 1.978, 2.665, 2.324, 2.670]));
    assert_eq!(e.line_bytes, Some(64), "{e:?}");
}

fn pairs(second: [f64; 6], miss: f64, spread: f64) -> Vec<PairPoint> {
    [8u64, 16, 32, 64, 128, 256]
        .iter()
        .zip(second)
        .map(|(&d, s)| {
            PairPoint::of(d, (miss + s) / 2.0, miss).with_spread(spread / 3.0, spread / 3.0)
        })
        .collect()
}

fn tags(ns: [f64; 6], spread: f64) -> Vec<TagPoint> {
    [8u64, 16, 32, 64, 128, 256]
        .iter()
        .zip(ns)
        .map(|(&distance, ns)| TagPoint {
            distance,
            ns,
            spread_ns: spread,
        })
        .collect()
}

fn refs(dropped_ns: f64, kept_ns: f64, spread: f64) -> TagReferences {
    TagReferences {
        dropped_ns,
        dropped_spread_ns: spread,
        kept_ns,
        kept_spread_ns: spread,
    }
}

#[test]
fn the_line_is_the_first_distance_that_survives_dropping_x() {
    // 64-byte lines flushed to DRAM (130 ns), kept ones L1 hits (1.7 ns).
    let r = read_tags(
        &tags([131.0, 128.0, 133.0, 1.8, 1.7, 1.9], 3.0),
        refs(130.0, 1.7, 2.0),
    );
    assert_eq!(r.line_bytes, Some(64), "{r:?}");
    // 128-byte lines under eviction: L2 hits (4.5 ns) against L1 (1.2).
    let r = read_tags(
        &tags([4.4, 4.6, 4.5, 4.3, 1.3, 1.2], 0.3),
        refs(4.5, 1.2, 0.3),
    );
    assert_eq!(r.line_bytes, Some(128), "{r:?}");
    // 32-byte lines.
    let r = read_tags(
        &tags([90.0, 88.0, 1.0, 1.1, 1.0, 1.0], 2.0),
        refs(90.0, 1.0, 1.0),
    );
    assert_eq!(r.line_bytes, Some(32), "{r:?}");
}

#[test]
fn no_line_where_the_tags_cannot_place_one() {
    // No contrast (a flush an emulator ignores).
    let r = read_tags(&tags([1.0; 6], 0.1), refs(1.05, 1.0, 0.1));
    assert_eq!(r.line_bytes, None);
    assert!(r.notes[0].contains("did not take"), "{r:?}");
    // Every distance dropped: the line is beyond 256.
    let r = read_tags(&tags([100.0; 6], 1.0), refs(100.0, 1.0, 1.0));
    assert_eq!(r.line_bytes, None);
    assert!(r.notes[0].contains("larger than that"), "{r:?}");
    // X + 8 survived: the drop missed.
    let r = read_tags(&tags([1.0; 6], 0.1), refs(100.0, 1.0, 1.0));
    assert_eq!(r.line_bytes, None);
    assert!(r.notes[0].contains("missed X"), "{r:?}");
    // A dropped load beyond a kept one: noise.
    let r = read_tags(
        &tags([99.0, 1.0, 98.0, 1.0, 1.0, 1.0], 1.0),
        refs(100.0, 1.0, 1.0),
    );
    assert_eq!(r.line_bytes, None);
    assert!(r.notes[0].contains("noise"), "{r:?}");
}

#[test]
fn the_fill_order_is_read_within_the_line_the_tags_gave() {
    // Emerald Rapids' L3 (issue 36): 0.98, 0.72, 3.34, 30.5 ns at 8..64,
    // a lone load 34.2, a cycle 0.33 ns: 32-byte halves, the other half
    // 2.4 ns later, the next line a miss of its own.
    let emr = pairs([0.98, 0.72, 3.34, 30.5, 31.0, 31.5], 34.2, 0.3);
    let f = read_fill(&emr, 64, 34.2, 0.33);
    assert_eq!(f.chunk_bytes, Some(32), "{f:?}");
    assert!((f.rest_after_ns.unwrap() - 2.36).abs() < 0.1, "{f:?}");
    assert_eq!(f.next_line_with_miss, Some(false), "{f:?}");
    assert!(f.sentence.contains("32-byte chunks"), "{f:?}");
    // Zen 5 (issue 27): the whole line at once, the next line lands
    // 0.8 ns after a lone L3 load of 12 ns.
    let zen5 = pairs([0.9, 0.88, 0.93, 1.7, 1.75, 3.2], 12.0, 0.15);
    let f = read_fill(&zen5, 64, 12.0, 0.23);
    assert_eq!(f.chunk_bytes, Some(64), "{f:?}");
    assert_eq!(f.next_line_with_miss, Some(true), "{f:?}");
    assert!(f.sentence.contains("arrives with this one"), "{f:?}");
    // A 128-byte line arriving whole.
    let f = read_fill(
        &pairs([1.3, 1.3, 1.3, 1.4, 36.0, 37.0], 36.0, 0.1),
        128,
        36.0,
        0.3,
    );
    assert_eq!(f.chunk_bytes, Some(128), "{f:?}");
    // A rise within the line that the next distance does not share: unclear.
    let f = read_fill(
        &pairs([1.0, 3.0, 1.0, 30.0, 30.0, 30.0], 34.0, 0.1),
        64,
        34.0,
        0.3,
    );
    assert_eq!(f.chunk_bytes, None, "{f:?}");
    assert!(f.notes[0].contains("noise"), "{f:?}");
}

#[test]
fn the_spacing_knee_checks_the_line_and_gives_the_fetch_unit() {
    let curve = |ns: [f64; 6]| -> Vec<StridePoint> {
        [8u64, 16, 32, 64, 128, 256]
            .iter()
            .zip(ns)
            .map(|(&stride, ns)| StridePoint { stride, ns })
            .collect()
    };
    // 64-byte lines, page-random latency growing to 128: fetched in pairs.
    let pairs_of_lines = curve([2.0, 3.0, 5.0, 9.0, 15.0, 15.2]);
    assert_eq!(
        cross_check(Some(64), &pairs_of_lines, Some(128)),
        (Some(64), None)
    );
    assert_eq!(fetch_bytes(Some(64), Some(128)), Some(128));
    // A 256-byte line where misses stop costing more at 128: said, kept.
    let flat = curve([2.0, 3.0, 5.0, 9.0, 15.0, 14.8]);
    let (line, why) = cross_check(Some(256), &flat, Some(128));
    assert_eq!(line, Some(256));
    assert!(why.unwrap().contains("disagrees"));
    // A knee below the line that noise put there (the line's latency
    // clearly above the knee's) is no disagreement.
    let noisy = curve([8.0, 7.3, 11.4, 21.1, 6.1, 7.6]);
    assert_eq!(cross_check(Some(64), &noisy, Some(32)), (Some(64), None));
    assert_eq!(cross_check(Some(64), &noisy, None), (Some(64), None));
    assert_eq!(fetch_bytes(Some(64), Some(32)), Some(64));
    assert_eq!(fetch_bytes(None, Some(128)), Some(128));
}

#[test]
fn flat_latency_gives_no_estimate() {
    let e = estimate(&sweep(64, 1.1, 1.15, 0.01));
    assert_eq!(e.line_bytes, None);
    assert!(e.notes[0].contains("prefetchers"));
}

#[test]
fn still_growing_is_said() {
    let e = estimate(&sweep(512, 1.1, 20.0, 0.0));
    assert_eq!(e.line_bytes, Some(128));
    assert!(e.notes[0].contains("still grows"));
    assert_eq!(estimate(&sweep(64, 1.0, 2.0, 0.0)[..2]).line_bytes, None);
}
