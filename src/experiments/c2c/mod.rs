//! `memlat c2c`: how long a cache line takes to move from one CPU to
//! another, for every pair (or a sample), by the methods of [`pingpong`];
//! the matrix ordered by topology and summarised by relation (same core,
//! same L2, same L3, same node, other node); and, for one pair of each
//! relation, whether the two CPUs share a cache, measured ([`shared`]) and
//! set beside what sysfs says.

pub mod pingpong;
pub mod shared;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{Observer, Step};
use crate::chain::SplitMix64;
use crate::platform::topology::{Cpu, Topology};
pub use pingpong::Method;

/// CPUs in topology order: node, L3, L2, core, number. Neighbours in the
/// heatmap then share the most.
pub fn ordered(topology: &Topology, cpus: &[usize]) -> Vec<usize> {
    let mut chosen: Vec<&Cpu> = topology
        .cpus
        .iter()
        .filter(|c| cpus.contains(&c.cpu))
        .collect();
    chosen.sort_by_key(|c| (c.node, c.l3, c.l2, c.core, c.cpu));
    chosen.iter().map(|c| c.cpu).collect()
}

/// How two CPUs are related, closest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Relation {
    /// SMT siblings of one core.
    SameCore,
    /// Different cores sharing an L2.
    SameL2,
    /// Sharing an L3.
    SameL3,
    /// One NUMA node, no shared cache.
    SameNode,
    /// Different NUMA nodes (sockets, or sub-NUMA clusters).
    OtherNode,
}

impl Relation {
    /// The relation of `a` and `b`.
    pub fn of(a: &Cpu, b: &Cpu) -> Relation {
        let shared = |x: Option<usize>, y: Option<usize>| x.is_some() && x == y;
        if a.core == b.core {
            Relation::SameCore
        } else if shared(a.l2, b.l2) {
            Relation::SameL2
        } else if shared(a.l3, b.l3) {
            Relation::SameL3
        } else if a.node == b.node {
            Relation::SameNode
        } else {
            Relation::OtherNode
        }
    }

    /// Whether sysfs says the two share a cache.
    pub fn shares_cache(self) -> bool {
        matches!(
            self,
            Relation::SameCore | Relation::SameL2 | Relation::SameL3
        )
    }

    /// The name in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Relation::SameCore => "same core (SMT)",
            Relation::SameL2 => "same L2",
            Relation::SameL3 => "same L3",
            Relation::SameNode => "same node",
            Relation::OtherNode => "other node",
        }
    }
}

/// The pairs of one relation and their median latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    /// `same core (SMT)`, `same L3`, `other node`...
    pub name: String,
    /// The CPUs in pairs of this relation.
    pub cpus: Vec<usize>,
    /// Pairs measured in it.
    pub pairs: usize,
    /// Median one-way latency over those pairs, ns.
    pub median_ns: f64,
}

/// Groups the measured pairs of `matrix` (rows and columns in `cpus`
/// order) by relation.
pub fn clusters(topology: &Topology, cpus: &[usize], matrix: &[Vec<Option<f64>>]) -> Vec<Cluster> {
    let mut groups: Vec<(Relation, Vec<usize>, Vec<f64>)> = Vec::new();
    for (i, &a) in cpus.iter().enumerate() {
        for (j, &b) in cpus.iter().enumerate().skip(i + 1) {
            let (Some(ca), Some(cb), Some(ns)) = (topology.get(a), topology.get(b), matrix[i][j])
            else {
                continue;
            };
            let relation = Relation::of(ca, cb);
            match groups.iter_mut().find(|g| g.0 == relation) {
                Some(g) => {
                    g.1.extend([a, b]);
                    g.2.push(ns);
                }
                None => groups.push((relation, vec![a, b], vec![ns])),
            }
        }
    }
    groups.sort_by_key(|g| g.0);
    groups
        .into_iter()
        .map(|(relation, mut members, ns)| {
            members.sort_unstable();
            members.dedup();
            Cluster {
                name: relation.name().into(),
                cpus: members,
                pairs: ns.len(),
                median_ns: crate::analysis::stats::median(&ns),
            }
        })
        .collect()
}

/// Which pairs to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pairs {
    /// Every pair.
    All,
    /// This many pairs, chosen at random (seeded: the same sample each run).
    Sample(usize),
}

/// The pairs `(i, j)`, i < j, of `n` CPUs to measure.
pub fn planned_pairs(n: usize, pairs: Pairs, seed: u64) -> Vec<(usize, usize)> {
    let all: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .collect();
    match pairs {
        Pairs::Sample(k) if k < all.len() => {
            // A partial Fisher-Yates shuffle: the first k of a random order.
            let mut all = all;
            let mut rng = SplitMix64::new(seed);
            for i in 0..k {
                let j = i + (rng.next_u64() % (all.len() - i) as u64) as usize;
                all.swap(i, j);
            }
            all.truncate(k);
            all.sort_unstable();
            all
        }
        _ => all,
    }
}

/// One method's matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct C2cMatrix {
    /// `cas` or `read-write`.
    pub method: String,
    /// Rows and columns, in topology order.
    pub cpus: Vec<usize>,
    /// One-way ns (median of the samples); null on the diagonal and for
    /// pairs not measured.
    pub matrix_ns: Vec<Vec<Option<f64>>>,
    /// The fastest sample of each pair, ns.
    pub min_ns: Vec<Vec<Option<f64>>>,
    /// The pairs by relation.
    pub clusters: Vec<Cluster>,
    /// Pairs measured out of all pairs.
    pub pairs_measured: usize,
}

/// Measures `pairs` of `cpus` (topology order) with each method; a
/// checkpoint after each pair keeps what is done when cut short.
pub fn run(
    topology: &Topology,
    cpus: &[usize],
    pairs: &[(usize, usize)],
    methods: &[Method],
    observer: &mut dyn Observer<Vec<C2cMatrix>>,
) -> Result<Vec<C2cMatrix>> {
    let n = cpus.len();
    let mut results: Vec<C2cMatrix> = methods
        .iter()
        .map(|m| C2cMatrix {
            method: m.name().into(),
            cpus: cpus.to_vec(),
            matrix_ns: vec![vec![None; n]; n],
            min_ns: vec![vec![None; n]; n],
            clusters: Vec::new(),
            pairs_measured: 0,
        })
        .collect();
    let labels: Vec<String> = methods
        .iter()
        .flat_map(|m| {
            pairs
                .iter()
                .map(move |&(i, j)| format!("{}: CPU {} <-> CPU {}", m.name(), cpus[i], cpus[j]))
        })
        .collect();
    observer.planned(&labels.iter().map(|l| (l.clone(), 10)).collect::<Vec<_>>());
    'all: for (k, &method) in methods.iter().enumerate() {
        for (p, &(i, j)) in pairs.iter().enumerate() {
            if observer.interrupted() {
                break 'all;
            }
            let index = k * pairs.len() + p;
            let step = Step {
                index,
                total: labels.len(),
                label: &labels[index],
                cost_ms: 10,
            };
            observer.begin(&step);
            let latency = pingpong::pair(cpus[i], cpus[j], method)?;
            let r = &mut results[k];
            for (a, b) in [(i, j), (j, i)] {
                r.matrix_ns[a][b] = Some(latency.median_ns);
                r.min_ns[a][b] = Some(latency.min_ns);
            }
            r.pairs_measured += 1;
            observer.checkpoint(&results)?;
            observer.end(&step);
        }
    }
    for r in &mut results {
        r.clusters = clusters(topology, &r.cpus, &r.matrix_ns);
    }
    Ok(results)
}

/// One pair's sharing check: what was measured, and what sysfs says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharingCheck {
    /// The two CPUs: `a` brought the lines in, `b` read them.
    pub cpus: [usize; 2],
    /// The relation sysfs gives them (`same L3`, `other node`...).
    pub sysfs: String,
    /// Whether that relation is a shared cache.
    pub sysfs_shares: bool,
    /// The level whose plateau the buffer sits on (`L3`...).
    pub level: String,
    /// Buffer bytes.
    pub size_bytes: u64,
    /// What the sweep read of the level and of memory (`level_ns`,
    /// `memory_ns` in the JSON).
    #[serde(flatten)]
    pub swept: shared::Swept,
    /// The three readings; `None` where this ISA cannot flush a line.
    pub readings: Option<shared::Readings>,
    /// Share of b's loads served by what a brought in, 0..1: the median
    /// over the rounds that gave the verdict.
    pub served: Option<f64>,
    /// The verdict.
    pub measured: shared::Sharing,
    /// Whether the verdict and sysfs agree; `None` when the verdict is unknown.
    pub agrees: Option<bool>,
}

/// The pair to check for each relation among `pairs` (indices into `cpus`):
/// the first of each, closest relation first.
pub fn sharing_pairs(
    topology: &Topology,
    cpus: &[usize],
    pairs: &[(usize, usize)],
) -> Vec<(Relation, usize, usize)> {
    let mut chosen: Vec<(Relation, usize, usize)> = Vec::new();
    for &(i, j) in pairs {
        let (a, b) = (cpus[i], cpus[j]);
        let (Some(ca), Some(cb)) = (topology.get(a), topology.get(b)) else {
            continue;
        };
        let relation = Relation::of(ca, cb);
        if !chosen.iter().any(|c| c.0 == relation) {
            chosen.push((relation, a, b));
        }
    }
    chosen.sort_by_key(|c| c.0);
    chosen
}

/// What one pair's check is reckoned to take, ms.
const CHECK_MS: u64 = (shared::CHECK_SECONDS * 1000.0) as u64;

/// The level a sharing check reads: a buffer of `size_bytes`
/// ([`shared::buffer_bytes`]), and what the sweep read of it and of memory.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedLevel {
    /// `L3`...
    pub name: String,
    /// The buffer, bytes.
    pub size_bytes: u64,
    /// The sweep's latencies of the level and of memory.
    pub swept: shared::Swept,
}

/// Checks each of `chosen` ([`sharing_pairs`]) over `level`'s buffer;
/// stops early (keeping those done) on Ctrl-C.
pub fn check_sharing(
    chosen: &[(Relation, usize, usize)],
    level: &SharedLevel,
    observer: &mut dyn Observer<Vec<SharingCheck>>,
) -> Result<Vec<SharingCheck>> {
    let labels: Vec<String> = chosen
        .iter()
        .map(|&(_, a, b)| format!("sharing: CPU {a} -> CPU {b}"))
        .collect();
    observer.planned(
        &labels
            .iter()
            .map(|l| (l.clone(), CHECK_MS))
            .collect::<Vec<_>>(),
    );
    let mut checks = Vec::new();
    for (index, &(relation, a, b)) in chosen.iter().enumerate() {
        if observer.interrupted() {
            break;
        }
        let step = Step {
            index,
            total: chosen.len(),
            label: &labels[index],
            cost_ms: CHECK_MS,
        };
        observer.begin(&step);
        let readings = shared::measure(a, b, level.size_bytes)?;
        let (served, measured) = readings
            .as_ref()
            .map_or((None, shared::Sharing::Unknown), |r| {
                shared::judge(r, level.swept)
            });
        checks.push(SharingCheck {
            cpus: [a, b],
            sysfs: relation.name().into(),
            sysfs_shares: relation.shares_cache(),
            level: level.name.clone(),
            size_bytes: level.size_bytes,
            swept: level.swept,
            readings,
            served,
            measured,
            agrees: match measured {
                shared::Sharing::Shares => Some(relation.shares_cache()),
                shared::Sharing::Apart => Some(!relation.shares_cache()),
                shared::Sharing::Unknown => None,
            },
        });
        observer.checkpoint(&checks)?;
        observer.end(&step);
    }
    Ok(checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_cluster_by_relation_on_a_two_socket_smt_machine() {
        let t = Topology::fake(2, 8, 2);
        let cpus = ordered(&t, &(0..32).collect::<Vec<_>>());
        // Node 0's cores first, each with its sibling beside it.
        assert_eq!(&cpus[..4], [0, 16, 1, 17]);
        assert_eq!(cpus[16], 8);
        // A synthetic machine: 8 ns within a core, 35 within a socket, 110 across.
        let ns = |a: usize, b: usize| match Relation::of(t.get(a).unwrap(), t.get(b).unwrap()) {
            Relation::SameCore => 8.0,
            Relation::SameL2 | Relation::SameL3 | Relation::SameNode => 35.0,
            Relation::OtherNode => 110.0,
        };
        let matrix: Vec<Vec<Option<f64>>> = cpus
            .iter()
            .map(|&a| cpus.iter().map(|&b| (a != b).then(|| ns(a, b))).collect())
            .collect();
        let c = clusters(&t, &cpus, &matrix);
        let summary: Vec<(&str, usize, f64)> = c
            .iter()
            .map(|c| (c.name.as_str(), c.pairs, c.median_ns))
            .collect();
        assert_eq!(
            summary,
            [
                ("same core (SMT)", 16, 8.0),
                ("same L3", 224, 35.0),
                ("other node", 256, 110.0)
            ]
        );
        assert_eq!(c[0].cpus.len(), 32);
    }

    #[test]
    fn one_pair_of_each_relation_is_checked_for_sharing() {
        let t = Topology::fake(2, 8, 2);
        let cpus = ordered(&t, &(0..32).collect::<Vec<_>>());
        let pairs = planned_pairs(cpus.len(), Pairs::All, 1);
        let chosen = sharing_pairs(&t, &cpus, &pairs);
        let relations: Vec<Relation> = chosen.iter().map(|c| c.0).collect();
        assert_eq!(
            relations,
            [Relation::SameCore, Relation::SameL3, Relation::OtherNode]
        );
        for &(relation, a, b) in &chosen {
            assert_eq!(Relation::of(t.get(a).unwrap(), t.get(b).unwrap()), relation);
        }
        assert!(Relation::SameL3.shares_cache() && !Relation::SameNode.shares_cache());
    }

    #[test]
    fn samples_are_seeded_subsets_of_all_pairs() {
        assert_eq!(planned_pairs(4, Pairs::All, 1).len(), 6);
        let s = planned_pairs(32, Pairs::Sample(20), 7);
        assert_eq!(s.len(), 20);
        assert_eq!(s, planned_pairs(32, Pairs::Sample(20), 7));
        assert!(s.iter().all(|&(i, j)| i < j && j < 32));
        let mut d = s.clone();
        d.dedup();
        assert_eq!(d.len(), 20);
        assert_eq!(planned_pairs(3, Pairs::Sample(50), 1).len(), 3);
    }
}
