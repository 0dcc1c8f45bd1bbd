//! What a watch writes and reads back, on made-up records.

use super::*;

/// An event of `change` over `start..=end` (`None`: lasting), no marks.
fn event(start: usize, end: Option<usize>, change: f64) -> Event {
    Event {
        start: String::new(),
        end: None,
        start_index: start,
        end_index: end,
        before: 1.0,
        after: 1.0 + change,
        change,
        with_l1: None,
        with_memory: None,
    }
}

/// A series of 40 readings in `unit` with `events`.
fn series(name: &str, unit: &str, events: Vec<Event>) -> SeriesSummary {
    SeriesSummary {
        name: name.into(),
        unit: unit.into(),
        readings: 40,
        median: 1.0,
        p5: 1.0,
        p95: 1.0,
        events,
        below: None,
        above: None,
    }
}

#[test]
fn quantiles_interpolate() {
    let v = [1.0, 2.0, 3.0, 4.0, 5.0];
    assert_eq!(quantile(&v, 0.5), 3.0);
    assert_eq!(quantile(&v, 0.0), 1.0);
    assert!((quantile(&v, 0.95) - 4.8).abs() < 1e-12);
    assert!(quantile(&[], 0.5).is_nan());
}

#[test]
fn a_file_cut_by_a_kill_reads_every_whole_line() {
    let text = "{\"kind\":\"watch\",\"record\":\"header\",\"cpu\":0}\n{\"record\":\"interval\",\"index\":0}\n{\"record\":\"interv";
    let v = read_lines(text).unwrap().unwrap();
    assert_eq!(v["intervals"].as_array().unwrap().len(), 1);
    assert!(v["summary"].is_null());
    assert!(v.get("record").is_none());
    // A broken line before the last is damage, not a kill.
    let broken = "{\"kind\":\"watch\",\"record\":\"header\"}\n{\"rec\n{\"record\":\"interval\"}\n";
    assert!(read_lines(broken).unwrap().is_err());
    // Nothing follows the summary.
    let after = "{\"kind\":\"watch\",\"record\":\"header\"}\n{\"record\":\"summary\"}\n{\"record\":\"interval\"}\n";
    let err = read_lines(after).unwrap().unwrap_err();
    assert!(err.contains("line 3: a record after the summary"), "{err}");
    // Not a watch file: left to the ordinary reader.
    assert!(read_lines("{\"kind\":\"run\"}").is_none());
    assert!(read_lines("").is_none());
}

#[test]
fn a_later_level_moving_with_l1_is_marked_the_core() {
    let series = |name: &str, events: Vec<Event>| series(name, "ns", events);
    // This Zen 4 guest, quiet: L1 +15% and L2 +11% over the same two
    // intervals; L2 later, and memory at the end, on their own.
    let mut all = vec![
        series("L1", vec![event(23, Some(24), 0.15)]),
        series("L2", vec![event(24, Some(25), 0.11), event(30, None, 0.12)]),
        series(
            "memory",
            vec![event(20, Some(22), 0.2), event(24, Some(26), -0.2)],
        ),
    ];
    mark_core_events(&mut all, 40);
    assert_eq!(all[1].events[0].with_l1, Some(0.15));
    assert_eq!(all[1].events[1].with_l1, None, "after L1 came back");
    assert_eq!(all[2].events[0].with_l1, None, "before L1 moved");
    assert_eq!(all[2].events[1].with_l1, None, "the other way");
    assert_eq!(all[0].events[0].with_l1, None, "L1 itself");
    // A lasting L1 step covers a later level's event to the end.
    let mut lasting = vec![
        series("L1", vec![event(35, None, 0.12)]),
        series(
            "L3",
            vec![event(38, Some(39), 0.3), event(20, Some(34), 0.3)],
        ),
    ];
    mark_core_events(&mut lasting, 40);
    assert_eq!(lasting[1].events[0].with_l1, Some(0.12));
    assert_eq!(lasting[1].events[1].with_l1, None, "before it");
}

#[test]
fn an_edge_moving_the_way_its_memory_reference_did_is_marked() {
    // A watch of the Zen 4 guest with a random-chase neighbour: memory
    // 2-6x slower from 22, the edge up (+101%) from 21 to 26; a stream
    // neighbour's: memory up, the edge down (-78%), a fall memory's rise
    // cannot explain; and an edge dip when memory did nothing.
    let mut all = vec![
        series("L3", "ns", vec![event(21, Some(23), 0.4)]),
        series(
            "memory",
            "ns",
            vec![event(22, Some(25), 0.85), event(30, None, 0.3)],
        ),
        series(
            "L3 edge",
            "bytes",
            vec![
                event(21, Some(26), 1.01),
                event(15, Some(29), -0.78),
                event(9, Some(12), -0.2),
                event(35, None, 0.4),
            ],
        ),
    ];
    mark_reference_events(&mut all, 40);
    let edge = &all[2].events;
    assert_eq!(edge[0].with_memory, Some(0.85));
    assert_eq!(edge[1].with_memory, None, "the other way");
    assert_eq!(edge[2].with_memory, None, "memory did nothing");
    assert_eq!(edge[3].with_memory, Some(0.3), "a lasting step");
    assert_eq!(all[0].events[0].with_memory, None, "only the edge");
}
