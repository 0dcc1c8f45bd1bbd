//! The distribution analysis on real timelines (tests/fixtures/timelines,
//! see its README): a hypervisor's tick at an L1 size is no period, DRAM
//! refresh at 1 GiB is one. These are the cases that broke simpler rules.

use std::io::Read;

use memlat::analysis::distribution::{Timings, analyse};

/// A fixture's deltas (little-endian u32 timer ticks, gzipped).
fn ticks(name: &str) -> Vec<u32> {
    let path = format!(
        "{}/tests/fixtures/timelines/{name}.u32.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// 2 cycles of the Golden Cove guest's 3.5 GHz core: an L1 hit's least, ns.
const GLC_FLOOR_NS: f64 = 2.0 / 3.5;

struct Fixture {
    name: &'static str,
    loads_per_timing: u32,
    ns_per_tick: f64,
    overhead_ns: f64,
    /// The timer's step, ns.
    resolution_ns: f64,
    /// An L1 hit's least time (2 cycles at the core clock), ns.
    floor_ns: f64,
}

fn distribution(f: &Fixture) -> memlat::analysis::distribution::Distribution {
    let ticks = ticks(f.name);
    let t = Timings {
        ticks: &ticks,
        ns_per_tick: f.ns_per_tick,
        overhead_ns: f.overhead_ns,
        loads_per_timing: f.loads_per_timing,
        resolution_ns: f.resolution_ns,
        floor_ns: f.floor_ns,
    };
    analyse(&t, "rdtscp").unwrap()
}

#[test]
fn a_hypervisors_tick_at_l1_is_no_period() {
    // Each: (fixture, the tick's period, ns): a 24 us tick; one that
    // alternates (a comb 69 us apart, teeth only from 600 kHz up); two ticks
    // of 34.7 and 33.9 us whose combs interleave.
    for (f, tick) in [
        (
            Fixture {
                name: "intel-glc-kvm-16k-tick24us",
                loads_per_timing: 8,
                ns_per_tick: 0.38463,
                overhead_ns: 13.08,
                resolution_ns: 0.3846,
                floor_ns: GLC_FLOOR_NS,
            },
            24_040.0,
        ),
        (
            Fixture {
                name: "intel-glc-kvm-16k-tick69us",
                loads_per_timing: 16,
                ns_per_tick: 0.384616,
                overhead_ns: 13.846,
                resolution_ns: 0.3846,
                floor_ns: GLC_FLOOR_NS,
            },
            69_240.0,
        ),
        (
            Fixture {
                name: "intel-glc-kvm-16k-two-ticks",
                loads_per_timing: 16,
                ns_per_tick: 0.384635,
                overhead_ns: 14.616,
                resolution_ns: 0.3846,
                floor_ns: GLC_FLOOR_NS,
            },
            34_680.0,
        ),
    ] {
        let d = distribution(&f);
        assert!(
            d.periodic_stalls.is_none(),
            "{}: {:?}",
            f.name,
            d.periodic_stalls
        );
        let longer = d.spectrum.unwrap().longer_period_ns;
        assert!(
            longer.is_some_and(|l| (l / tick - 1.0).abs() < 0.03),
            "{}: {longer:?} against {tick}",
            f.name
        );
        assert!((d.percentiles_ns.p50 - 1.2).abs() < 0.2, "{}: L1", f.name);
    }
}

#[test]
fn dram_refresh_at_one_gib_is_a_period_of_1955_ns() {
    // The independent chase's own timeline (bench/independent), 600k loads:
    // its whole-timeline FFT puts the peak at 1954.8 ns, 12000x the mean.
    let d = distribution(&Fixture {
        name: "intel-glc-kvm-1g-refresh",
        loads_per_timing: 1,
        ns_per_tick: 1.0 / 2.6,
        overhead_ns: 12.3,
        resolution_ns: 1.0 / 2.6,
        floor_ns: GLC_FLOOR_NS,
    });
    let stalls = d.periodic_stalls.expect("refresh");
    assert!((stalls.period_ns / 1954.8 - 1.0).abs() < 0.01, "{stalls:?}");
    assert!(
        stalls.share_of_loads > 0.03 && stalls.added_ns > 50.0,
        "{stalls:?}"
    );
    // Two modes: a load, and a load that waited for a refresh.
    assert!(d.modes.len() >= 2, "{:?}", d.modes);
    assert!((d.percentiles_ns.p50 / 171.0 - 1.0).abs() < 0.05);
}

/// The Zen 5 guest's timer: TSC 2596.1 MHz advancing in steps of 26 ticks
/// (10.0 ns); memlat's timer cost there, 20.03 ns; an L1 hit, 0.94 ns.
fn zen5(name: &'static str) -> Fixture {
    Fixture {
        name,
        loads_per_timing: 1,
        ns_per_tick: 1.0 / 2.5961,
        overhead_ns: 20.03,
        resolution_ns: 26.0 / 2.5961,
        floor_ns: 2.0 / 4.29,
    }
}

#[test]
fn ddr5_refresh_at_one_gib_on_zen5_is_a_period_of_975_ns() {
    // The independent chase's FFT: 975.4 ns, 55-72x the band's mean; only
    // 6-7 loads of 150 ns fit in one period.
    let d = distribution(&zen5("amd-zen5-kvm-1g-refresh-975ns"));
    let stalls = d.periodic_stalls.expect("refresh");
    assert!(
        (965.0..=985.0).contains(&stalls.period_ns),
        "{stalls:?} {:?}",
        d.spectrum
    );
    assert!(
        (d.percentiles_ns.p50 / 130.0 - 1.0).abs() < 0.1,
        "{:?}",
        d.percentiles_ns
    );
    // The TSC's 10 ns steps: 0.04% of deltas read the timer alone (26-78
    // ticks). They are folded to the floor and make no mode.
    assert!(d.timings_folded > 0, "{d:?}");
    assert!(
        d.modes.iter().all(|m| m.ns > 100.0),
        "no mode faster than a DRAM load: {:?}",
        d.modes
    );
}

#[test]
fn zen5_at_16k_has_no_period() {
    let d = distribution(&zen5("amd-zen5-kvm-16k"));
    assert!(d.periodic_stalls.is_none(), "{:?}", d.periodic_stalls);
    // Its strongest line, near 10 us, stalls L1 hits for over a microsecond:
    // the host's tick, longer than any refresh holds a load.
    let host = d.spectrum.as_ref().and_then(|s| s.host_period_ns);
    assert!(
        host.is_some_and(|h| (9_000.0..11_000.0).contains(&h)),
        "{host:?}"
    );
}
