//! The stage table: which stages run where, and their command lines.

use std::path::PathBuf;

use super::stages::{self, Context, Mode, STAGES, plan};

fn names(planned: &[stages::Planned]) -> Vec<(&'static str, bool)> {
    planned
        .iter()
        .map(|p| (p.stage.name, p.skip.is_none()))
        .collect()
}

fn context(mode: Mode, cpus: usize) -> Context {
    Context {
        dir: PathBuf::from("/r"),
        mode,
        cpus,
        plateaus: None,
        dram_bytes: 256 << 20,
        sweep_to: 512 << 20,
    }
}

fn line(stage: &str, c: &Context) -> String {
    let s = STAGES.iter().find(|s| s.name == stage).unwrap();
    (s.args)(c)
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn two_cpus_run_every_stage_with_the_sweep_before_those_that_take_its_plateaus() {
    for mode in [Mode::Full, Mode::Quick] {
        let p = plan(mode, 2, &[], &|_, _| true).unwrap();
        assert_eq!(
            names(&p),
            [
                ("doctor", true),
                ("sweep", true),
                ("bandwidth", true),
                ("mlp", true),
                ("tlb", true),
                ("c2c", true),
                ("loaded", true),
                ("distribution", true),
            ]
        );
        assert!(p.iter().all(|p| p.estimate > 0.0));
    }
    let full: f64 = plan(Mode::Full, 2, &[], &|_, _| true)
        .unwrap()
        .iter()
        .map(|p| p.estimate)
        .sum();
    let quick: f64 = plan(Mode::Quick, 2, &[], &|_, _| true)
        .unwrap()
        .iter()
        .map(|p| p.estimate)
        .sum();
    assert!(quick <= 60.0 && full > 2.0 * quick, "{quick} {full}");
}

#[test]
fn one_cpu_skips_c2c_and_loaded_saying_why() {
    for mode in [Mode::Full, Mode::Quick] {
        let p = plan(mode, 1, &[], &|_, _| true).unwrap();
        for planned in &p {
            let skipped = matches!(planned.stage.name, "c2c" | "loaded");
            assert_eq!(planned.skip.is_some(), skipped, "{}", planned.stage.name);
            if let Some(why) = &planned.skip {
                assert!(
                    why.contains("needs 2 CPUs") && why.contains("use 1"),
                    "{why}"
                );
                assert_eq!(planned.estimate, 0.0);
            }
        }
    }
}

#[test]
fn distribution_waits_for_its_flag() {
    let p = plan(Mode::Quick, 2, &[], &|command, flag| {
        !(command == "run" && flag == "distribution")
    })
    .unwrap();
    let d = p.iter().find(|p| p.stage.name == "distribution").unwrap();
    assert!(
        d.skip
            .as_deref()
            .unwrap()
            .contains("memlat run --distribution")
    );
    let line = line("distribution", &context(Mode::Quick, 2));
    assert!(
        line.starts_with(
            "run --force --format json -o /r/distribution.json -n 268435456 --pattern random --distribution"
        ),
        "{line}"
    );
}

#[test]
fn stages_picks_in_table_order_and_names_the_flag_for_a_typo() {
    let only = vec!["tlb".to_string(), "doctor".to_string(), "tlb".to_string()];
    let p = plan(Mode::Quick, 2, &only, &|_, _| true).unwrap();
    assert_eq!(names(&p), [("doctor", true), ("tlb", true)]);
    let e = plan(Mode::Quick, 2, &["swep".into()], &|_, _| true).unwrap_err();
    assert!(
        e.starts_with("--stages swep: no such stage") && e.contains("sweep"),
        "{e}"
    );
}

#[test]
fn command_lines_by_mode() {
    let quick = context(Mode::Quick, 2);
    assert_eq!(
        line("sweep", &quick),
        "sweep --no-progress --force --pattern random --repeats 2 --to 536870912 --json /r/sweep.json"
    );
    assert_eq!(
        line("sweep", &context(Mode::Full, 2)),
        "sweep --no-progress --force --json /r/sweep.json"
    );
    // Without this run's plateaus bandwidth and mlp take their own; with them, the sweep's.
    assert_eq!(
        line("bandwidth", &quick),
        "bandwidth --no-progress --format json -o /r/bandwidth.json --repeats 3 --sample-ms 10"
    );
    let with = Context {
        plateaus: Some("/r/sweep.json".into()),
        ..quick.clone()
    };
    assert!(line("mlp", &with).ends_with("--plateaus /r/sweep.json"));
    // The quick traffic loads memory, at the chase's size (not 64 MiB an L3 may hold).
    assert!(line("loaded", &with).ends_with("-n 268435456 --traffic-size 268435456"));
    assert_eq!(
        line("c2c", &quick),
        "c2c --no-progress --format json -o /r/c2c.json --method cas"
    );
    assert!(line("c2c", &context(Mode::Quick, 64)).ends_with("--pairs sample:120"));
    // The sharing check reads this run's sweep; the tiny one has none worth reading.
    assert!(line("c2c", &with).ends_with("--method cas --plateaus /r/sweep.json"));
    assert!(line("c2c", &context(Mode::Tiny, 2)).ends_with("--no-sharing"));
    assert_eq!(
        line("doctor", &context(Mode::Tiny, 1)),
        "doctor --format json -o /r/doctor.json"
    );
    assert!(line("mlp", &context(Mode::Tiny, 1)).contains("--sizes 64K"));
}

#[test]
fn the_time_left_follows_the_pace_of_the_stages_done() {
    assert_eq!(stages::time_left(&[10.0, 20.0], 0.0, 0.0), 30.0);
    // Twice as long as estimated: the rest will be too.
    assert_eq!(stages::time_left(&[10.0, 20.0], 60.0, 30.0), 52.5);
    // A one-second stage that took half its estimate hardly moves the rest.
    assert!((stages::time_left(&[10.0], 0.5, 1.0) - 9.545).abs() < 0.001);
    assert_eq!(stages::time_left(&[10.0], 1000.0, 1.0), 30.0);
    assert_eq!(stages::time_left(&[10.0], 0.0, 100.0), 5.0);
}

#[test]
fn the_quick_sweep_ends_past_the_largest_cache() {
    assert_eq!(stages::sweep_to(Some(32 << 20), None), 256 << 20);
    assert_eq!(stages::sweep_to(Some(105 << 20), None), 420 << 20);
    assert_eq!(stages::sweep_to(Some(480 << 20), None), 512 << 20);
    assert_eq!(stages::sweep_to(None, Some(512 << 20)), 128 << 20);
}

#[test]
fn durations_read_well() {
    assert_eq!(super::duration(0.043), "0.04 s");
    assert_eq!(super::duration(4.74), "4.7 s");
    assert_eq!(super::duration(42.4), "42 s");
    assert_eq!(super::duration(185.0), "3 min 05 s");
}
