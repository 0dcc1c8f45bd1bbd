//! Tests of the result assembly on synthetic timed levels.

use super::*;
use crate::experiments::loaduse::driver::PassSample;
use crate::kernels::load_use::Shape;

const GHZ: f64 = 1.0;

fn run(shape: Shape, nops: u32, cycles: f64) -> PointRun {
    PointRun {
        nops,
        shape,
        passes: vec![PassSample {
            pass: 0,
            ns_per_iteration: cycles / GHZ,
            cycles_per_iteration: cycles,
            counted: true,
            clock_ghz: GHZ,
            trips: 100,
        }],
    }
}

/// A timed level from a model curve; `rolled` adds the rolled kernel at the
/// first N; `chase` is what memlat run would say.
fn level(
    name: &str,
    size: u64,
    curve: impl Fn(u32) -> f64,
    rolled: Option<f64>,
    chase: f64,
) -> TimedLevel {
    let points: Vec<PointRun> = (0..=32)
        .map(|n| run(Shape::Unrolled, n, curve(n)))
        .collect();
    TimedLevel {
        spec: LevelSpec {
            name: name.into(),
            size,
            basis: "test".into(),
        },
        run: LevelRun {
            size,
            chain_nodes: size / 64,
            rolled: rolled
                .map(|c| run(Shape::Rolled, 0, c))
                .into_iter()
                .collect(),
            points,
            page_backing: PageBacking {
                requested: "4k".into(),
                obtained: "4k".into(),
                huge_fraction: 0.0,
                kernel_page_bytes: 4096,
            },
            clock_ghz_before: GHZ,
            clock_ghz_after: GHZ,
            warnings: Vec::new(),
        },
        chase: Some((chase, "pointer".into())),
    }
}

fn context() -> Context {
    Context {
        nops: (0, 32),
        passes: 1,
        pattern: "random".into(),
        line: 64,
        cpu: 0,
        cycle_source: "perf".into(),
        clock_suspect: None,
    }
}

#[test]
fn a_single_issue_core_reads_like_seed_003() {
    // JZ4770-like: 4-cycle L1 (uniform), L2 between 6 and 10 cycles, loop
    // overhead 5 cycles a trip (1/16 of it per unrolled iteration).
    let o = 5.0 / UNROLL as f64;
    let l1 = level(
        "L1d",
        12 << 10,
        |n| f64::from(4.max(n + 1)) + 1.0 + o,
        Some(10.0),
        4.0,
    );
    let l2 = level(
        "L2",
        192 << 10,
        |n| 0.5 * f64::from(6.max(n + 1)) + 0.5 * f64::from(10.max(n + 1)) + 1.0 + o,
        None,
        8.0,
    );
    let r = assemble(context(), vec![l1, l2]);
    assert_eq!(r.reading.issue, Issue::SingleIssue);
    assert!(
        (r.loop_overhead_cycles - 5.0).abs() < 0.01,
        "{}",
        r.loop_overhead_cycles
    );
    let l1 = &r.levels[0];
    assert_eq!(l1.knee_nops, Some(4));
    assert_eq!(l1.latency_min_cycles, Some(4.0));
    assert!(
        (l1.latency_cycles - 4.0).abs() < 0.01,
        "{}",
        l1.latency_cycles
    );
    assert_eq!(l1.latency_max_cycles, Some(4.0));
    assert_eq!(l1.knees, vec![4]);
    let l2 = &r.levels[1];
    assert_eq!(l2.latency_min_cycles, Some(6.0));
    assert!((l2.latency_cycles - 8.0).abs() < 0.01);
    assert_eq!(l2.latency_max_cycles, Some(10.0));
    // One 8-byte word per 4 cycles at 1 GHz.
    assert!((l1.throughput_mib_s - 8e9 / 4.0 / 1048576.0).abs() < 1.0);
    assert!(
        r.reading
            .explanation
            .contains("load-to-use latency: 4 cycles")
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn a_wide_core_reads_the_latency_from_the_plateau_and_says_why() {
    // Zen 4-like: 4-cycle L1, 12 instructions a cycle: flat to N = 58, so no
    // knee up to 32; DRAM flat at 600 cycles. Loop overhead hidden.
    let l1 = level(
        "L1d",
        24 << 10,
        |n| 5.0f64.max(f64::from(n + 2) / 12.0),
        Some(5.0),
        4.0,
    );
    let dram = level("DRAM", 256 << 20, |_| 600.0, None, 4.0);
    let r = assemble(context(), vec![l1, dram]);
    assert_eq!(r.reading.issue, Issue::MultiIssue);
    assert_eq!(r.reading.from_level, "L1d");
    assert!((r.reading.issue_width_at_least.unwrap() - 34.0 / 5.0).abs() < 1e-9);
    let l1 = &r.levels[0];
    assert_eq!(l1.knee_nops, None);
    assert_eq!((l1.latency_min_cycles, l1.latency_max_cycles), (None, None));
    assert!((l1.latency_cycles - 4.0).abs() < 1e-9);
    assert_eq!(r.loop_overhead_cycles, 0.0);
    assert!((r.levels[1].latency_cycles - 599.0).abs() < 1e-9);
    // DRAM's memlat run figure (4.00 in this test) disagrees: a warning says so.
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].starts_with("DRAM: load-to-use 599.00"));
    let text = &r.reading.explanation;
    assert!(text.contains("at least 6.8 instructions a cycle"), "{text}");
    assert!(text.contains("from the plateau"), "{text}");
    assert!(
        text.contains("memlat run, pointer kernel, same working set: 4.00"),
        "{text}"
    );
}

#[test]
fn a_wide_core_with_its_knee_in_range_gives_the_width() {
    let l1 = level(
        "L1d",
        24 << 10,
        |n| 5.0f64.max(f64::from(n + 2) / 4.0),
        None,
        4.0,
    );
    let r = assemble(context(), vec![l1]);
    assert_eq!(r.reading.issue, Issue::MultiIssue);
    assert!((r.reading.issue_width.unwrap() - 4.0).abs() < 0.01);
    let l1 = &r.levels[0];
    assert!((l1.knee_crossing_nops.unwrap() - 18.0).abs() < 0.01);
    assert_eq!(l1.knees, vec![l1.knee_nops.unwrap()]);
    assert!(
        r.reading
            .explanation
            .contains("(latency + 1) x issue width")
    );
}

#[test]
fn a_suspect_clock_leaves_the_core_unread() {
    // Golden Cove timed with a clock 6x too fast (20.4 GHz, folded adds):
    // L1 "flat at 35.5 cycles", one NOP a cycle past a knee. Not a
    // single-issue core: a clock no shipping core runs at.
    let golden = || {
        level(
            "L1d",
            36 << 10,
            |n| f64::from(35.max(n + 1)) + 0.53,
            None,
            30.3,
        )
    };
    let too_fast = Context {
        clock_suspect: crate::platform::clock::physics::outside_shipping_cores(20.4),
        ..context()
    };
    let r = assemble(too_fast, vec![golden()]);
    assert_eq!(r.reading.issue, Issue::Undetermined);
    assert!(r.reading.explanation.contains("clock is suspect"));
    assert!(r.reading.explanation.contains("shipping core"));
    assert!(r.warnings.iter().any(|w| w.contains("clock suspect")));
    // The same L1 at a clock physics allows: a slow L1 is no clock fault.
    let r = assemble(context(), vec![golden()]);
    assert!(!r.reading.explanation.contains("clock is suspect"));
    assert!(!r.warnings.iter().any(|w| w.contains("clock suspect")));
    // An L1 hit under 2 cycles: a clock read too low.
    let l1 = level(
        "L1d",
        36 << 10,
        |n| f64::from(1.max(n + 1)) + 0.2,
        None,
        1.2,
    );
    let r = assemble(context(), vec![l1]);
    assert_eq!(r.reading.issue, Issue::Undetermined);
    assert!(r.reading.explanation.contains("no cache can answer"));
    let told = Context {
        clock_suspect: Some("the chains disagree".into()),
        ..context()
    };
    let l1 = level(
        "L1d",
        36 << 10,
        |n| f64::from(4.max(n + 1)) + 1.0,
        None,
        4.0,
    );
    let r = assemble(told, vec![l1]);
    assert_eq!(r.reading.issue, Issue::Undetermined);
    assert!(r.reading.explanation.contains("the chains disagree"));
}
