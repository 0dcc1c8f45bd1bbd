//! The clock rule over the machines of tests/fixtures/clock/README.md.

use super::*;
use crate::platform::clock::{ClockEstimate, FrequencyClaim};

/// The fixture's table, read at compile time so it and this test agree.
const TABLE: &str = include_str!("../../../tests/fixtures/clock/README.md");

struct Row {
    machine: String,
    add_ghz: f64,
    ratio: f64,
    claim_ghz: Option<f64>,
    l1_ns: f64,
    suspect: String,
}

fn rows() -> Vec<Row> {
    TABLE
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| machine") && !l.starts_with("| ---"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let number = |i: usize| cells[i].parse::<f64>().ok();
            Row {
                machine: cells[0].to_string(),
                add_ghz: number(1).expect("add GHz"),
                ratio: number(2).expect("imul/add"),
                claim_ghz: number(3),
                l1_ns: number(4).expect("L1 ns"),
                suspect: cells[5].to_string(),
            }
        })
        .collect()
}

/// The verdict on a row: the chains' and the clock's, else the L1 hit's.
fn verdict(r: &Row) -> Option<String> {
    let add_ns = 1.0 / r.add_ghz;
    let claims = r
        .claim_ghz
        .map(|ghz| FrequencyClaim {
            source: "fixture".into(),
            ghz,
        })
        .into_iter()
        .collect();
    let e = ClockEstimate::from_timings(add_ns, r.ratio * add_ns, claims);
    e.suspect
        .clone()
        .or_else(|| l1_cycles_suspect(r.l1_ns * e.ghz))
}

#[test]
fn the_clock_rule_over_the_fixture_machines() {
    let rows = rows();
    assert!(
        rows.len() >= 8,
        "the table has the machines: {}",
        rows.len()
    );
    for r in &rows {
        let why = verdict(r);
        // Each reason names the physical rule that failed.
        let names = match r.suspect.as_str() {
            "-" => {
                assert!(why.is_none(), "{}: {why:?}", r.machine);
                continue;
            }
            "chains" => "multiply / add",
            "shipping" => "any shipping core runs at",
            "L1" => "no cache can answer",
            other => panic!("{}: unknown verdict {other}", r.machine),
        };
        let why = why.unwrap_or_else(|| panic!("{}: not suspect", r.machine));
        assert!(why.contains(names), "{}: {why}", r.machine);
    }
}

#[test]
fn claims_set_no_ceiling() {
    // A Zen 5 guest told only its 2.596 GHz TSC rate runs at 4.29 GHz (1.65x);
    // a 1.8 GHz laptop part at 4.8 (2.7x). Neither is suspect.
    for (ghz, claim) in [(4.29, 2.596), (4.8, 1.8)] {
        let claims = vec![FrequencyClaim {
            source: "test".into(),
            ghz: claim,
        }];
        let e = ClockEstimate::from_timings(1.0 / ghz, 3.0 / ghz, claims);
        assert!(e.suspect.is_none(), "{e:?}");
        assert_eq!(e.claims.len(), 1, "claims are kept to be shown");
    }
}

#[test]
fn the_edges_of_the_rules() {
    assert!(outside_shipping_cores(6.2).is_none());
    assert!(outside_shipping_cores(6.6).is_some());
    assert!(outside_shipping_cores(0.25).is_none());
    assert!(outside_shipping_cores(0.1).is_some());
    assert!(outside_shipping_cores(f64::NAN).is_some());
    assert!(l1_cycles_suspect(2.0).is_none());
    assert!(l1_cycles_suspect(1.9).unwrap().contains("--ghz"));
    // A slow L1 reading (a busy host, an emulator) says nothing about the clock.
    assert!(l1_cycles_suspect(30.0).is_none());
    assert!(l1_cycles_suspect(f64::NAN).is_none());
}
