//! Findings of made-up machines: a PMU-less KVM guest and a bare-metal server.

use super::*;
use crate::experiments::doctor::Report;
use crate::platform::caches::CacheInfo;
use crate::platform::clock::{ClockEstimate, FrequencyClaim};
use crate::platform::system::{CpuLoad, HugePool, Hypervisor, NumaNode};
use crate::platform::uarch;

fn claim(source: &str, ghz: f64) -> FrequencyClaim {
    FrequencyClaim {
        source: source.into(),
        ghz,
    }
}

fn estimate(add_ghz: f64, mul_cycles: f64, claims: Vec<FrequencyClaim>) -> ClockEstimate {
    ClockEstimate::from_timings(1.0 / add_ghz, mul_cycles / 3.6, claims)
}

fn kvm_guest() -> Facts {
    Facts {
        cpu: 0,
        cpu_model: Some("Intel(R) Xeon(R) Processor".into()),
        uarch: Some(uarch::x86("GenuineIntel", 6, 0xa7, true)),
        hypervisor: Some(Hypervisor {
            name: "KVMKVMKVM".into(),
            evidence: vec!["CPUID hypervisor bit, signature 'KVMKVMKVM'".into()],
        }),
        pmu: false,
        perf_cycles: Some(Unavailable::NoPmu),
        software_events: None,
        perf_event_paranoid: Some(2),
        user_counter: Some(("rdtsc".into(), false, Some("no PMU".into()))),
        clock: vec![estimate(3.6, 3.0, vec![claim("TSC rate, timed", 2.7)]); 3],
        tsc_ghz: Some(2.7),
        thp: (Some("madvise".into()), Some("madvise".into())),
        huge_pools: vec![HugePool {
            page_bytes: 2 << 20,
            total: 0,
            free: 0,
        }],
        frequency: (None, None),
        smt_siblings: Vec::new(),
        load: vec![
            CpuLoad {
                cpu: 0,
                busy: 0.3,
                steal: 0.0,
            },
            CpuLoad {
                cpu: 1,
                busy: 0.0,
                steal: 0.05,
            },
        ],
        msr: Err("/dev/cpu/0/msr does not exist".into()),
        numa: vec![NumaNode {
            node: 0,
            cpus: vec![0, 1],
            memory_bytes: Some(24 << 30),
        }],
        sysfs_caches: vec![
            CacheInfo::example(1, 48 << 10),
            CacheInfo::example(2, 2 << 20),
        ],
        cpuid_caches: vec![CacheInfo::example(1, 48 << 10)],
        mem_available: Some(23 << 30),
    }
}

fn find<'a>(findings: &'a [Finding], what: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.what.starts_with(what))
        .unwrap_or_else(|| panic!("no finding '{what}' in {findings:?}"))
}

#[test]
fn a_pmu_less_guest_is_told_what_it_cannot_count_and_why() {
    let f = findings(&kvm_guest());
    assert!(find(&f, "hypervisor").meaning.contains("two-level"));
    assert!(find(&f, "hardware PMU").meaning.contains("estimated"));
    assert!(find(&f, "software events").value.contains("opens"));
    assert!(
        find(&f, "user-space cycle counter")
            .meaning
            .contains("never reports it as cycles")
    );
    assert!(find(&f, "core clock").meaning.contains("agree"));
    assert!(find(&f, "claimed frequencies").meaning.contains("1.33x"));
    assert!(find(&f, "CPU load").meaning.contains("other guests"));
    assert!(find(&f, "hugetlb pools").meaning.contains("nr_hugepages"));
    assert!(find(&f, "MSR access").meaning.contains("as they are"));
    assert!(find(&f, "NUMA").meaning.contains("one node"));
    assert!(
        find(&f, "processor")
            .meaning
            .contains("hypervisor's choice")
    );
    assert!(
        find(&f, "caches")
            .meaning
            .contains("shared with other guests")
    );
    for finding in &f {
        assert!(
            !finding.value.is_empty() && !finding.meaning.is_empty(),
            "{finding:?}"
        );
    }
}

#[test]
fn a_clock_the_chains_disagree_on_is_suspect_in_the_report() {
    let mut facts = kvm_guest();
    // Adds folded at rename: five a cycle.
    facts.clock = vec![ClockEstimate::from_timings(1.0 / 18.0, 3.0 / 3.6, Vec::new()); 3];
    let f = findings(&facts);
    assert!(find(&f, "core clock").meaning.starts_with("SUSPECT"));
    let report = Report::of(&facts);
    assert!(!report.clock.agree);
    assert!(report.clock.suspect.is_some());
}

#[test]
fn paranoid_three_and_a_missing_thp_name_their_fixes() {
    let mut facts = kvm_guest();
    facts.perf_event_paranoid = Some(3);
    facts.software_events = Some(Unavailable::NotPermitted { paranoid: Some(3) });
    facts.thp = (Some("never".into()), None);
    facts.numa.push(NumaNode {
        node: 1,
        cpus: Vec::new(),
        memory_bytes: Some(64 << 30),
    });
    let f = findings(&facts);
    assert!(
        find(&f, "perf_event_paranoid")
            .meaning
            .contains("sysctl kernel.perf_event_paranoid=2")
    );
    assert!(
        find(&f, "transparent huge pages")
            .meaning
            .contains("echo madvise")
    );
    assert!(find(&f, "NUMA").meaning.contains("CPU-less"));
}

#[test]
fn the_json_has_the_documented_fields() {
    let report = Report::of(&kvm_guest());
    let v = serde_json::to_value(&report).unwrap();
    for key in [
        "pmu",
        "perf_event_paranoid",
        "hypervisor",
        "thp",
        "clock",
        "msr_access",
        "numa_nodes",
        "caches",
        "findings",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["pmu"], false);
    assert_eq!(v["hypervisor"], "KVMKVMKVM");
    assert_eq!(v["thp"], "madvise");
    assert_eq!(v["numa_nodes"], 1);
    for key in ["estimate_ghz", "chains", "agree", "tsc_ghz"] {
        assert!(v["clock"].get(key).is_some(), "clock.{key}");
    }
    assert_eq!(v["clock"]["chains"][1]["kind"], "mul");
    assert_eq!(v["caches"][0]["source"], "sysfs");
    assert_eq!(v["caches"][0]["kind"], "data");
    for key in [
        "level",
        "kind",
        "size_bytes",
        "ways",
        "line_bytes",
        "source",
    ] {
        assert!(v["caches"][0].get(key).is_some(), "caches.{key}");
    }
    assert!(v["findings"][0].get("meaning").is_some());
    assert!(v["findings"].to_string().contains("core clock"));
}
