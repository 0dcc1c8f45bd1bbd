//! `memlat doctor`: what this machine lets memlat measure, and how well,
//! before a long run. [`Facts::gather`] reads the system (nothing here needs
//! root; where root would tell more, the findings say so), [`findings`] turns
//! the facts into lines of what, value and what it means for measurements,
//! and [`Report`] is the JSON a script reads.

pub mod findings;

pub use findings::{Finding, findings};

use std::time::Duration;

use serde::Serialize;

use crate::platform::caches::{self, CacheInfo};
use crate::platform::clock::{self, ClockEstimate};
use crate::platform::counters::{self, Unavailable, parse_event, probe};
use crate::platform::system::{self, CpuLoad, HugePool, Hypervisor, NumaNode};
use crate::platform::uarch::{self, Uarch};

/// Everything the doctor reads about the machine.
#[derive(Debug, Clone, Serialize)]
pub struct Facts {
    /// The CPU examined (and pinned to for the clock estimate).
    pub cpu: usize,
    /// /proc/cpuinfo's model name.
    pub cpu_model: Option<String>,
    /// The processor's microarchitecture, where known.
    pub uarch: Option<Uarch>,
    /// The hypervisor and the evidence for it; `None` on bare metal.
    pub hypervisor: Option<Hypervisor>,
    /// Whether a hardware PMU is registered.
    pub pmu: bool,
    /// Why perf's `cycles` event cannot be opened, when it cannot.
    pub perf_cycles: Option<Unavailable>,
    /// Why software events (`task-clock`) cannot be opened, when they cannot.
    pub software_events: Option<Unavailable>,
    /// /proc/sys/kernel/perf_event_paranoid.
    pub perf_event_paranoid: Option<i32>,
    /// The user-space counter memlat would read (`rdpmc`, `rdtsc`, `pmccntr_el0`...),
    /// whether it counts core cycles, and why a better one is missing.
    pub user_counter: Option<(String, bool, Option<String>)>,
    /// The core-clock estimates (three), median first.
    pub clock: Vec<ClockEstimate>,
    /// The TSC rate, timed (x86).
    pub tsc_ghz: Option<f64>,
    /// THP mode and defrag setting.
    pub thp: (Option<String>, Option<String>),
    /// hugetlb pools.
    pub huge_pools: Vec<HugePool>,
    /// cpufreq governor and turbo state.
    pub frequency: (Option<String>, Option<bool>),
    /// The examined CPU's SMT siblings.
    pub smt_siblings: Vec<usize>,
    /// How busy each CPU was over a quarter of a second.
    pub load: Vec<CpuLoad>,
    /// Why `--prefetchers off` cannot work here, when it cannot.
    pub msr: Result<(), String>,
    /// NUMA nodes.
    pub numa: Vec<NumaNode>,
    /// Data caches as sysfs lists them.
    pub sysfs_caches: Vec<CacheInfo>,
    /// Data caches as CPUID describes them (x86).
    pub cpuid_caches: Vec<CacheInfo>,
    /// MemAvailable, bytes.
    pub mem_available: Option<u64>,
}

impl Facts {
    /// Reads the machine; pins this thread to `cpu` for the clock estimate.
    pub fn gather(cpu: usize) -> Facts {
        // Best effort: the estimate is still made, only less surely on `cpu`.
        let _ = crate::platform::pin_to_cpu(cpu);
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_string());
        let event = |name| probe(&parse_event(name).expect("a known event")).err();
        let user_counter = clock::best_isa_counter()
            .ok()
            .map(|c| (c.name.to_string(), c.counts_cycles(), c.note.clone()));
        let mut clock: Vec<ClockEstimate> =
            (0..3).map(|_| clock::estimate_core_clock(cpu)).collect();
        clock.sort_by(|a, b| a.ghz.total_cmp(&b.ghz));
        clock.swap(0, 1);
        Facts {
            cpu,
            cpu_model,
            uarch: uarch::this_machine(),
            hypervisor: system::hypervisor(),
            pmu: counters::has_hardware_pmu(),
            perf_cycles: event("cycles"),
            software_events: event("task-clock"),
            perf_event_paranoid: counters::paranoid_level(),
            user_counter,
            tsc_ghz: clock[0]
                .claims
                .iter()
                .find(|c| c.source.starts_with("TSC rate"))
                .map(|c| c.ghz),
            clock,
            thp: system::thp(),
            huge_pools: system::huge_pools(),
            frequency: system::frequency_policy(cpu),
            smt_siblings: system::smt_siblings(cpu),
            load: system::cpu_load(Duration::from_millis(250)),
            msr: crate::platform::prefetch::check_access(cpu),
            numa: system::numa_nodes(),
            sysfs_caches: caches::data_caches(cpu),
            cpuid_caches: crate::platform::cpuid::data_caches(),
            mem_available: crate::platform::mem_available_bytes(),
        }
    }
}

/// One chain's clock reading, as the JSON gives it.
#[derive(Debug, Clone, Serialize)]
pub struct ChainGhz {
    /// `add` or `mul`.
    pub kind: String,
    /// The instruction timed.
    pub instruction: String,
    /// The core clock it implies, GHz.
    pub ghz: Option<f64>,
}

/// The clock part of the report.
#[derive(Debug, Clone, Serialize)]
pub struct ClockReport {
    /// The core clock memlat would use, GHz (median of three estimates).
    pub estimate_ghz: f64,
    /// Each chain's reading.
    pub chains: Vec<ChainGhz>,
    /// Multiply / add time.
    pub ratio: f64,
    /// Whether the chains agree as documented.
    pub agree: bool,
    /// The TSC rate, timed (x86), GHz.
    pub tsc_ghz: Option<f64>,
    /// The fastest any shipping core runs, GHz (a physical bound; claims set none).
    pub bound_ghz: Option<f64>,
    /// What the system claims (cpufreq maximum, CPUID base and maximum, the
    /// TSC rate, the model name), shown beside the measured clock.
    pub claims: Vec<crate::platform::clock::FrequencyClaim>,
    /// Why the estimate is suspect, naming the physical rule it breaks
    /// (the chains disagree, no shipping core runs at it, or an L1 hit under 2
    /// cycles); null when none does.
    pub suspect: Option<String>,
}

/// One cache, with where the claim comes from.
#[derive(Debug, Clone, Serialize)]
pub struct CacheReport {
    /// Level, from 1.
    pub level: u32,
    /// `data` or `unified`.
    pub kind: caches::CacheKind,
    /// Capacity, bytes.
    pub size_bytes: u64,
    /// Ways, when said.
    pub ways: Option<u64>,
    /// Line size, bytes, when said.
    pub line_bytes: Option<u64>,
    /// `sysfs` or `cpuid`.
    pub source: &'static str,
}

/// `memlat doctor --format json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The CPU examined.
    pub cpu: usize,
    /// /proc/cpuinfo's model name.
    pub cpu_model: Option<String>,
    /// The microarchitecture, where known.
    pub uarch: Option<Uarch>,
    /// Whether a hardware PMU is registered.
    pub pmu: bool,
    /// perf_event_paranoid.
    pub perf_event_paranoid: Option<i32>,
    /// The hypervisor's name; null on bare metal.
    pub hypervisor: Option<String>,
    /// THP mode (`always`, `madvise`, `never`, or `unknown`).
    pub thp: String,
    /// The core clock estimate.
    pub clock: ClockReport,
    /// Whether `--prefetchers off` could read the registers it would change.
    pub msr_access: bool,
    /// NUMA nodes.
    pub numa_nodes: usize,
    /// The caches sysfs and CPUID claim, side by side.
    pub caches: Vec<CacheReport>,
    /// What each fact means for measurements.
    pub findings: Vec<Finding>,
}

impl Report {
    /// The report of `facts`.
    pub fn of(facts: &Facts) -> Report {
        let estimate = &facts.clock[0];
        let caches = facts
            .sysfs_caches
            .iter()
            .map(|c| (c, "sysfs"))
            .chain(facts.cpuid_caches.iter().map(|c| (c, "cpuid")))
            .map(|(c, source)| CacheReport {
                level: c.level,
                kind: c.kind,
                size_bytes: c.size_bytes,
                ways: c.ways,
                line_bytes: c.line_bytes,
                source,
            })
            .collect();
        Report {
            cpu: facts.cpu,
            cpu_model: facts.cpu_model.clone(),
            uarch: facts.uarch.clone(),
            pmu: facts.pmu,
            perf_event_paranoid: facts.perf_event_paranoid,
            hypervisor: facts.hypervisor.as_ref().map(|h| h.name.clone()),
            thp: facts.thp.0.clone().unwrap_or_else(|| "unknown".into()),
            clock: ClockReport {
                estimate_ghz: estimate.ghz,
                chains: estimate
                    .chains
                    .iter()
                    .map(|c| ChainGhz {
                        kind: serde_json::to_value(c.kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                        instruction: c.instruction.clone(),
                        ghz: c.ghz,
                    })
                    .collect(),
                ratio: estimate.ratio,
                agree: estimate.agree,
                tsc_ghz: facts.tsc_ghz,
                bound_ghz: estimate.bound_ghz,
                claims: estimate.claims.clone(),
                suspect: estimate.suspect.clone(),
            },
            msr_access: facts.msr.is_ok(),
            numa_nodes: facts.numa.len().max(1),
            caches,
            findings: findings(facts),
        }
    }
}
