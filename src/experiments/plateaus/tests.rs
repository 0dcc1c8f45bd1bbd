use super::*;

fn plateau(name: &str, from: u64, to: u64) -> Plateau {
    Plateau {
        name: name.into(),
        from_bytes: from,
        to_bytes: to,
        ns: 1.0,
        capacity_bytes: Some(to * 2),
        capacity_bounds: None,
    }
}

#[test]
fn sizes_sit_in_the_log_middle_of_each_plateau_then_memory() {
    let levels = MeasuredLevels {
        source: "probe".into(),
        file: None,
        measured: "now".into(),
        levels: vec![
            plateau("L1", 4 << 10, 16 << 10),
            plateau("L2", 40 << 10, 250 << 10),
            plateau("L3", 1 << 20, 4 << 20),
        ],
        memory_ns: Some(120.0),
    };
    let sizes = levels.sizes(64, Some(64 << 30));
    assert_eq!(sizes[0].size, 8 << 10);
    assert_eq!(sizes[1].size, 100 << 10);
    assert_eq!(sizes[2].size, 2 << 20);
    // Memory: 4x the last capacity (8 MiB), at least 256 MiB.
    assert_eq!(
        (sizes[3].name.as_str(), sizes[3].size),
        ("memory", 256 << 20)
    );
    assert_eq!(levels.level(2).unwrap().from_bytes, 40 << 10);
    assert!(levels.describe().contains("L2 40 KiB..250 KiB"));
    // A tiny plateau still gives a chain of at least two nodes.
    assert_eq!(plateau("L1", 64, 64).middle(64), 128);
}

#[test]
fn remembered_sweeps_are_named_to_sort_as_they_ran() {
    let a = remembered_name("2026-11-25T09:59:59Z");
    let b = remembered_name("2026-11-25T10:00:00Z");
    assert_eq!(a, "sweep-20261125095959.json");
    assert!(a < b);
}

#[test]
fn only_the_stores_own_names_are_read() {
    assert!(is_store_name("sweep-20261125095959.json"));
    assert!(is_store_name("sweep-20261125095959-2.json"));
    for junk in [
        "sweep-.json",
        "sweep-zzz.json",
        "sweep-2026-.json",
        "sweep-1.json.tmp",
        ".sweep-1.json",
    ] {
        assert!(!is_store_name(junk), "{junk}");
    }
}

#[test]
fn sources_parse() {
    assert_eq!(parse_source("auto"), Ok(Source::Auto));
    assert_eq!(parse_source("probe"), Ok(Source::Probe));
    assert_eq!(
        parse_source("s.json"),
        Ok(Source::File(PathBuf::from("s.json")))
    );
    assert!(parse_source(" ").is_err());
}

#[test]
fn only_a_complete_recent_sweep_of_this_machine_of_cache_sizes_is_believed() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json");
    let mut good = SweepResult::load(&fixture).unwrap();
    let host = Host::this();
    good.host = Some(host.clone());
    good.complete = true;
    good.started = sweep::utc_timestamp(SystemTime::now());
    assert_eq!(unfit(&good, &host, Some(16 << 30), &[]), None);
    let why = |edit: &dyn Fn(&mut SweepResult)| {
        let mut r = good.clone();
        edit(&mut r);
        unfit(&r, &host, Some(16 << 30), &[]).unwrap_or_default()
    };
    assert!(
        why(&|r| r.host.as_mut().unwrap().machine_id = "other".into()).contains("another machine")
    );
    assert!(why(&|r| r.complete = false).contains("incomplete"));
    // A sweep of an E core does not stand for this core (of no named kind);
    // one that names no kind, as before memlat recorded it, does.
    let kind_here = crate::platform::current_cpu().and_then(crate::platform::core_kind::core_kind);
    if kind_here.as_deref() != Some("cpu_atom") {
        assert!(why(&|r| r.config.core_kind = Some("cpu_atom".into())).contains("kind of core"));
    }
    assert_eq!(good.config.core_kind, None);
    assert_eq!(another_kind(None, Some("cpu_core".into())), None);
    assert_eq!(
        another_kind(Some("cpu_core"), Some("cpu_core".into())),
        None
    );
    assert!(another_kind(Some("cpu_core"), None).is_some());
    assert!(why(&|r| r.started = "1999-01-01T00:00:00Z".into()).contains("1999"));
    // Sizes multiplied by 1024: plateaus of GiB, which no cache holds.
    let scaled = why(&|r| {
        for m in &mut r.points {
            m.size *= 1024;
        }
        r.config.sizes.iter_mut().for_each(|s| *s *= 1024);
    });
    assert!(scaled.contains("more than any cache holds"), "{scaled}");
    // Plateaus that fit a cache but not a small machine's memory.
    let small = unfit(&good, &host, Some(4 << 20), &[]).unwrap_or_default();
    assert!(small.contains("memory available"), "{small}");
    // Beside what this Zen 3 guest's system claims (32 KiB L1d, 512 KiB
    // L2, 32 MiB L3), the sweep itself is believed, and so is a claimed
    // L3 many times what it serves (guests fabricate L3 sizes)...
    let zen3 = [
        CacheInfo::example(1, 32 << 10),
        CacheInfo::example(2, 512 << 10),
        CacheInfo::example(3, 32 << 20),
    ];
    assert_eq!(unfit(&good, &host, Some(16 << 30), &zen3), None);
    let fabricated = [
        zen3[0].clone(),
        zen3[1].clone(),
        CacheInfo::example(3, 480 << 20),
    ];
    let mut told_480 = good.clone();
    told_480.sysfs_caches = fabricated.to_vec();
    assert_eq!(unfit(&told_480, &host, Some(16 << 30), &fabricated), None);
    // A sweep of a core that listed other caches (a V-Cache CCD beside
    // a plain one, a P core beside an E core) is another core's.
    let other = unfit(&good, &host, Some(16 << 30), &fabricated).unwrap_or_default();
    assert!(other.contains("another kind of core"), "{other}");
    // ...but not the same sweep scaled x64: an "L1" of megabytes.
    let mut scaled = good.clone();
    for m in &mut scaled.points {
        m.size *= 64;
    }
    scaled.config.sizes.iter_mut().for_each(|s| *s *= 64);
    let why = unfit(&scaled, &host, Some(16 << 30), &zen3).unwrap_or_default();
    assert!(why.contains("L1") && why.contains("32 KiB L1d"), "{why}");
    // Nothing claimed: nothing to compare with.
    assert_eq!(
        implausible(&MeasuredLevels::from_sweep(&scaled, "file").unwrap(), &[]),
        None
    );
}

#[test]
fn a_deeper_level_far_past_every_claimed_cache_is_refused_a_missing_claim_is_not() {
    let levels = |l3_from: u64| MeasuredLevels {
        source: "file".into(),
        file: None,
        measured: "now".into(),
        levels: vec![
            plateau("L1", 4 << 10, 24 << 10),
            plateau("L2", 64 << 10, 256 << 10),
            plateau("L3", l3_from, l3_from * 4),
        ],
        memory_ns: Some(100.0),
    };
    let claimed = [
        CacheInfo::example(1, 32 << 10),
        CacheInfo::example(2, 512 << 10),
        CacheInfo::example(3, 8 << 20),
    ];
    assert_eq!(implausible(&levels(2 << 20), &claimed), None);
    let why = implausible(&levels(128 << 20), &claimed).unwrap_or_default();
    assert!(why.contains("L3 starts at 128 MiB"), "{why}");
    // A guest that lists no L3: its measured L3 is compared with nothing.
    assert_eq!(implausible(&levels(128 << 20), &claimed[..2]), None);
}

#[test]
fn the_probe_is_random_coarse_and_capped() {
    let caches = [
        CacheInfo::example(1, 32 << 10),
        CacheInfo::example(3, 512 << 20),
    ];
    let plan = probe_plan(&Point::default(), 0, &caches, Some(24 << 30));
    assert_eq!(plan.config.to, PROBE_CAP);
    assert!(!plan.config.refine);
    assert_eq!(plan.template.repeats, 2);
    assert_eq!(
        plan.config.series,
        vec![SeriesKey::pattern(Pattern::Random)]
    );
    let small = probe_plan(&Point::default(), 0, &caches[..1], Some(24 << 30));
    assert_eq!(small.config.to, 64 << 20);
}
