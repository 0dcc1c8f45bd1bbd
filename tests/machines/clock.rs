//! The core clock from two chains of dependent instructions
//! (`platform::clock`): an add and a multiply (the row's cycles for each),
//! timed as memlat times them, and judged by the rule memlat applies on
//! the row's ISA. Cycles everywhere else (load-use, TLB costs) come from it
//! on a machine without a PMU.

use memlat::platform::clock::{ClockEstimate, FrequencyClaim, Multiply};

use super::every_row;
use super::model::Noise;
use super::parts::Isa;
use super::rows::Row;

/// The multiply rule memlat applies on the row's ISA.
fn multiply(isa: Isa) -> Multiply {
    match isa {
        Isa::X86 => Multiply::X86_64,
        Isa::Arm | Isa::RiscV => Multiply::OTHERS,
        Isa::Power => Multiply::POWER,
    }
}

/// How long each chain is timed, ns (`ESTIMATE_TIME`, 3 ms).
const CHAIN_NS: f64 = 3e6;

/// Nanoseconds per instruction of a chain of `cycles`-cycle instructions:
/// N and 2N instructions timed (the fastest of 5 tries each; a disturbance
/// only lengthens a run), each run read to the timer's step, the difference
/// over N.
fn chain_ns(row: &Row, cycles: f64, noise: &mut Noise) -> f64 {
    let per = cycles / row.ghz;
    let n = (CHAIN_NS / per).round();
    let mut run = |count: f64| -> f64 {
        (0..5)
            .map(|_| {
                let ns = count * per * (1.0 + 0.01 * noise.unit().abs()) + row.timer.read_ns;
                (ns / row.timer.step_ns).floor() * row.timer.step_ns
            })
            .fold(f64::INFINITY, f64::min)
    };
    let (single, double) = (run(n), run(2.0 * n));
    (double - single) / n
}

/// The clock estimate memlat makes on this row.
pub fn estimate(row: &Row, seed: u64) -> ClockEstimate {
    let mut noise = Noise::new(seed ^ 0xC10C);
    let add_ns = chain_ns(row, row.core.add_cycles, &mut noise);
    let mul_ns = chain_ns(row, row.core.mul_cycles, &mut noise);
    let claims = vec![FrequencyClaim {
        source: row.timer.name.into(),
        ghz: row.timer.ghz,
    }];
    ClockEstimate::judged(add_ns, mul_ns, claims, multiply(row.core.isa))
}

#[test]
fn the_core_clock_from_the_add_and_multiply_chains() {
    every_row("clock", |row, seed| {
        let e = estimate(row, seed);
        // The chains' noise is a percent a run; N and 2N runs, so 3%.
        if e.agree && e.suspect.is_none() && (e.ghz / row.ghz - 1.0).abs() < 0.03 {
            Ok(())
        } else {
            Err(format!(
                "{:.3} GHz (agree {}, ratio {:.2}), want {} GHz: {:?}",
                e.ghz, e.agree, e.ratio, row.ghz, e.suspect
            ))
        }
    });
}
