//! What the operating system says about the conditions of a measurement:
//! hypervisor, transparent and hugetlb pages, frequency governor and turbo,
//! SMT siblings and how busy they are, NUMA nodes, MSR access. Each reader
//! returns `None` (or an empty list) where the system does not say.

use std::time::Duration;

use serde::Serialize;

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The word in brackets of a sysfs choice file (`always [madvise] never` -> `madvise`).
pub fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

/// The hypervisor running this machine, and the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hypervisor {
    /// Its name as the evidence gives it (`KVMKVMKVM`, `xen`, `QEMU`...).
    pub name: String,
    /// What says so: `CPUID`, `/sys/hypervisor/type`, `DMI`, `cpuinfo flag`.
    pub evidence: Vec<String>,
}

/// The system's base page size, bytes (`sysconf(_SC_PAGESIZE)`): 4 KiB on
/// x86, 4, 16 or 64 KiB on arm64, 64 KiB on most ppc64le kernels.
pub fn base_page_bytes() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 { page as u64 } else { 4096 }
}

/// The transparent huge page's size, bytes: the kernel's PMD size
/// (`/sys/kernel/mm/transparent_hugepage/hpage_pmd_size`): 2 MiB on x86
/// and on arm64 with 4 KiB pages, 32 MiB with 16 KiB pages, 512 MiB with
/// 64 KiB. `None` where the kernel does not say (no THP).
pub fn thp_page_bytes() -> Option<u64> {
    read("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")?
        .trim()
        .parse()
        .ok()
        .filter(|&b: &u64| b.is_power_of_two() && b > base_page_bytes())
}

/// The hypervisor, from CPUID's hypervisor bit and signature, /sys/hypervisor,
/// DMI strings and /proc/cpuinfo's `hypervisor` flag; `None` on bare metal
/// (as far as any of them tells).
pub fn hypervisor() -> Option<Hypervisor> {
    let mut name = None;
    let mut evidence = Vec::new();
    if let Some(signature) = crate::platform::cpuid::hypervisor_signature() {
        evidence.push(format!("CPUID hypervisor bit, signature '{signature}'"));
        name = Some(signature);
    }
    if let Some(kind) = read("/sys/hypervisor/type") {
        evidence.push(format!("/sys/hypervisor/type: {kind}"));
        name = name.or(Some(kind));
    }
    for file in ["sys_vendor", "product_name"] {
        if let Some(value) = read(&format!("/sys/class/dmi/id/{file}"))
            && [
                "KVM",
                "QEMU",
                "VMware",
                "VirtualBox",
                "Xen",
                "Microsoft",
                "Amazon EC2",
                "Google",
            ]
            .iter()
            .any(|v| value.contains(v))
        {
            evidence.push(format!("DMI {file}: {value}"));
            name = name.or(Some(value));
        }
    }
    let flagged = read("/proc/cpuinfo").is_some_and(|c| {
        c.lines()
            .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"))
    });
    if flagged {
        evidence.push("/proc/cpuinfo flag 'hypervisor'".into());
        name = name.or(Some("unknown hypervisor".into()));
    }
    name.map(|name| Hypervisor { name, evidence })
}

/// Transparent huge pages: the mode (`always`, `madvise`, `never`) and defrag setting.
pub fn thp() -> (Option<String>, Option<String>) {
    let base = "/sys/kernel/mm/transparent_hugepage";
    (
        read(&format!("{base}/enabled")).and_then(|t| bracketed(&t)),
        read(&format!("{base}/defrag")).and_then(|t| bracketed(&t)),
    )
}

/// One hugetlb pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HugePool {
    /// Page size in bytes.
    pub page_bytes: u64,
    /// Pages reserved.
    pub total: u64,
    /// Pages free now.
    pub free: u64,
}

/// The hugetlb pools (2 MiB, 1 GiB...) the kernel has.
pub fn huge_pools() -> Vec<HugePool> {
    let base = "/sys/kernel/mm/hugepages";
    let mut pools: Vec<HugePool> = std::fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().to_string();
            let kib: u64 = name
                .strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse()
                .ok()?;
            let number = |f: &str| read(&format!("{base}/{name}/{f}")).and_then(|v| v.parse().ok());
            Some(HugePool {
                page_bytes: kib * 1024,
                total: number("nr_hugepages")?,
                free: number("free_hugepages")?,
            })
        })
        .collect();
    pools.sort_by_key(|p| p.page_bytes);
    pools
}

/// The cpufreq governor of `cpu`, and whether turbo/boost is on (`Some(true)`),
/// off, or not said.
pub fn frequency_policy(cpu: usize) -> (Option<String>, Option<bool>) {
    let governor = read(&format!(
        "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
    ));
    let turbo = read("/sys/devices/system/cpu/intel_pstate/no_turbo")
        .map(|v| v == "0")
        .or_else(|| read("/sys/devices/system/cpu/cpufreq/boost").map(|v| v == "1"));
    (governor, turbo)
}

/// Parses a CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    cpus.extend(a..=b.min(a + 65_536));
                }
            }
            None => cpus.extend(part.trim().parse::<usize>().ok()),
        }
    }
    cpus
}

/// The other hardware threads of `cpu`'s core (its SMT siblings).
pub fn smt_siblings(cpu: usize) -> Vec<usize> {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
    read(&path)
        .map(|t| parse_cpu_list(&t))
        .unwrap_or_default()
        .into_iter()
        .filter(|&c| c != cpu)
        .collect()
}

/// Per-CPU busy and steal fractions over a short window, from /proc/stat.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuLoad {
    /// CPU number.
    pub cpu: usize,
    /// Fraction of the window it ran something (user, system, irq...), 0..1.
    pub busy: f64,
    /// Fraction the hypervisor ran someone else instead (steal), 0..1.
    pub steal: f64,
}

fn cpu_times(stat: &str) -> Vec<(usize, u64, u64, u64)> {
    // cpuN user nice system idle iowait irq softirq steal ...
    stat.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu: usize = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
            let idle = v.get(3)? + v.get(4).unwrap_or(&0);
            let steal = *v.get(7).unwrap_or(&0);
            let total: u64 = v.iter().take(8).sum();
            Some((cpu, total, idle, steal))
        })
        .collect()
}

/// One reading of /proc/stat's per-CPU counters, to compare with a later one.
#[derive(Debug, Clone, Default)]
pub struct CpuTimes(Vec<(usize, u64, u64, u64)>);

impl CpuTimes {
    /// The counters now (empty where /proc/stat cannot be read).
    pub fn now() -> CpuTimes {
        CpuTimes(cpu_times(&read("/proc/stat").unwrap_or_default()))
    }

    /// Each CPU's busy and steal fractions between `before` and this reading.
    pub fn load_since(&self, before: &CpuTimes) -> Vec<CpuLoad> {
        load_between(&before.0, &self.0)
    }
}

/// How busy each CPU is over `window` (the caller's own thread counts too).
pub fn cpu_load(window: Duration) -> Vec<CpuLoad> {
    let before = CpuTimes::now();
    std::thread::sleep(window);
    CpuTimes::now().load_since(&before)
}

fn load_between(
    before: &[(usize, u64, u64, u64)],
    after: &[(usize, u64, u64, u64)],
) -> Vec<CpuLoad> {
    after
        .iter()
        .filter_map(|&(cpu, total, idle, steal)| {
            let &(_, t0, i0, s0) = before.iter().find(|b| b.0 == cpu)?;
            let dt = total.saturating_sub(t0).max(1) as f64;
            Some(CpuLoad {
                cpu,
                busy: (dt - idle.saturating_sub(i0) as f64 - steal.saturating_sub(s0) as f64)
                    .max(0.0)
                    / dt,
                steal: steal.saturating_sub(s0) as f64 / dt,
            })
        })
        .collect()
}

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NumaNode {
    /// Node number.
    pub node: usize,
    /// Its CPUs (empty for a memory-only node, e.g. CXL).
    pub cpus: Vec<usize>,
    /// Its memory, bytes, when the kernel says.
    pub memory_bytes: Option<u64>,
}

/// The NUMA nodes under /sys/devices/system/node (none on a kernel without NUMA).
pub fn numa_nodes() -> Vec<NumaNode> {
    let base = "/sys/devices/system/node";
    let mut nodes: Vec<NumaNode> = std::fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let node: usize = name.strip_prefix("node")?.parse().ok()?;
            let cpus = read(&format!("{base}/{name}/cpulist"))
                .map(|t| parse_cpu_list(&t))
                .unwrap_or_default();
            let memory_bytes = read(&format!("{base}/{name}/meminfo")).and_then(|m| {
                let line = m.lines().find(|l| l.contains("MemTotal:"))?;
                let kib: u64 = line.split_whitespace().rev().nth(1)?.parse().ok()?;
                Some(kib * 1024)
            });
            Some(NumaNode {
                node,
                cpus,
                memory_bytes,
            })
        })
        .collect();
    nodes.sort_by_key(|n| n.node);
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bracketed_choices_and_cpu_lists() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("never"), None);
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
    }

    #[test]
    fn proc_stat_lines_become_cpu_times() {
        let stat =
            "cpu  10 0 10 100 0 0 0 5\ncpu0 5 0 5 50 0 0 0 2 0 0\ncpu1 5 0 5 50 0 0 0 3\nintr 1\n";
        let times = cpu_times(stat);
        assert_eq!(times, [(0, 62, 50, 2), (1, 63, 50, 3)]);
    }

    #[test]
    fn this_machine_answers_without_crashing() {
        let load = cpu_load(Duration::from_millis(20));
        for l in &load {
            assert!((0.0..=1.0).contains(&l.busy) && (0.0..=1.0).contains(&l.steal));
        }
        for node in numa_nodes() {
            assert!(node.memory_bytes.is_none_or(|m| m > 0));
        }
        let _ = (
            hypervisor(),
            thp(),
            huge_pools(),
            frequency_policy(0),
            smt_siblings(0),
        );
    }
}
