//! One size a watch measures every interval: its chain, where its walk
//! stands, and how one reading of it is taken.

use std::time::Duration;

use anyhow::{Context, Result};

use super::{SAMPLE_ROUNDS, WARM_PASSES};
use crate::chain::Chain;
use crate::engine::{Engine, Strategy, Workload};
use crate::kernels::Kernel;

/// What a probe is for, which sets how it is warmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A level's middle: streamed in, then a short walk.
    Level,
    /// Across the last level's edge: its own walk only.
    Edge,
    /// Memory: a short walk for the page walks.
    Memory,
}

/// One size measured every interval, with its chain kept and where its
/// walk stands.
pub(super) struct Probe {
    pub(super) size: u64,
    pub(super) role: Role,
    pub(super) workload: Workload,
    pub(super) chain: Chain,
    pub(super) trips: Option<u64>,
    /// Loads walked so far, modulo the chain's length: the next interval
    /// goes on from here.
    pub(super) position: u64,
    /// Loads walked before the timed runs (an edge probe's: at most one
    /// cycle, planned by [`Watch::plan_warm`]).
    pub(super) warm: u64,
}

/// One size's reading, its walk going on from where the last one stopped:
/// the warm-up its role asks for (streaming passes and a short walk for a
/// level's middle; its own walk for an edge probe, streamed once in the
/// `settle` pass only; a short walk for memory), then the fastest of the
/// timed runs.
pub(super) fn sample(
    engine: &Engine,
    probe: &mut Probe,
    kernel: Kernel,
    sample_time: Duration,
    line: u64,
    settle: bool,
) -> Result<f64> {
    let mut walker = probe
        .workload
        .walker_at(&probe.chain, kernel, probe.position);
    let per_trip = kernel.loads_per_trip();
    let passes = match probe.role {
        Role::Level => WARM_PASSES,
        Role::Edge if settle => 1,
        Role::Edge | Role::Memory => 0,
    };
    for _ in 0..passes {
        probe.workload.touch(probe.size, line);
    }
    walker.walk(probe.warm.div_ceil(per_trip).max(1))?;
    let timed = engine
        .time(
            &mut walker,
            &mut probe.trips,
            sample_time,
            Strategy::Fastest {
                rounds: SAMPLE_ROUNDS,
            },
        )
        .with_context(|| format!("sampling {} bytes", probe.size))?;
    probe.position = walker.position();
    Ok(timed.ns_per_load)
}
