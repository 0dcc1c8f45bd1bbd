//! `memlat numa`: the node x node matrix of idle memory latency. For each
//! node with CPUs, a thread pinned on one of its CPUs chases a random chain
//! beyond the caches whose memory is bound (mbind) to each node in turn,
//! memory-only nodes (CXL, HBM) included as columns.

use anyhow::{Context, Result};
use serde::Serialize;

use super::{Observer, Step};
use crate::engine::{Engine, Point};
use crate::platform::system::NumaNode;

/// Which CPU measures from which node, and which nodes' memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NumaPlan {
    /// Rows: (node, the CPU of it that measures).
    pub from: Vec<(usize, usize)>,
    /// Columns: nodes with memory.
    pub to: Vec<usize>,
    /// Whether to bind the memory (false where the kernel lists no nodes).
    pub bind: bool,
    /// What to keep in mind (nodes left out and why).
    pub notes: Vec<String>,
}

/// Plans the matrix: a row for each node with a CPU this process may use
/// (its first such CPU), a column for each node with memory (or whose
/// memory the kernel does not state).
pub fn plan(nodes: &[NumaNode], allowed: &[usize]) -> NumaPlan {
    let mut notes = Vec::new();
    let mut from = Vec::new();
    for node in nodes {
        match node.cpus.iter().find(|c| allowed.contains(c)) {
            Some(&cpu) => from.push((node.node, cpu)),
            None if node.cpus.is_empty() => notes.push(format!(
                "node {} has memory but no CPU (CXL or HBM, for example): a column, not a row",
                node.node
            )),
            None => notes.push(format!(
                "node {}: none of its CPUs may be used by this process (taskset or cgroup): no row",
                node.node
            )),
        }
    }
    let to: Vec<usize> = nodes
        .iter()
        .filter(|n| n.memory_bytes != Some(0))
        .map(|n| n.node)
        .collect();
    if nodes.len() <= 1 {
        notes.push(
            "one NUMA node: every CPU reaches memory at the same distance, so the matrix is 1x1 (its value is this machine's memory latency)".into(),
        );
    }
    NumaPlan {
        from,
        to,
        bind: true,
        notes,
    }
}

/// The matrix.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct NumaResult {
    /// Column nodes (where the memory is).
    pub nodes: Vec<usize>,
    /// Row nodes (where the thread runs), and the CPU used for each.
    pub from_nodes: Vec<usize>,
    /// The CPU of each row.
    pub cpus: Vec<usize>,
    /// Idle latency, ns (median of the repeats): `matrix_ns[row][column]`;
    /// null where not measured.
    pub matrix_ns: Vec<Vec<Option<f64>>>,
    /// The chain's size, bytes.
    pub size_bytes: u64,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// Measures every cell of `plan`; `engine_for(cpu)` builds the engine
/// pinned on a row's CPU. A checkpoint after each cell.
pub fn run(
    plan: &NumaPlan,
    template: &Point,
    engine_for: &mut dyn FnMut(usize) -> Result<Engine>,
    observer: &mut dyn Observer<NumaResult>,
) -> Result<NumaResult> {
    let mut result = NumaResult {
        nodes: plan.to.clone(),
        from_nodes: plan.from.iter().map(|f| f.0).collect(),
        cpus: plan.from.iter().map(|f| f.1).collect(),
        matrix_ns: vec![vec![None; plan.to.len()]; plan.from.len()],
        size_bytes: template.size,
        notes: plan.notes.clone(),
    };
    let total = plan.from.len() * plan.to.len();
    let labels: Vec<String> = plan
        .from
        .iter()
        .flat_map(|&(a, cpu)| {
            plan.to
                .iter()
                .map(move |b| format!("node {a} (CPU {cpu}) -> memory on node {b}"))
        })
        .collect();
    observer.planned(
        &labels
            .iter()
            .map(|l| (l.clone(), super::sweep::cost_ms(template)))
            .collect::<Vec<_>>(),
    );
    'rows: for (i, &(_, cpu)) in plan.from.iter().enumerate() {
        let mut engine = engine_for(cpu)?;
        for (j, &node) in plan.to.iter().enumerate() {
            if observer.interrupted() {
                break 'rows;
            }
            let index = i * plan.to.len() + j;
            let step = Step {
                index,
                total,
                label: &labels[index],
                cost_ms: super::sweep::cost_ms(template),
            };
            observer.begin(&step);
            let m = engine
                .measure(&Point {
                    node: plan.bind.then_some(node),
                    ..template.clone()
                })
                .with_context(|| format!("measuring {}", labels[index]))?;
            result.matrix_ns[i][j] = Some(m.ns_per_load.median);
            observer.checkpoint(&result)?;
            observer.end(&step);
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(node: usize, cpus: std::ops::Range<usize>, memory: u64) -> NumaNode {
        NumaNode {
            node,
            cpus: cpus.collect(),
            memory_bytes: Some(memory),
        }
    }

    #[test]
    fn two_sockets_of_two_nodes_and_a_cxl_node() {
        let g = 1 << 30;
        let nodes = [
            node(0, 0..8, 64 * g),
            node(1, 8..16, 64 * g),
            node(2, 16..24, 64 * g),
            node(3, 24..32, 64 * g),
            node(4, 0..0, 256 * g),
        ];
        let allowed: Vec<usize> = (0..32).collect();
        let p = plan(&nodes, &allowed);
        assert_eq!(p.from, [(0, 0), (1, 8), (2, 16), (3, 24)]);
        assert_eq!(p.to, [0, 1, 2, 3, 4]);
        assert!(p.notes[0].contains("node 4 has memory but no CPU"), "{p:?}");
        // A process restricted to socket 1 measures from its nodes only.
        let p = plan(&nodes, &(16..32).collect::<Vec<_>>());
        assert_eq!(p.from, [(2, 16), (3, 24)]);
        assert_eq!(p.to.len(), 5);
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("node 0: none of its CPUs"))
        );
        // A node without memory is no column.
        let p = plan(&[node(0, 0..2, g), node(1, 2..4, 0)], &[0, 1, 2, 3]);
        assert_eq!(p.to, [0]);
    }

    #[test]
    fn one_node_is_a_one_by_one_matrix_and_says_so() {
        let p = plan(&[node(0, 0..2, 24 << 30)], &[0, 1]);
        assert_eq!((p.from.clone(), p.to.clone()), (vec![(0, 0)], vec![0]));
        assert!(p.notes[0].contains("1x1"));
    }
}
