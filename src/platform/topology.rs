//! Which CPUs share a core (SMT) and a NUMA node: the map `memlat loaded`
//! plans its threads on. Read from sysfs, or built by hand for tests.

use serde::Serialize;

use super::system::{numa_nodes, parse_cpu_list};

/// One CPU (hardware thread) and where it sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cpu {
    /// CPU number.
    pub cpu: usize,
    /// The core it belongs to: the smallest CPU number among its SMT siblings.
    pub core: usize,
    /// Its NUMA node, when the kernel says.
    pub node: Option<usize>,
    /// The group of CPUs sharing its L2 (the smallest CPU number of them).
    pub l2: Option<usize>,
    /// The group of CPUs sharing its L3 (the smallest CPU number of them).
    pub l3: Option<usize>,
}

/// The smallest CPU sharing `cpu`'s cache of `level` (data or unified), from sysfs.
fn cache_group(cpu: usize, level: u32) -> Option<usize> {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    (0..8).find_map(|index| {
        let dir = format!("{base}/index{index}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let kind = read("type")?;
        if read("level")?.trim().parse::<u32>().ok()? != level || kind.trim() == "Instruction" {
            return None;
        }
        parse_cpu_list(&read("shared_cpu_list")?).into_iter().min()
    })
}

/// The CPUs this process may use.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Topology {
    /// By CPU number.
    pub cpus: Vec<Cpu>,
}

impl Topology {
    /// The CPUs in `allowed`, their cores and nodes from sysfs.
    pub fn read(allowed: &[usize]) -> Topology {
        let nodes = numa_nodes();
        let cpus = allowed
            .iter()
            .map(|&cpu| {
                let path =
                    format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
                let siblings = std::fs::read_to_string(path)
                    .map(|t| parse_cpu_list(&t))
                    .unwrap_or_default();
                Cpu {
                    cpu,
                    core: siblings.iter().copied().min().unwrap_or(cpu).min(cpu),
                    node: nodes.iter().find(|n| n.cpus.contains(&cpu)).map(|n| n.node),
                    l2: cache_group(cpu, 2),
                    l3: cache_group(cpu, 3),
                }
            })
            .collect();
        Topology { cpus }
    }

    /// A machine of `nodes` nodes x `cores` cores x `threads` SMT threads,
    /// numbered as Linux usually does: first thread of every core, then the
    /// second (CPU `t * nodes * cores + n * cores + c`); an L2 per core, an
    /// L3 per node.
    pub fn fake(nodes: usize, cores: usize, threads: usize) -> Topology {
        let per_thread = nodes * cores;
        let mut cpus = Vec::new();
        for t in 0..threads {
            for n in 0..nodes {
                for c in 0..cores {
                    cpus.push(Cpu {
                        cpu: t * per_thread + n * cores + c,
                        core: n * cores + c,
                        node: Some(n),
                        l2: Some(n * cores + c),
                        l3: Some(n * cores),
                    });
                }
            }
        }
        cpus.sort_by_key(|c| c.cpu);
        Topology { cpus }
    }

    /// The CPU `cpu`, if this process may use it.
    pub fn get(&self, cpu: usize) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_machines_number_cpus_as_linux_does() {
        let t = Topology::fake(2, 8, 2);
        assert_eq!(t.cpus.len(), 32);
        assert_eq!(t.get(0).unwrap().core, 0);
        assert_eq!(t.get(16).unwrap().core, 0, "CPU 16 is CPU 0's sibling");
        assert_eq!(t.get(9).unwrap().node, Some(1));
        let here = Topology::read(&crate::platform::allowed_cpus());
        assert!(!here.cpus.is_empty());
        assert!(here.cpus.iter().all(|c| c.core <= c.cpu));
    }
}
