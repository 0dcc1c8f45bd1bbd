//! Where the traffic threads of `memlat loaded` run: on other cores of the
//! chaser's NUMA node first (they load the memory the chaser reads), one
//! thread per core before any core's second thread, then other nodes; the
//! chaser's own SMT sibling last, and said, since it also shares the core's
//! load ports and miss buffers with the chase.

use serde::{Deserialize, Serialize};

use crate::platform::topology::Topology;

/// The CPUs of a loaded run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPlan {
    /// The chasing thread's CPU.
    pub chaser: usize,
    /// One CPU per traffic thread.
    pub traffic: Vec<usize>,
    /// Traffic CPUs that share a core with the chaser (SMT).
    pub smt_with_chaser: Vec<usize>,
    /// Traffic CPUs on another NUMA node than the chaser.
    pub other_node: Vec<usize>,
    /// CPUs this process may use, the chaser's included (the most traffic
    /// threads a run can have is one less).
    #[serde(default)]
    pub usable: usize,
}

/// Plans `threads` traffic CPUs beside `chaser`; an error names `--threads`
/// or `--cpu` when the machine has too few CPUs.
pub fn plan_cpus(topology: &Topology, chaser: usize, threads: usize) -> Result<CpuPlan, String> {
    let Some(home) = topology.get(chaser) else {
        return Err(format!("--cpu {chaser}: not a CPU this process may use"));
    };
    let others = topology.cpus.len() - 1;
    if threads > others {
        return Err(format!(
            "--threads {threads}: only {others} CPU(s) besides the chaser's (CPU {chaser}) may be used; give at most {others}"
        ));
    }
    // Rank: same node first, then cores not yet used, chaser's core last.
    let mut candidates: Vec<_> = topology.cpus.iter().filter(|c| c.cpu != chaser).collect();
    let rank = |c: &&crate::platform::topology::Cpu| {
        let sibling_rank = topology
            .cpus
            .iter()
            .filter(|o| o.core == c.core && o.cpu < c.cpu)
            .count();
        (
            c.core == home.core,
            c.node != home.node,
            sibling_rank,
            c.cpu,
        )
    };
    candidates.sort_by_key(rank);
    let traffic: Vec<usize> = candidates.iter().take(threads).map(|c| c.cpu).collect();
    let pick = |f: &dyn Fn(&crate::platform::topology::Cpu) -> bool| -> Vec<usize> {
        candidates
            .iter()
            .take(threads)
            .filter(|c| f(c))
            .map(|c| c.cpu)
            .collect()
    };
    Ok(CpuPlan {
        chaser,
        smt_with_chaser: pick(&|c| c.core == home.core),
        other_node: pick(&|c| c.node != home.node),
        traffic,
        usable: topology.cpus.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_the_chasers_node_one_thread_a_core_first() {
        // 2 sockets x 8 cores x SMT2: CPUs 0-7 node 0, 8-15 node 1, 16-31 siblings.
        let t = Topology::fake(2, 8, 2);
        let p = plan_cpus(&t, 0, 7).unwrap();
        assert_eq!(p.traffic, [1, 2, 3, 4, 5, 6, 7]);
        assert!(p.smt_with_chaser.is_empty() && p.other_node.is_empty());
        // Then the second threads of node 0's other cores, before node 1.
        let p = plan_cpus(&t, 0, 14).unwrap();
        assert_eq!(&p.traffic[7..], [17, 18, 19, 20, 21, 22, 23]);
        assert!(p.other_node.is_empty());
        // Then node 1; the chaser's own sibling (16) comes last of all.
        let p = plan_cpus(&t, 0, 31).unwrap();
        assert_eq!(p.traffic.last(), Some(&16));
        assert_eq!(p.smt_with_chaser, [16]);
        assert_eq!(p.other_node.len(), 16);
        assert!(plan_cpus(&t, 0, 32).unwrap_err().contains("--threads 32"));
        assert!(plan_cpus(&t, 99, 1).unwrap_err().contains("--cpu 99"));
    }

    #[test]
    fn a_chaser_on_the_second_node_keeps_traffic_there() {
        let t = Topology::fake(2, 8, 2);
        let p = plan_cpus(&t, 9, 3).unwrap();
        assert_eq!(p.traffic, [8, 10, 11]);
    }

    #[test]
    fn a_two_cpu_guest_has_one_traffic_thread() {
        // One core with two threads (SMT), as some 2-vCPU guests are shown.
        let t = Topology::fake(1, 1, 2);
        let p = plan_cpus(&t, 1, 1).unwrap();
        assert_eq!((p.traffic.clone(), p.smt_with_chaser), (vec![0], vec![0]));
        // Two cores, no SMT.
        let p = plan_cpus(&Topology::fake(1, 2, 1), 1, 1).unwrap();
        assert_eq!(p.traffic, [0]);
        assert_eq!(p.usable, 2);
        assert!(p.smt_with_chaser.is_empty());
        assert!(plan_cpus(&Topology::fake(1, 2, 1), 1, 2).is_err());
    }
}
