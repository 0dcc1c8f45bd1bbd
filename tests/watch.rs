//! `memlat watch`'s file format (JSON lines) read back through the one
//! result reader that `report` and `compare` use: whole, cut by a kill,
//! and two watches compared. The files are made here, from made-up
//! readings, with the same writer and records the command uses.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use memlat::analysis::changepoint::MIN_SHIFT;
use memlat::experiments::plateaus::{LevelSize, MeasuredLevels, Plateau};
use memlat::experiments::watch::record::{Tagged, summarise};
use memlat::experiments::watch::{
    EdgePlan, Interval, WARM_CYCLES, WatchFile, WatchHeader, WatchPlan, edge,
};

fn header() -> WatchHeader {
    let l3 = Plateau {
        name: "L3".into(),
        from_bytes: 2 << 20,
        to_bytes: 4 << 20,
        ns: 16.0,
        capacity_bytes: Some(6 << 20),
        capacity_bounds: None,
    };
    WatchHeader {
        started: "2026-11-25T13:05:00Z".into(),
        cpu: 0,
        plan: WatchPlan {
            levels: vec![
                LevelSize {
                    name: "L3".into(),
                    size: 3 << 20,
                },
                LevelSize {
                    name: "memory".into(),
                    size: 256 << 20,
                },
            ],
            edge: Some(EdgePlan {
                level: "L3".into(),
                sizes: vec![4 << 20, 6 << 20, 9 << 20, 12 << 20],
                between: "made up".into(),
            }),
            interval_s: 1.0,
            duration_s: Some(40.0),
            duty: 0.1,
        },
        plateaus: MeasuredLevels {
            source: "probe".into(),
            file: None,
            measured: "2026-11-25T13:04:00Z".into(),
            levels: vec![l3],
            memory_ns: Some(148.0),
        },
        line: 64,
        kernel: "pointer".into(),
        notes: vec!["made-up readings".into()],
        settle_edge: None,
    }
}

/// 40 intervals: memory at 148 ns, 212 ns from 15 to 24 (a neighbour).
fn intervals(neighbour: bool) -> Vec<Interval> {
    (0..40u64)
        .map(|k| {
            let wobble = [1.0, 1.01, 0.99, 1.005][k as usize % 4];
            let memory = if neighbour && (15..25).contains(&k) {
                212.0
            } else {
                148.0
            };
            Interval {
                index: k,
                t_s: k as f64,
                utc: format!("2026-11-25T13:05:{k:02}Z"),
                ns: vec![16.0 * wobble, memory * wobble],
                edge_ns: vec![16.0, 17.0, 40.0, 140.0],
                edge_miss_ns: Some(140.0),
                edge_bytes: Some(6 << 20),
                edge_hit: vec![Some(1.0), Some(1.0), Some(0.82), Some(0.06)],
                edge_served_bytes: Some(6 << 20),
                edge_bracket_bytes: [Some(6 << 20), Some(9 << 20)],
                edge_warm_cycles: vec![1.0, 1.0, 0.6, 0.2],
                steal: Some(0.0),
                spent_ms: 60.0,
                cpu_ms: Some(55.0),
            }
        })
        .collect()
}

/// Writes a watch file as the command does; `cut` leaves the summary out
/// and half a line at the end, as a kill -9 would.
fn write(path: &Path, neighbour: bool, cut: bool) {
    write_intervals(path, &intervals(neighbour), cut);
}

/// Writes `intervals` as a watch file (see [`write`]).
fn write_intervals(path: &Path, intervals: &[Interval], cut: bool) {
    let header = header();
    let mut text = memlat::output::result_json_line(
        "watch",
        &Tagged {
            record: "header",
            inner: &header,
        },
    )
    .unwrap();
    for i in intervals {
        text += &serde_json::to_string(&Tagged {
            record: "interval",
            inner: i,
        })
        .unwrap();
        text.push('\n');
    }
    if cut {
        text += "{\"record\":\"interval\",\"index\":40,\"t_s\":4";
    } else {
        let summary = summarise(&header, intervals, 40.0, Some(1.2), false);
        text += &serde_json::to_string(&Tagged {
            record: "summary",
            inner: &summary,
        })
        .unwrap();
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

fn memlat() -> Command {
    Command::cargo_bin("memlat").unwrap()
}

fn file(dir: &Path, name: &str, neighbour: bool, cut: bool) -> PathBuf {
    let path = dir.join(name);
    write(&path, neighbour, cut);
    path
}

#[test]
fn a_watch_file_reads_back_whole_with_its_summary_and_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "w.jsonl", true, false);
    let loaded = memlat::cli::inputs::load(std::slice::from_ref(&path)).unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].kind, "watch");
    assert_eq!(
        loaded[0].value["schema_version"],
        memlat::output::SCHEMA_VERSION
    );
    let read: WatchFile = serde_json::from_value(loaded[0].value.clone()).unwrap();
    assert_eq!(read.header, header());
    assert_eq!(read.intervals, intervals(true));
    let summary = read.summary.expect("a complete file has its summary");
    let memory = &summary.series[1];
    assert_eq!(memory.name, "memory");
    assert_eq!(memory.events.len(), 1, "{:?}", memory.events);
    let e = &memory.events[0];
    assert_eq!((e.start_index, e.end_index), (15, Some(24)));
    assert!(summary.series[0].events.is_empty());
    assert_eq!(summary.series[2].name, "L3 edge");
}

#[test]
fn a_killed_watch_reads_back_every_whole_interval_and_gets_its_summary_computed() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "killed.jsonl", true, true);
    let loaded = memlat::cli::inputs::load(std::slice::from_ref(&path)).unwrap();
    let read: WatchFile = serde_json::from_value(loaded[0].value.clone()).unwrap();
    assert_eq!(read.intervals.len(), 40);
    assert!(read.summary.is_none());
    assert_eq!(read.summary().series[1].events.len(), 1);
    // A report of it: the event table names the shift.
    let out = memlat()
        .args(["report", "--format", "markdown"])
        .arg(&path)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("(watch)"), "{text}");
    assert!(text.contains("+43%"), "{text}");
}

#[test]
fn two_watches_compare_per_series() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = file(dir.path(), "quiet.jsonl", false, false);
    let busy = file(dir.path(), "busy.jsonl", true, false);
    let out = memlat()
        .arg("compare")
        .args([&quiet, &busy])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for series in ["L3", "memory", "L3 edge"] {
        assert!(text.contains(series), "{text}");
    }
    let out = memlat()
        .args(["compare", "--format", "json"])
        .args([&quiet, &busy])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        v["summaries"][1]["series"][1]["events"][0]["start_index"],
        15
    );
    assert_eq!(
        v["summaries"][0]["series"][1]["events"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

#[test]
fn a_damaged_watch_file_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "w.jsonl", false, false);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = "{broken";
    std::fs::write(&path, lines.join("\n")).unwrap();
    memlat()
        .arg("report")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("line 4"));
}

#[test]
fn watch_refuses_a_bad_duty_and_interval_naming_the_flag() {
    memlat()
        .args(["watch", "--duty", "2"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--duty"));
    memlat()
        .args(["watch", "--interval", "10ms"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--interval"));
    memlat()
        .args(["watch", "--interval", "1d"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--interval"));
}

#[test]
fn a_watch_whose_edge_never_reached_a_probe_reads_back() {
    // Every interval had the edge below the smallest probe: the edge series
    // has no reading, so its median is NaN, which JSON writes as null.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("below.jsonl");
    let below: Vec<Interval> = intervals(false)
        .into_iter()
        .map(|i| Interval {
            edge_bytes: None,
            ..i
        })
        .collect();
    write_intervals(&path, &below, false);
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("\"median\":null")
    );
    memlat()
        .arg("compare")
        .args([&path, &path])
        .assert()
        .success();
    let html = dir.path().join("below.html");
    memlat()
        .arg("report")
        .arg(&path)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
}

#[test]
fn an_edge_short_of_the_largest_probe_with_the_rest_left_out_reads_as_a_lower_bound() {
    // Served to 6 MiB, the 9 and 12 MiB probes walked short, missed and
    // left out: "at least 6 MiB", never a 6 MiB edge.
    let bounded: Vec<Interval> = intervals(false)
        .into_iter()
        .map(|i| Interval {
            edge_bracket_bytes: [Some(6 << 20), None],
            edge_hit: vec![Some(1.0), Some(1.0), None, None],
            ..i
        })
        .collect();
    let h = header();
    let line = memlat::output::watch::live_line(&h, &bounded, false);
    assert!(line.contains("L3 edge >=6 MiB"), "{line}");
    let summary = summarise(&h, &bounded, 40.0, None, false);
    assert!(
        summary
            .notes
            .iter()
            .any(|n| n.contains("40 of 40 intervals read only a lower bound")),
        "{:?}",
        summary.notes
    );
    // Between two probes read: a placed edge, and no such note.
    let placed = intervals(false);
    assert!(memlat::output::watch::live_line(&h, &placed, false).contains("L3 edge 6 MiB"));
    assert!(summarise(&h, &placed, 40.0, None, false).notes.is_empty());
}

#[test]
fn intervals_that_read_no_edge_are_missing_from_its_events_not_below_every_probe() {
    // Intervals 10-14 read nothing of the edge (every probe left out, or
    // the references did not hold): no fall under the smallest probe.
    let gaps: Vec<Interval> = intervals(false)
        .into_iter()
        .map(|i| match i.index {
            10..=14 => Interval {
                edge_bytes: None,
                edge_hit: Vec::new(),
                edge_served_bytes: None,
                edge_bracket_bytes: [None, None],
                ..i
            },
            _ => i,
        })
        .collect();
    assert!(!gaps[10].edge_read() && gaps[9].edge_read());
    let h = header();
    // The live line claims nothing for it.
    let line = memlat::output::watch::live_line(&h, &gaps[..11], false);
    assert!(line.contains("L3 edge -"), "{line}");
    let summary = summarise(&h, &gaps, 40.0, None, false);
    let edge = summary.series.last().expect("an edge series");
    assert_eq!(edge.name, "L3 edge");
    assert!(edge.events.is_empty(), "{:?}", edge.events);
    // Below the smallest probe, where one was read under half: a fall.
    let below: Vec<Interval> = gaps
        .into_iter()
        .map(|i| match i.index {
            10..=14 => Interval {
                edge_bracket_bytes: [None, Some(4 << 20)],
                edge_served_bytes: Some(1 << 20),
                ..i
            },
            _ => i,
        })
        .collect();
    let line = memlat::output::watch::live_line(&h, &below[..11], false);
    assert!(line.contains("L3 edge <4 MiB"), "{line}");
    let summary = summarise(&h, &below, 40.0, None, false);
    let events = &summary.series.last().expect("an edge series").events;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((events[0].start_index, events[0].end_index), (10, Some(14)));
}

/// A real watch from tests/fixtures/watch (see its README), read through
/// the one result reader, with its summary computed anew from its
/// intervals by today's rules (not the summary it was written with).
fn recorded(name: &str) -> (WatchFile, memlat::experiments::watch::WatchSummary) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/watch")
        .join(name);
    let loaded = memlat::cli::inputs::load(std::slice::from_ref(&path)).unwrap();
    let read: WatchFile = serde_json::from_value(loaded[0].value.clone()).unwrap();
    let wall = read.intervals.last().map_or(0.0, |i| i.t_s);
    let summary = summarise(&read.header, &read.intervals, wall, None, false);
    (read, summary)
}

/// An interval's readings of the watched level's middle and of memory.
fn level_and_memory(read: &WatchFile, i: &Interval) -> (f64, f64) {
    let plan = read.header.plan.edge.as_ref().expect("edge probes");
    let levels = &read.header.plan.levels;
    let level = levels.iter().position(|l| l.name == plan.level);
    (
        i.ns[level.expect("the watched level")],
        i.ns[i.ns.len() - 1],
    )
}

#[test]
fn a_real_quiet_watch_reports_no_event() {
    let (read, summary) = recorded("amd-epyc-zen4-kvm-quiet.jsonl");
    assert_eq!(read.intervals.len(), 40);
    for s in &summary.series {
        assert!(s.events.is_empty(), "{}: {:?}", s.name, s.events);
    }
}

#[test]
fn a_real_neighbour_is_an_event_within_two_intervals_of_it() {
    let (read, summary) = recorded("amd-epyc-zen4-kvm-neighbour.jsonl");
    // The neighbour ran from 15.2 s to 25.2 s after the first interval:
    // intervals 15 to 25. It spent part of that faulting its buffer in
    // (the README), and the L3 was back at its level in 21-22: two
    // excursions, the first from its start, the last to its end.
    let (from, to) = (15usize, 25usize);
    let l3 = summary.series.iter().find(|s| s.name == "L3").unwrap();
    assert!(
        l3.events.iter().any(|e| e.start_index.abs_diff(from) <= 2),
        "{:?}",
        l3.events
    );
    assert!(
        l3.events
            .iter()
            .any(|e| e.end_index.is_some_and(|end| end.abs_diff(to) <= 2)),
        "{:?}",
        l3.events
    );
    // Every event falls inside the neighbour's window, give or take 2.
    for s in &summary.series {
        for e in &s.events {
            let end = e.end_index.unwrap_or(read.intervals.len() - 1);
            assert!(
                e.start_index + 2 >= from && end <= to + 2,
                "{}: {e:?} outside the neighbour",
                s.name
            );
        }
    }
}

/// Three watches with a streaming neighbour on the other vCPU (one core
/// reading 64 MiB in address order at 34-36 GB/s, intervals 15 to 24 or 25;
/// tests/fixtures/watch/README.md): the edge falls from 7-10 MiB to about
/// 4 MiB while it runs, and an edge event starts within two intervals of
/// its start and ends (or a step back starts) within two of its end. The
/// quiet minutes around it move too (the host's other tenants): a dip that
/// came back before the neighbour started, or an overshoot after it, is an
/// event of its own, not a start or end of the neighbour's.
#[test]
fn a_real_streaming_neighbour_is_an_edge_event_within_two_intervals_of_both_ends() {
    for (run, from, to) in [(1, 15usize, 24usize), (2, 15, 24), (3, 15, 25)] {
        let name = format!("amd-epyc-zen4-kvm-stream-neighbour-{run}.jsonl");
        let (_, summary) = recorded(&name);
        let edge = summary
            .series
            .iter()
            .find(|s| s.name == "L3 edge")
            .expect("an edge series");
        let events = &edge.events;
        let fall = events
            .iter()
            .find(|e| e.start_index.abs_diff(from) <= 2 && e.change < -0.3)
            .unwrap_or_else(|| panic!("{name}: no fall at {from}: {events:?}"));
        // Its end: the excursion's last interval away, or the next step's start.
        let end = fall.end_index.or_else(|| {
            events
                .iter()
                .find(|e| e.start_index > fall.start_index && e.change > 0.3)
                .map(|e| e.start_index - 1)
        });
        assert!(
            end.is_some_and(|end| end.abs_diff(to) <= 2),
            "{name}: the fall {fall:?} does not end near {to}: {events:?}"
        );
    }
}

/// The Zen 3 guest's watch (issue 36's done-means, on the machine worked on):
/// the quiet edge lies within the pooled bounds of the two sweeps it took
/// its plateaus from (L3 1.2..3.3 MiB) and below the smallest size at which
/// an independent full-cycle chase read memory that morning (2 MiB at its
/// worst; tests/fixtures/curves/README.md), and the watch cost under 12% of a CPU.
#[test]
fn a_real_zen3_watch_places_the_edge_below_where_a_chase_reads_memory() {
    quiet_edge_within("amd-epyc-zen3-kvm-quiet.jsonl", 1.2..2.0);
}

/// A recorded quiet watch of 40 intervals: its edge median within `mib`
/// (MiB), its measuring under 12% of a CPU.
fn quiet_edge_within(name: &str, mib: std::ops::Range<f64>) {
    let (read, summary) = recorded(name);
    assert_eq!(read.intervals.len(), 40);
    let edge = summary
        .series
        .iter()
        .find(|s| s.name == "L3 edge")
        .expect("an edge series");
    let median = edge.median / (1u64 << 20) as f64;
    assert!(mib.contains(&median), "{name}: edge median {median} MiB");
    let cpu = summary.measuring_cpu_s.expect("CPU time recorded");
    assert!(
        cpu / summary.wall_s < 0.12,
        "{name}: {cpu} s of {} s",
        summary.wall_s
    );
}

/// Five watches on the Zen 5 guest with the same streaming neighbour (64
/// MiB in address order at 47-49 GB/s on the other vCPU, from 15.004 s
/// after the first interval for 10.15 s: intervals 16 to 25;
/// tests/fixtures/watch/README.md): issue 36's done-means, an L3 or edge
/// event within two intervals of its start and of its end. The L3's own
/// latency does it in each run (12 -> 16-17 ns over 16-25), and so does
/// the edge (11.8 MiB to under 6.8): in two runs it read only "at least
/// 6.8 MiB" in 26-27, its larger probe's warm walk growing back by the
/// budget's ratio, which read as a fall lasting to 28 until the events took
/// a lower bound as the reading above it (`bounds::bounds_filled`).
#[test]
fn a_real_zen5_streaming_neighbour_is_an_event_within_two_intervals_of_both_ends() {
    let (from, to) = (16usize, 25usize);
    for run in 1..=5 {
        let name = format!("amd-epyc-zen5-kvm-stream-neighbour-{run}.jsonl");
        let (read, summary) = recorded(&name);
        let last = read.intervals.len() - 1;
        let near_both = |s: &memlat::experiments::watch::SeriesSummary| {
            let starts = s.events.iter().any(|e| e.start_index.abs_diff(from) <= 2);
            // An end: an excursion's last interval, or a step back's start.
            let ends = s.events.iter().any(|e| {
                e.end_index.unwrap_or(last).abs_diff(to) <= 2
                    || (e.start_index > from && e.start_index.abs_diff(to + 1) <= 2)
            });
            starts && ends
        };
        let seen: Vec<&str> = summary
            .series
            .iter()
            .filter(|s| (s.name == "L3" || s.name == "L3 edge") && near_both(s))
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(seen, ["L3", "L3 edge"], "{name}: {:#?}", summary.series);
    }
}

/// The Zen 5 guest's quiet watch: its edge between the smallest and second
/// probe (6.8 and 11.8 MiB; the host's share moving, some intervals under
/// 6.8), within the pooled bounds of the sweeps it was planned from (6.8..
/// 35.3 MiB) and below 12 MiB, where an independent full-cycle chase read
/// memory (126 ns) just after; the watch cost under 12% of a CPU.
#[test]
fn a_real_zen5_watch_places_the_edge_below_where_a_chase_reads_memory() {
    quiet_edge_within("amd-epyc-zen5-kvm-quiet.jsonl", 6.7..12.0);
}

/// A quiet watch of the Zen 5 guest that read its miss from the miss probe
/// (`edge_miss_ns`; tests/fixtures/watch/README.md): the edge at the
/// smallest probe (6.8 MiB), where a full-cycle chase read 6 MiB served and
/// memory from 8 MiB; every interval's miss under memory's reading (the
/// probes' footprint costs less) and far above the level's, so the probes
/// were read against it; and the probes walked less than a cycle, which
/// the rule before took as the miss, read what it reads, within the least
/// shift an event is: the miss probe measures that miss, and a level that
/// kept part of such a probe's lines can no longer move it.
#[test]
fn a_real_zen5_watch_reads_its_probes_against_the_miss_at_their_footprint() {
    let name = "amd-epyc-zen5-kvm-quiet-miss-probe.jsonl";
    quiet_edge_within(name, 6.7..8.0);
    let (read, _) = recorded(name);
    let mut cold_over_miss = Vec::new();
    for i in &read.intervals {
        let miss = i.edge_miss_ns.expect("a miss probe reading");
        let (level_ns, memory_ns) = level_and_memory(&read, i);
        assert!(
            miss < memory_ns && miss >= edge::REFERENCE_GAP * level_ns,
            "interval {}: miss {miss}, level {level_ns}, memory {memory_ns}",
            i.index
        );
        let cold = i
            .edge_ns
            .iter()
            .zip(&i.edge_warm_cycles)
            .filter(|&(_, &c)| c < 1.0)
            .map(|(&n, _)| n)
            .fold(f64::NAN, f64::max);
        if cold.is_finite() {
            cold_over_miss.push(cold / miss);
        }
    }
    cold_over_miss.sort_by(f64::total_cmp);
    let median = cold_over_miss[cold_over_miss.len() / 2];
    assert!(
        (median - 1.0).abs() < MIN_SHIFT,
        "cold probes over the miss probe: {cold_over_miss:?}"
    );
}

// ---- Real watches, cut short: signals, closed and full outputs (issue 37).

/// A sweep "of this machine" for `--plateaus FILE` (a real Zen 3 curve with
/// this host, now, complete), so a test spares the probe's seconds;
/// `scale` multiplies every size (64: the absurd file of issue 37).
fn plateaus_file(dir: &Path, scale: u64) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json");
    let mut sweep = memlat::experiments::sweep::SweepResult::load(&fixture).unwrap();
    sweep.host = Some(memlat::platform::host::Host::this());
    // The fixture machine's caches: emptied, so the core check has nothing to compare.
    sweep.sysfs_caches = Vec::new();
    sweep.complete = true;
    sweep.started = memlat::experiments::sweep::utc_timestamp(std::time::SystemTime::now());
    sweep.detection = None;
    for m in &mut sweep.points {
        m.size *= scale;
    }
    sweep.config.sizes.iter_mut().for_each(|s| *s *= scale);
    let path = dir.join(format!("sweep-x{scale}.json"));
    std::fs::write(&path, serde_json::to_string(&sweep).unwrap()).unwrap();
    path
}

/// `memlat watch` with `args`, on a sweep file of this machine, its files
/// in `dir`; stdout as `stdout` says.
fn spawn_watch(dir: &Path, args: &[&str], stdout: std::process::Stdio) -> std::process::Child {
    let plateaus = plateaus_file(dir, 1);
    std::process::Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .arg("watch")
        .arg("--plateaus")
        .arg(&plateaus)
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `path` to hold `lines` lines (at most 120 s: a debug build
/// builds a 256 MiB chain slowly).
fn wait_for_lines(path: &Path, lines: usize, child: &mut std::process::Child) {
    let start = std::time::Instant::now();
    while std::fs::read_to_string(path).map_or(0, |t| t.lines().count()) < lines {
        assert!(child.try_wait().unwrap().is_none(), "the watch ended early");
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "no line in {}",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Sends `signal` and waits: the exit status and stderr, and how long
/// the watch took to end after the signal.
fn signal_and_wait(
    child: std::process::Child,
    signal: libc::c_int,
) -> (std::process::Output, std::time::Duration) {
    // SAFETY: kill only sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let sent = std::time::Instant::now();
    let output = child.wait_with_output().unwrap();
    (output, sent.elapsed())
}

/// The file's lines, every one parsed (a damaged line fails the test).
fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// A watch of one-hour intervals stopped by `signal` once its file holds
/// `lines` lines (1: the header, inside the first samples; 2: an interval,
/// while it waits for the next) ends within 10 s with `code`, its file
/// ending in the summary, the summary table printed, and its plot drawn when
/// an interval was measured.
fn stopped_by(signal: libc::c_int, code: i32, lines: usize) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.jsonl");
    // One hour between intervals: the duty allows 6 minutes of measuring,
    // which memlat 0.2 spent in one burst, deaf to the signal.
    let mut child = spawn_watch(
        dir.path(),
        &["--interval", "1h", "-o", "w.jsonl", "--plot", "w.svg"],
        std::process::Stdio::piped(),
    );
    wait_for_lines(&out, lines, &mut child);
    let (output, took) = signal_and_wait(child, signal);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        took < std::time::Duration::from_secs(10),
        "{took:?}: {stderr}"
    );
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines = json_lines(&out);
    let summary = lines.last().unwrap();
    assert_eq!(summary["record"], "summary", "{stderr}");
    assert_eq!(summary["interrupted"], true);
    assert_eq!(
        summary["intervals"].as_u64().unwrap() as usize,
        lines.len() - 2
    );
    let measured = lines.len() > 2;
    assert!(measured || stderr.contains("no interval"), "{stderr}");
    assert_eq!(dir.path().join("w.svg").is_file(), measured, "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("series"), "the summary table: {stdout}");
}

#[test]
fn ctrl_c_stops_a_long_interval_within_seconds_inside_a_sample_or_between_intervals() {
    stopped_by(libc::SIGINT, 130, 1);
    stopped_by(libc::SIGINT, 130, 2);
}

#[test]
fn sigterm_ends_a_watch_as_ctrl_c_does_with_its_summary_and_plot() {
    stopped_by(libc::SIGTERM, 143, 1);
    stopped_by(libc::SIGTERM, 143, 2);
}

#[test]
fn a_closed_pipe_ends_the_watch_with_its_summary_on_stderr_and_its_plot() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_watch(
        dir.path(),
        &[
            "--interval",
            "200ms",
            "--duration",
            "60s",
            "--plot",
            "w.svg",
        ],
        std::process::Stdio::piped(),
    );
    // `| head -1`: one line read, then the reader is gone.
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("L1"), "{first}");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("standard output"), "{stderr}");
    assert!(stderr.contains("series"), "the summary on stderr: {stderr}");
    assert!(dir.path().join("w.svg").is_file(), "{stderr}");
}

#[test]
fn a_full_standard_output_ends_the_watch_with_its_summary_on_stderr() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full to write to on this system");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_watch(
        dir.path(),
        &["--duration", "30s", "--plot", "w.svg"],
        std::process::Stdio::from(full),
    );
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("standard output"), "{stderr}");
    assert!(stderr.contains("-o FILE"), "{stderr}");
    assert!(stderr.contains("series"), "the summary on stderr: {stderr}");
    assert!(dir.path().join("w.svg").is_file(), "{stderr}");
}

/// `memlat watch` whose files may grow to `bytes` at most (RLIMIT_FSIZE,
/// SIGXFSZ ignored: a write past it fails with EFBIG, as on a full disk).
fn watch_with_file_limit(dir: &Path, bytes: u64, args: &[&str]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let plateaus = plateaus_file(dir, 1);
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("memlat"));
    command
        .arg("watch")
        .arg("--plateaus")
        .arg(&plateaus)
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir);
    // SAFETY: between fork and exec only async-signal-safe calls: signal
    // and setrlimit, on this child alone.
    unsafe {
        command.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().unwrap()
}

#[test]
fn a_full_disk_ends_the_watch_with_whole_lines_and_says_how_many() {
    let dir = tempfile::tempdir().unwrap();
    // Room for the header (about 2.5 KiB) and a few intervals.
    let output = watch_with_file_limit(
        dir.path(),
        5 << 10,
        &["--interval", "200ms", "--duration", "60s", "-o", "w.jsonl"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("-o w.jsonl"), "{stderr}");
    let lines = json_lines(&dir.path().join("w.jsonl"));
    assert_eq!(lines[0]["record"], "header");
    let whole = lines.len() - 1;
    assert!(whole >= 1, "{stderr}");
    assert!(lines[1..].iter().all(|l| l["record"] == "interval"));
    assert!(
        stderr.contains(&format!("holds its header and {whole} whole interval(s)")),
        "{stderr}"
    );
    // The summary, which the file could not take, is on standard output.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("series"), "{stdout}");
    // And the file reads back, its summary computed from its intervals.
    memlat()
        .arg("report")
        .arg(dir.path().join("w.jsonl"))
        .args(["--format", "markdown"])
        .assert()
        .success();
}

#[test]
fn a_disk_that_cannot_take_the_header_is_refused_before_the_first_interval() {
    let dir = tempfile::tempdir().unwrap();
    let output = watch_with_file_limit(dir.path(), 512, &["--duration", "60s", "-o", "w.jsonl"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("-o w.jsonl"), "{stderr}");
    assert!(output.stdout.is_empty(), "no interval measured");
}

#[test]
fn intervals_take_several_units_and_refuse_past_a_day() {
    memlat()
        .args(["watch", "--interval", "25h"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--interval 25h"));
    memlat()
        .args(["watch", "--interval", "999999999"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("at most 24h"));
    memlat()
        .args(["watch", "--interval", "1h30x"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--interval"));
}

#[test]
fn a_sweep_scaled_x64_is_set_aside_beside_the_claimed_l1() {
    let claimed = memlat::platform::caches::data_caches(0);
    if !claimed.iter().any(|c| c.level == 1) {
        eprintln!("skipped: this system lists no L1 data cache in sysfs to compare with");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scaled = plateaus_file(dir.path(), 64);
    for command in ["watch", "levels"] {
        memlat()
            .arg(command)
            .arg("--plateaus")
            .arg(&scaled)
            .env("XDG_CACHE_HOME", dir.path())
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--plateaus"))
            .stderr(predicates::str::contains("L1d"));
    }
}

/// The settle pass runs after the header line is written, so its check
/// reaches a file through the summary line, agreeing or not.
#[test]
fn the_settle_check_is_written_in_the_summary() {
    let mut header = header();
    let check = memlat::experiments::watch::SettleEdge {
        edge_bytes: Some(4_948_992),
        served_bytes: Some(4_700_000),
        bracket_bytes: [Some(4_948_992), Some(9_127_808)],
        at_least_bytes: Some(2_683_328),
        at_most_bytes: Some(16_835_008),
        agrees: Some(true),
        note: "settle pass: L3 edge 4.7 MiB, within the sweep's pooled bounds".into(),
        probe_ns: vec![14.2, 60.5],
        references_ns: Some([13.9, 150.0]),
        miss_ns: Some(131.0),
    };
    header.settle_edge = Some(check.clone());
    let summary = summarise(&header, &[], 40.0, None, false);
    assert_eq!(summary.settle_edge, Some(check));
    // Agreeing, it is no note.
    assert!(summary.notes.is_empty());
}

/// The 16-vCPU Emerald Rapids guest's watch with stop 52's build (README):
/// every edge probe read memory, though the sweep it was planned from read
/// 32-35 ns to 9.5 MiB. Each interval's readings judged again by today's
/// rules place no edge, and the summary says the edge lies below the
/// smallest probe.
#[test]
fn a_real_watch_whose_probes_read_memory_places_no_edge() {
    let (read, summary) = recorded("intel-xeon-emr-kvm16-probes-read-memory.jsonl");
    assert_eq!(read.intervals.len(), 12);
    let edge = summary
        .series
        .iter()
        .find(|s| s.name == "L3 edge")
        .expect("an edge series");
    assert_eq!(edge.readings, 0, "{edge:?}");
    let smallest = read.header.plan.edge.as_ref().expect("edge probes").sizes[0] as f64;
    assert_eq!(edge.below, Some(smallest), "{edge:?}");
    let plan = read.header.plan.edge.as_ref().expect("edge probes");
    for i in &read.intervals {
        let (level_ns, memory_ns) = level_and_memory(&read, i);
        let walks: Vec<edge::Walk> = i
            .edge_warm_cycles
            .iter()
            .map(|&c| match c {
                c if c >= WARM_CYCLES as f64 => edge::Walk::Whole,
                c if c >= 1.0 => edge::Walk::Partial,
                _ => edge::Walk::Cold,
            })
            .collect();
        let miss = i.edge_miss_ns.unwrap_or(f64::NAN);
        let again =
            edge::interval_edge(&plan.sizes, &i.edge_ns, &walks, (level_ns, memory_ns), miss);
        let placed = again.as_ref().and_then(|e| e.edge_bytes());
        assert!(placed.is_none(), "interval {}: {again:?}", i.index);
    }
}
