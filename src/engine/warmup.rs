//! Warm-up: walk the chain until its timing is steady, and no further than
//! that costs. Filling and linking have just written every node, so a chain
//! that fits a cache is already in it; what the walk adds is the smaller
//! caches, the TLB and the page-table caches, and proof that the chain
//! returns where it should.
//!
//! The walk goes in chunks of [`CHUNK`] loads, each timed. A chain whose
//! full cycle costs less than [`FULL_CYCLE_NS`] at the pace measured is
//! walked one full cycle: that is cheap, and a chain near a cache's
//! capacity needs a full cycle to reach its steady state. A longer one
//! stops as soon as two chunks in a row agree within [`STEADY`]: more
//! walking changes nothing but the time spent (a 1.8 GiB chain is 30
//! million loads, six seconds). The rule is a cost, not a latency: no
//! figure in ns says which level serves a chain.

use std::time::Instant;

use super::{Error, Walker};

/// Loads per timed chunk.
pub const CHUNK: u64 = 64 << 10;

/// Two chunks agree when their ns per load differ by at most this fraction.
pub const STEADY: f64 = 0.03;

/// A full cycle that would take longer than this (ns, at the latest chunk's
/// pace) may stop early once steady: a budget of time per warm-up, the
/// same order as a sweep point's samples, so warming never dominates.
pub const FULL_CYCLE_NS: f64 = 50e6;

/// Walks `walker` until steady (see the module docs); returns the loads walked.
pub fn warm_up(walker: &mut Walker) -> Result<u64, Error> {
    warm_up_unless(walker, &|| false)
}

/// [`warm_up`], abandoned with [`Error::Interrupted`] between chunks once
/// `stopped` says so.
pub fn warm_up_unless(walker: &mut Walker, stopped: &dyn Fn() -> bool) -> Result<u64, Error> {
    let per_trip = walker.kernel().loads_per_trip();
    let len = walker.chain_len();
    let chunk_trips = CHUNK.div_ceil(per_trip).max(1);
    let full_trips = len.div_ceil(per_trip).max(1);
    let mut walked_trips = 0;
    let mut previous: Option<f64> = None;
    while walked_trips < full_trips {
        if stopped() {
            return Err(Error::Interrupted);
        }
        let trips = chunk_trips.min(full_trips - walked_trips);
        let start = Instant::now();
        walker.walk(trips)?;
        let ns = start.elapsed().as_nanos() as f64 / (trips * per_trip) as f64;
        walked_trips += trips;
        if let Some(before) = previous
            && ((full_trips - walked_trips) * per_trip) as f64 * ns >= FULL_CYCLE_NS
            && (ns - before).abs() <= STEADY * ns
        {
            break;
        }
        previous = Some(ns);
    }
    Ok(walked_trips * per_trip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::Chain;
    use crate::engine::Workload;
    use crate::kernels::{Kernel, KernelKind};
    use crate::platform::PageRequest;

    #[test]
    fn a_small_chain_is_walked_one_full_cycle() {
        let mut w = Workload::prepare(64 << 10, PageRequest::Base, None).unwrap();
        let chain = Chain::random(64 << 10, 64, 1).unwrap();
        let kernel = Kernel::Chase(KernelKind::Pointer);
        w.link(&chain, kernel).unwrap();
        let mut walker = w.walker(&chain, kernel);
        let loads = warm_up(&mut walker).unwrap();
        assert_eq!(loads, chain.len().div_ceil(100) * 100);
        // The walker still knows where it is: the next walk checks out.
        walker.walk(3).unwrap();
    }
}
