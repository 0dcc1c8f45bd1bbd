//! From facts to findings: one line per fact, with what it means for a
//! measurement and the fix where there is one. Pure, so every branch is
//! tested with made-up machines.

use serde::Serialize;

use super::Facts;
use crate::platform::counters::Unavailable;
use crate::units::HumanBytes;

/// One thing the machine says, and what it means for memlat.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Finding {
    /// What was looked at.
    pub what: String,
    /// What it is here.
    pub value: String,
    /// What that means for measurements, with the fix where there is one.
    pub meaning: String,
}

fn finding(what: &str, value: impl Into<String>, meaning: impl Into<String>) -> Finding {
    Finding {
        what: what.into(),
        value: value.into(),
        meaning: meaning.into(),
    }
}

/// Every finding, in the order a reader needs them.
pub fn findings(f: &Facts) -> Vec<Finding> {
    let mut out = vec![processor(f), hypervisor(f)];
    out.extend(counters(f));
    out.push(clock(f));
    out.push(claims(f));
    out.push(frequency(f));
    out.push(smt(f));
    out.push(load(f));
    out.extend(pages(f));
    out.push(msr(f));
    out.push(numa(f));
    out.push(caches(f));
    out.push(finding(
        "memory available",
        f.mem_available
            .map_or("unknown".into(), |m| HumanBytes(m).to_string()),
        "the largest buffer memlat will map (MemAvailable); larger sizes are refused before anything is allocated",
    ));
    out
}

fn processor(f: &Facts) -> Finding {
    let model = f.cpu_model.clone().unwrap_or_else(|| "unknown".into());
    let Some(u) = &f.uarch else {
        return finding(
            "processor",
            model,
            "not named in memlat's table; nothing depends on the name",
        );
    };
    let named = match (&u.name, &u.core) {
        (Some(name), Some(core)) => format!("{name} ({core} core)"),
        (None, Some(core)) => core.clone(),
        _ => "not in memlat's table".into(),
    };
    let meaning = match &u.note {
        Some(note) => format!("{named} by its id, but {note}"),
        None => format!("{named}; the id is named for the reader, nothing depends on it"),
    };
    finding("processor", format!("{model} [{}]", u.id), meaning)
}

fn hypervisor(f: &Facts) -> Finding {
    match &f.hypervisor {
        Some(h) => finding(
            "hypervisor",
            format!("{} ({})", h.name, h.evidence.join("; ")),
            "a virtual machine: other guests share the host's caches and memory (a shared L3 serves only a share of its size, and timings vary with their load); page walks are two-level, so TLB misses cost more than on bare metal; hardware counters only with PMU passthrough",
        ),
        None => finding(
            "hypervisor",
            "none seen",
            "bare metal as far as CPUID, /sys/hypervisor, DMI and /proc/cpuinfo tell",
        ),
    }
}

fn counters(f: &Facts) -> Vec<Finding> {
    let paranoid = f
        .perf_event_paranoid
        .map_or("unknown".into(), |p| p.to_string());
    let paranoid_meaning = match f.perf_event_paranoid {
        Some(p) if p >= 3 => {
            "unprivileged perf_event_open is refused altogether: no events, not even task-clock; fix (root): sysctl kernel.perf_event_paranoid=2"
        }
        Some(2) => {
            "user-space counting of this process is allowed, which is all memlat needs (it excludes the kernel)"
        }
        Some(_) => "counting is allowed, kernel events too",
        None => {
            "not readable: perf_event_open may be missing (an emulator, or a kernel without perf)"
        }
    };
    let pmu = match (f.pmu, &f.perf_cycles) {
        (true, None) => finding(
            "hardware PMU",
            "yes, perf's cycles event opens",
            "cycles are counted (cycle_source perf), and -e takes hardware events (L1-dcache-load-misses, LLC-load-misses, ...)",
        ),
        (true, Some(why)) => finding(
            "hardware PMU",
            format!("registered, but cycles does not open: {why}"),
            "cycles are estimated from the clock chains below; hardware events are missing from the output, each with the reason",
        ),
        (false, _) => finding(
            "hardware PMU",
            "none",
            "no hardware events (cycles, cache misses): cycles are estimated from the clock chains below, and -e hardware events come back null with a warning; a VM needs PMU passthrough (e.g. KVM's -cpu host,pmu=on)",
        ),
    };
    let software = match &f.software_events {
        None => finding(
            "software events",
            "task-clock opens",
            "task-clock, page-faults, context-switches and cpu-migrations can be counted with -e",
        ),
        Some(why) => finding(
            "software events",
            format!("task-clock does not open: {why}"),
            match why {
                Unavailable::NoPerfSyscall => {
                    "no perf_event_open here: memlat measures without events"
                }
                _ => "no events can be counted; memlat measures without them",
            },
        ),
    };
    let user = match &f.user_counter {
        Some((name, true, _)) => finding(
            "user-space cycle counter",
            format!("{name}, readable"),
            "cycles are read directly around each run (cycle_source cycle-counter) when perf's event is not used",
        ),
        Some((name, false, note)) => finding(
            "user-space cycle counter",
            format!("none; {name} is a time base"),
            format!(
                "{name} ticks at a constant rate, not with the core clock, so memlat never reports it as cycles{}",
                note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
            ),
        ),
        None => finding(
            "user-space cycle counter",
            "none",
            "the monotonic clock times the runs",
        ),
    };
    vec![
        pmu,
        finding("perf_event_paranoid", paranoid, paranoid_meaning),
        software,
        user,
    ]
}

fn clock(f: &Facts) -> Finding {
    let e = &f.clock[0];
    let chains: Vec<String> = e
        .chains
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c.instruction,
                c.ghz.map_or("?".into(), |g| format!("{g:.3} GHz"))
            )
        })
        .collect();
    let spread: Vec<String> = f.clock.iter().map(|c| format!("{:.3}", c.ghz)).collect();
    let value = format!(
        "{:.3} GHz ({}; ratio {:.2}; three estimates: {} GHz)",
        e.ghz,
        chains.join(", "),
        e.ratio,
        spread.join(", ")
    );
    let meaning = match &e.suspect {
        Some(why) => format!("SUSPECT: {why}; estimated cycles should not be read, give the clock with --ghz"),
        None => "the add and multiply chains agree as their documented latencies say, so estimated cycles (ns x this clock, re-timed beside every sample) can be trusted; the chains take operands no renamer can know (immediate adds are folded at rename on Golden Cove and later)".into(),
    };
    finding("core clock", value, meaning)
}

fn claims(f: &Facts) -> Finding {
    let e = &f.clock[0];
    if e.claims.is_empty() {
        return finding(
            "claimed frequencies",
            "none",
            "none to show; the estimate stands on the chains' agreement and the clocks shipping cores run at",
        );
    }
    let list: Vec<String> = e
        .claims
        .iter()
        .map(|c| format!("{} {:.3} GHz", c.source, c.ghz))
        .collect();
    let highest = e.claims.iter().map(|c| c.ghz).fold(0.0, f64::max);
    finding(
        "claimed frequencies",
        list.join("; "),
        format!(
            "shown, not a bound: the core runs at {:.2}x the highest claim (a base or TSC rate is often all a system says, and boost goes well past it); a clock is suspect only where physics rules it out: the chains disagree, no shipping core runs at it (outside {}..{} GHz), or an L1 hit would take under {} cycles",
            e.ghz / highest,
            crate::platform::clock::SHIPPING_GHZ.start(),
            crate::platform::clock::SHIPPING_GHZ.end(),
            crate::platform::clock::MIN_L1_CYCLES
        ),
    )
}

fn frequency(f: &Facts) -> Finding {
    match &f.frequency {
        (None, None) => finding(
            "frequency scaling",
            "not exposed (no cpufreq)",
            "typical of a VM: the host decides the clock; memlat re-times its clock chains beside every sample and warns when the clock moves",
        ),
        (governor, turbo) => {
            let g = governor.clone().unwrap_or_else(|| "unknown".into());
            let t = match turbo {
                Some(true) => "turbo on",
                Some(false) => "turbo off",
                None => "turbo not said",
            };
            let meaning = if g == "performance" {
                "the clock stays high; cycles and ns relate steadily"
            } else {
                "the clock may ramp during a run: ns move with it, estimated cycles follow it (timed beside each sample); for steadier ns (root): cpupower frequency-set -g performance"
            };
            finding("frequency scaling", format!("governor {g}, {t}"), meaning)
        }
    }
}

fn smt(f: &Facts) -> Finding {
    if f.smt_siblings.is_empty() {
        return finding(
            &format!("SMT sibling of CPU {}", f.cpu),
            "none seen",
            "no other hardware thread shares this core as far as the guest sees (a VM's vCPU may still share a physical core with another guest's)",
        );
    }
    let busy: Vec<String> = f
        .smt_siblings
        .iter()
        .map(|&s| {
            let load = f.load.iter().find(|l| l.cpu == s).map(|l| l.busy);
            format!(
                "CPU {s} ({})",
                load.map_or("load unknown".into(), |b| format!("{:.0}% busy", b * 100.0))
            )
        })
        .collect();
    finding(
        &format!("SMT siblings of CPU {}", f.cpu),
        busy.join(", "),
        "a busy sibling shares this core's L1, L2 and load ports and slows the chase: pin memlat (--cpu) to a core whose siblings are idle",
    )
}

fn load(f: &Facts) -> Finding {
    let value: Vec<String> = f
        .load
        .iter()
        .map(|l| {
            format!(
                "CPU {}: {:.0}% busy, {:.1}% stolen",
                l.cpu,
                l.busy * 100.0,
                l.steal * 100.0
            )
        })
        .collect();
    let stolen = f.load.iter().map(|l| l.steal).fold(0.0, f64::max);
    let busy_other = f
        .load
        .iter()
        .filter(|l| l.cpu != f.cpu)
        .map(|l| l.busy)
        .fold(0.0, f64::max);
    let meaning = if stolen > 0.01 {
        "the hypervisor ran other guests on these CPUs during the check: expect noisy timings; repeat runs and compare within one run"
    } else if busy_other > 0.2 {
        "another process is busy here: it competes for the shared caches and memory; measure when it is done, or compare within one run"
    } else {
        "quiet during the check (the doctor's own work included)"
    };
    finding("CPU load (250 ms)", value.join("; "), meaning)
}

fn pages(f: &Facts) -> Vec<Finding> {
    let mode = f.thp.0.clone().unwrap_or_else(|| "unknown".into());
    let thp_meaning = match mode.as_str() {
        "always" | "madvise" => "memlat's buffers get transparent huge pages (--pages thp, the default): no TLB misses inside 2 MiB pages, so L2 and L3 latencies are not inflated by page walks".to_string(),
        "never" => "no transparent huge pages: --pages thp falls back to 4 KiB pages and TLB misses add to the latency beyond L1's reach; fix (root): echo madvise > /sys/kernel/mm/transparent_hugepage/enabled".to_string(),
        _ => "THP state unknown; memlat reads back what each buffer got from /proc/self/smaps".to_string(),
    };
    let pools: Vec<String> = f
        .huge_pools
        .iter()
        .map(|p| {
            format!(
                "{}: {} free of {}",
                HumanBytes(p.page_bytes),
                p.free,
                p.total
            )
        })
        .collect();
    let any_free = f.huge_pools.iter().any(|p| p.free > 0);
    vec![
        finding(
            "transparent huge pages",
            format!(
                "{mode}{}",
                f.thp
                    .1
                    .as_ref()
                    .map(|d| format!(", defrag {d}"))
                    .unwrap_or_default()
            ),
            thp_meaning,
        ),
        finding(
            "hugetlb pools",
            if pools.is_empty() {
                "none".into()
            } else {
                pools.join(", ")
            },
            if any_free {
                "--pages 2m / 1g can use reserved pages"
            } else {
                "--pages 2m and 1g fall back to THP with a notice; reserve pages (root): sysctl vm.nr_hugepages=N, or hugepagesz=1G hugepages=N at boot"
            },
        ),
    ]
}

fn msr(f: &Facts) -> Finding {
    match &f.msr {
        Ok(()) => finding(
            "MSR access (--prefetchers off)",
            "the prefetcher registers can be read",
            "--prefetchers off can disable the hardware prefetchers for a run and restores them on exit",
        ),
        Err(why) => finding(
            "MSR access (--prefetchers off)",
            why.clone(),
            "--prefetchers off cannot be applied: memlat measures with the prefetchers as they are and records that; random chains defeat them anyway. As root with the msr module (modprobe msr) on bare metal it would work; hypervisors usually refuse these registers",
        ),
    }
}

fn numa(f: &Facts) -> Finding {
    let nodes: Vec<String> = f
        .numa
        .iter()
        .map(|n| {
            format!(
                "node {}: {} CPUs, {}",
                n.node,
                n.cpus.len(),
                n.memory_bytes
                    .map_or("memory unknown".into(), |m| HumanBytes(m).to_string())
            )
        })
        .collect();
    let meaning = match f.numa.len() {
        0 | 1 => "one node: no remote memory to measure; --node 0 is the only choice".to_string(),
        n => format!(
            "{n} nodes: --node N binds the buffer to node N (remote latency from a CPU of another node){}",
            if f.numa.iter().any(|n| n.cpus.is_empty()) {
                "; CPU-less nodes (CXL or HBM memory) can be measured only from other nodes' CPUs"
            } else {
                ""
            }
        ),
    };
    finding(
        "NUMA",
        if nodes.is_empty() {
            "no node directories (a kernel without NUMA)".into()
        } else {
            nodes.join("; ")
        },
        meaning,
    )
}

fn caches(f: &Facts) -> Finding {
    let list = |caches: &[crate::platform::caches::CacheInfo]| {
        caches
            .iter()
            .map(|c| {
                format!(
                    "{} {}{}",
                    c.name(),
                    HumanBytes(c.size_bytes),
                    c.ways.map(|w| format!(" {w}-way")).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut value = format!("sysfs: {}", list(&f.sysfs_caches));
    if !f.cpuid_caches.is_empty() {
        value += &format!("; CPUID: {}", list(&f.cpuid_caches));
    }
    let disagreements = crate::platform::cpuid::disagreements(&f.sysfs_caches, &f.cpuid_caches);
    let mut meaning = "claims, used to choose default sizes and shown beside results; the levels memlat reports come from its own curve (memlat sweep, memlat detect)".to_string();
    if !disagreements.is_empty() {
        meaning += &format!("; the claims disagree: {}", disagreements.join("; "));
    }
    if f.hypervisor.is_some() {
        meaning +=
            "; in a VM the last level is shared with other guests, so less of it serves this one";
    }
    finding("caches (claimed)", value, meaning)
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
