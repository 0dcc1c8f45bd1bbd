//! Time and the core clock.
//!
//! Nanoseconds come from the monotonic clock (`Instant`, CLOCK_MONOTONIC through
//! the vDSO). Cycles come from perf's `cycles` event when the machine has a PMU;
//! otherwise from nanoseconds times a core clock estimated here, by timing two
//! chains of dependent instructions whose latency is documented and whose
//! inputs no renamer can know: `add` (1 cycle; 2 on POWER) and `imul`/`mul`
//! (3 cycles on x86; 2 to 5 on Arm and RISC-V; 4 to 5 on POWER). The
//! estimate stands unless physics rules it out ([`physics`]: the chains
//! disagree, no shipping core runs at that clock, or an L1 hit would take
//! under 2 cycles); otherwise it says why it is suspect. What the system
//! claims is shown beside it, never a bound.

pub mod claims;
// The counter helpers serve the ISAs with a user-space counter.
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )),
    allow(dead_code)
)]
pub(crate) mod counter;
pub mod physics;

pub use claims::FrequencyClaim;
pub use counter::{Counts, IsaCounter};
pub use physics::{MIN_L1_CYCLES, SHIPPING_GHZ, l1_cycles_suspect};

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::kernels::{self, ClockChain, UNROLL};

/// What `--clock` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ClockRequest {
    /// The most accurate that works: perf cycles, else a user-readable core-cycle
    /// counter, else the monotonic clock with cycles estimated.
    Auto,
    /// The ISA's counter read in user space (rdcycle, pmccntr_el0, rdpmc; or the
    /// time bases rdtsc, cntvct_el0, rdtime when no cycle counter is readable).
    CycleCounter,
    /// perf's cycles event (needs a hardware PMU).
    Perf,
    /// clock_gettime(CLOCK_MONOTONIC); cycles estimated from the core clock.
    Monotonic,
}

/// The most accurate counter this ISA and kernel let user space read: a
/// core-cycle counter when granted, else the ISA's constant-rate time base.
pub fn best_isa_counter() -> Result<IsaCounter, String> {
    crate::arch::best_counter()
}

/// Runs `work` and returns how long it took.
pub fn time<R>(work: impl FnOnce() -> R) -> (Duration, R) {
    let start = Instant::now();
    let result = work();
    (start.elapsed(), result)
}

/// Doubles `trips` from 1 until `run(trips)` lasts at least `target`, and returns
/// that trip count (divan's way of getting far above the timer's precision).
pub fn trips_lasting(target: Duration, mut run: impl FnMut(u64) -> Duration) -> u64 {
    let mut trips = 1u64;
    loop {
        let took = run(trips);
        if took >= target || trips >= 1 << 40 {
            // Scale the last measurement to the target rather than doubling past it.
            let scale = target.as_secs_f64() / took.as_secs_f64().max(1e-9);
            return ((trips as f64 * scale).ceil() as u64).max(1);
        }
        trips *= 2;
    }
}

/// Best (shortest) time of `tries` runs of `run(trips)`: the run least disturbed
/// by interrupts and other tenants.
fn best_of(tries: usize, trips: u64, run: impl Fn(u64)) -> Duration {
    (0..tries)
        .map(|_| time(|| run(trips)).0)
        .min()
        .unwrap_or_default()
}

/// Nanoseconds per trip of `run`, with fixed costs (timer reads, the call)
/// cancelled by timing N and 2N trips and taking the difference.
pub fn ns_per_trip(target: Duration, tries: usize, run: impl Fn(u64)) -> f64 {
    let trips = trips_lasting(target, |t| time(|| run(t)).0);
    let single = best_of(tries, trips, &run);
    let double = best_of(tries, 2 * trips, &run);
    let diff = double.as_nanos() as f64 - single.as_nanos() as f64;
    // If noise made the difference meaningless, fall back to the plain ratio.
    if diff <= 0.0 {
        double.as_nanos() as f64 / (2 * trips) as f64
    } else {
        diff / trips as f64
    }
}

/// How long each chain of the core-clock estimate is timed for (N and 2N trips).
const ESTIMATE_TIME: Duration = Duration::from_millis(3);

/// Tries of each chain's N and 2N runs; the fastest of each is kept.
const ESTIMATE_TRIES: usize = 5;

/// Nanoseconds per instruction of `chain`, fixed costs cancelled, fastest of the tries.
fn ns_per_instruction(chain: ClockChain, target: Duration) -> f64 {
    ns_per_trip(target, ESTIMATE_TRIES, |trips| {
        std::hint::black_box(kernels::clock_chain(chain, trips));
    }) / UNROLL as f64
}

/// The core clock estimated from the add and multiply chains, checked
/// against each other and against what any core can do.
pub fn estimate_core_clock(cpu: usize) -> ClockEstimate {
    let mut estimate = estimate_once(cpu);
    // A disturbance (another tenant on this CPU) only stretches a chain, so
    // chains that disagree are timed again before the clock is called suspect.
    for _ in 1..ESTIMATE_ATTEMPTS {
        if estimate.agree {
            break;
        }
        estimate = estimate_once(cpu);
    }
    estimate
}

/// How often the two chains are timed before their disagreement is believed.
const ESTIMATE_ATTEMPTS: usize = 3;

fn estimate_once(cpu: usize) -> ClockEstimate {
    let add_ns = ns_per_instruction(ClockChain::Add, ESTIMATE_TIME);
    let mul_ns = ns_per_instruction(ClockChain::Mul, ESTIMATE_TIME);
    let mut claims = claims::claimed_frequencies(cpu);
    if let Some(tsc) = crate::arch::tsc_ghz() {
        claims.push(FrequencyClaim {
            source: "TSC rate, timed".into(),
            ghz: tsc,
        });
    }
    ClockEstimate::from_timings(add_ns, mul_ns, claims)
}

/// The core clock in GHz (see [`estimate_core_clock`]).
pub fn estimate_core_ghz() -> f64 {
    estimate_core_clock(0).ghz
}

/// One chain's reading of the core clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainReading {
    /// `add` or `mul`.
    pub kind: ClockChain,
    /// The instruction timed.
    pub instruction: String,
    /// Cycles one instruction takes, as documented (the multiply's is found
    /// from the ratio where the ISA's cores differ).
    pub cycles: Option<f64>,
    /// Nanoseconds one instruction took.
    pub ns: f64,
    /// The core clock it implies, GHz (`cycles / ns`); null when its latency is unknown.
    pub ghz: Option<f64>,
}

/// How the core clock was estimated: the chains, whether they agree, what
/// the system claims (shown, not used as a bound), and the estimate memlat uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockEstimate {
    /// The core clock memlat uses, GHz.
    pub ghz: f64,
    /// Each chain's reading.
    pub chains: Vec<ChainReading>,
    /// Multiply time over add time.
    pub ratio: f64,
    /// The chain the estimate comes from.
    pub basis: ClockChain,
    /// Whether the ratio is what the ISA's documented latencies say
    /// (a whole number of cycles within 5%: 3 to 6 on x86, 2 to 5 on Arm and RISC-V).
    pub agree: bool,
    /// No shipping core runs faster, GHz ([`SHIPPING_GHZ`]'s top: the
    /// fastest boost to about 6.2 GHz); a physical bound, not a multiple of a claim.
    pub bound_ghz: Option<f64>,
    /// The frequencies the system claims.
    pub claims: Vec<FrequencyClaim>,
    /// Why the estimate should not be trusted, when it should not.
    pub suspect: Option<String>,
}

/// What an ISA's cores document of the two instructions the clock chains
/// time, a dependent 64-bit add and multiply: a multiply cannot be folded at
/// rename, so its time over the add's, times the add's cycles, is a whole
/// number of cycles when the adds were not folded either.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Multiply {
    /// Cycles a dependent add takes on the ISA's cores: 1 on every x86, Arm
    /// and RISC-V core memlat knows; 2 on POWER9 and POWER10, whose simple
    /// fixed-point ops all take 2 (GCC's IBM-written scheduling models,
    /// `rs6000/power9.md` and `power10.md`). The clock is its cycles over
    /// the add chain's time.
    pub add_cycles: f64,
    /// The whole numbers of cycles it takes on the ISA's cores, least and most.
    pub cycles: (f64, f64),
    /// The cycles to read the multiply chain by when the ratio is none of
    /// them (a renamer folding adds): one number that holds on every core
    /// whose renamer folds, where there is one.
    pub fallback: Option<f64>,
    /// The ISA, as the verdicts name it.
    pub isa: &'static str,
}

impl Multiply {
    /// x86-64's `imul r64, r64`: 3 cycles on every Intel core since Sandy
    /// Bridge and every AMD Zen (the cores whose renamers fold adds), up to
    /// 6 on AMD Jaguar and Bulldozer.
    pub const X86_64: Multiply = Multiply {
        add_cycles: 1.0,
        cycles: (3.0, 6.0),
        fallback: Some(3.0),
        isa: "x86",
    };

    /// Arm's and RISC-V's `mul x, x, x` (and any other ISA's): 2 cycles
    /// (Neoverse V2) to 5 (Cortex-A72), by core, so no one number holds.
    pub const OTHERS: Multiply = Multiply {
        add_cycles: 1.0,
        cycles: (2.0, 5.0),
        fallback: None,
        isa: "Arm and RISC-V",
    };

    /// POWER's `add` and `mulld`: 2 cycles for the add, 5 for a multiply
    /// on POWER9 and 4 from one multiply to the next on POWER10 (its
    /// multiply-to-multiply bypass), so a ratio of 2 or 2.5 (GCC's
    /// IBM-written scheduling models, `rs6000/power9.md` and `power10.md`).
    pub const POWER: Multiply = Multiply {
        add_cycles: 2.0,
        cycles: (4.0, 5.0),
        fallback: None,
        isa: "POWER",
    };

    /// This build's ISA.
    pub const HOST: Multiply = crate::arch::MULTIPLY;

    /// The multiply latency in cycles that a multiply / add time `ratio`
    /// shows, if it is one the ISA documents: `ratio` times the add's
    /// cycles, a whole number of cycles within [`Multiply::cycles`], to 5%.
    pub fn documented(&self, ratio: f64) -> Option<f64> {
        let (low, high) = self.cycles;
        let cycles = ratio * self.add_cycles;
        let whole = cycles.round();
        ((low..=high).contains(&whole) && (cycles - whole).abs() <= 0.05 * whole).then_some(whole)
    }
}

/// The multiply latency in cycles that a multiply / add time `ratio` shows,
/// if it is one this build's ISA documents ([`Multiply::documented`]).
pub fn documented_mul_cycles(ratio: f64) -> Option<f64> {
    Multiply::HOST.documented(ratio)
}

impl ClockEstimate {
    /// Judges chain timings (ns per instruction) against each other and
    /// against the clocks shipping cores run at; `claims` are kept to be shown.
    pub fn from_timings(add_ns: f64, mul_ns: f64, claims: Vec<FrequencyClaim>) -> ClockEstimate {
        Self::judged(add_ns, mul_ns, claims, Multiply::HOST)
    }

    /// [`ClockEstimate::from_timings`] for the cores of the ISA whose
    /// multiply is `multiply` (a model of another machine judges its chains
    /// by the rule memlat applies there).
    pub fn judged(
        add_ns: f64,
        mul_ns: f64,
        claims: Vec<FrequencyClaim>,
        multiply: Multiply,
    ) -> ClockEstimate {
        let ratio = mul_ns / add_ns;
        let mul_cycles = multiply.documented(ratio);
        let fallback_cycles = multiply.fallback;
        let (low, high) = multiply.cycles;
        let add_ghz = multiply.add_cycles / add_ns;
        let mul_ghz = mul_cycles.or(fallback_cycles).map(|c| c / mul_ns);
        let agree = mul_cycles.is_some();
        // Where an add takes more than a cycle, the ratio is read in its cycles.
        let per_add = if multiply.add_cycles == 1.0 {
            String::new()
        } else {
            format!(
                " ({:.2} cycles at an add's {})",
                ratio * multiply.add_cycles,
                multiply.add_cycles
            )
        };
        // When they agree, the add chain (more instructions in the same time)
        // is the estimate. When not, a renamer may be folding the adds: a
        // multiply cannot be folded, so its documented latency decides on x86.
        let (ghz, basis, mut suspect) = match (agree, mul_ghz) {
            (true, _) => (add_ghz, ClockChain::Add, None),
            (false, Some(m)) => (
                m,
                ClockChain::Mul,
                Some(format!(
                    "the add and multiply chains disagree (multiply / add = {ratio:.2}{per_add}, not a whole number of cycles from {low} to {high}): cycles come from the multiply chain at its {} cycles on current cores ({m:.3} GHz) and are uncertain",
                    fallback_cycles.unwrap_or(f64::NAN)
                )),
            ),
            (false, None) => (
                add_ghz,
                ClockChain::Add,
                Some(format!(
                    "the multiply / add time ratio {ratio:.2}{per_add} is not a whole number of cycles from {low} to {high}: the add chain's {add_ghz:.3} GHz is unconfirmed (an emulator, or a busy machine)"
                )),
            ),
        };
        if let Some(why) = physics::outside_shipping_cores(ghz) {
            suspect = Some(match suspect {
                Some(chains) => format!("{chains}; {why}"),
                None => why,
            });
        }
        let chains = vec![
            ChainReading {
                kind: ClockChain::Add,
                instruction: ClockChain::Add.instruction().into(),
                cycles: Some(multiply.add_cycles),
                ns: add_ns,
                ghz: Some(add_ghz),
            },
            ChainReading {
                kind: ClockChain::Mul,
                instruction: ClockChain::Mul.instruction().into(),
                cycles: mul_cycles.or(fallback_cycles),
                ns: mul_ns,
                ghz: mul_ghz,
            },
        ];
        ClockEstimate {
            ghz,
            chains,
            ratio,
            basis,
            agree,
            bound_ghz: Some(*SHIPPING_GHZ.end()),
            claims,
            suspect,
        }
    }

    /// Why the estimate is suspect by today's rule, judged again from its
    /// chains' times: files written before it (memlat 0.1 to 0.2) stored a
    /// verdict that multiplied a claimed frequency into a ceiling.
    pub fn rejudged(&self) -> Option<String> {
        let ns = |kind| self.chains.iter().find(|c| c.kind == kind).map(|c| c.ns);
        match (ns(ClockChain::Add), ns(ClockChain::Mul)) {
            (Some(add), Some(mul)) => Self::from_timings(add, mul, Vec::new()).suspect,
            _ => self.suspect.clone(),
        }
    }

    /// The chain to time beside samples, and its cycles per instruction:
    /// the add chain, unless only the multiply chain could be trusted.
    pub fn sample_chain(&self) -> (ClockChain, f64) {
        let reading = self
            .chains
            .iter()
            .find(|c| c.kind == self.basis)
            .expect("the basis is one of the chains");
        (self.basis, reading.cycles.unwrap_or(1.0))
    }
}

/// A clock chain sized to last about a given time, timed beside measurements
/// so their cycles follow the clock of the moment.
#[derive(Debug, Clone, Copy)]
pub struct SampleClock {
    chain: ClockChain,
    cycles_per_instruction: f64,
    trips: u64,
}

impl SampleClock {
    /// Calibrates the chain the estimate trusts to last about `target`.
    pub fn lasting(target: Duration, estimate: &ClockEstimate) -> SampleClock {
        let (chain, cycles_per_instruction) = estimate.sample_chain();
        let trips = trips_lasting(target, |t| {
            time(|| std::hint::black_box(kernels::clock_chain(chain, t))).0
        });
        SampleClock {
            chain,
            cycles_per_instruction,
            trips,
        }
    }

    /// Nanoseconds for one run of the chain.
    pub fn time_ns(&self) -> f64 {
        let (chain, trips) = (self.chain, self.trips);
        time(|| std::hint::black_box(kernels::clock_chain(chain, trips)))
            .0
            .as_nanos() as f64
    }

    /// The core clock in GHz that one run taking `ns` nanoseconds implies.
    pub fn ghz(&self, ns: f64) -> f64 {
        (self.trips * UNROLL) as f64 * self.cycles_per_instruction / ns
    }
}

/// The loop's own cost: nanoseconds per trip of the empty loop (seed 001's calibration).
pub fn empty_loop_ns_per_trip() -> f64 {
    ns_per_trip(Duration::from_millis(2), 5, kernels::empty_loop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_lasting_scales_to_the_target() {
        // A fake run that takes 1 µs per trip.
        let trips = trips_lasting(Duration::from_millis(1), Duration::from_micros);
        assert!((1000..=1100).contains(&trips), "{trips}");
    }

    fn claim(ghz: f64) -> Vec<FrequencyClaim> {
        vec![FrequencyClaim {
            source: "test".into(),
            ghz,
        }]
    }

    #[test]
    fn chains_that_agree_give_the_add_clock() {
        // 3.5 GHz: an add takes 0.2857 ns and a 3-cycle multiply 0.857 ns
        // (2 and 3 cycles elsewhere: 0.571 or 0.857 ns).
        let mul = Multiply::HOST.fallback.unwrap_or(2.0);
        let e = ClockEstimate::from_timings(1.0 / 3.5, mul / 3.5, claim(2.5));
        assert!(e.agree && e.suspect.is_none(), "{e:?}");
        assert!((e.ghz - 3.5).abs() < 1e-9);
        assert_eq!(e.sample_chain(), (ClockChain::Add, 1.0));
        assert_eq!(e.chains[1].cycles, Some(mul));
        // A verdict stored under the old claim rule is judged again.
        let stored = ClockEstimate {
            suspect: Some("more than 1.6 x the highest claim".into()),
            ..e
        };
        assert_eq!(stored.rejudged(), None);
    }

    #[test]
    fn folded_adds_are_caught_by_the_multiply_chain() {
        // Golden Cove folding `add reg, imm`: five adds a cycle read 17.5 GHz.
        let e = ClockEstimate::from_timings(1.0 / 17.5, 3.0 / 3.5, Vec::new());
        assert!(!e.agree);
        assert!(e.suspect.is_some());
        if Multiply::HOST.fallback.is_some() {
            assert!((e.ghz - 3.5).abs() < 1e-9, "{e:?}");
            assert_eq!(e.sample_chain(), (ClockChain::Mul, 3.0));
        }
    }

    #[test]
    fn documented_multiply_latencies() {
        if Multiply::HOST.fallback == Some(3.0) {
            assert_eq!(documented_mul_cycles(3.1), Some(3.0));
            assert_eq!(documented_mul_cycles(2.6), None);
            assert_eq!(documented_mul_cycles(15.0), None);
            // Jaguar and Bulldozer: a 6-cycle imul is a whole ratio too
            // (3 cycles assumed there read the clock 50% low).
            assert_eq!(documented_mul_cycles(6.1), Some(6.0));
        } else {
            assert_eq!(documented_mul_cycles(2.02), Some(2.0));
            assert_eq!(documented_mul_cycles(4.1), Some(4.0));
            assert_eq!(documented_mul_cycles(2.5), None);
            assert_eq!(documented_mul_cycles(1.0), None);
        }
    }

    #[test]
    fn power_reads_its_ratio_in_two_cycle_adds() {
        // POWER10 at 3.8 GHz: a 2-cycle add and a multiply 4 cycles after
        // the one before (POWER9: 5), so a ratio of 2 (2.5); 1-cycle adds
        // would read the clock at half and a ratio of 2 as a 2-cycle multiply.
        let p = Multiply::POWER;
        assert_eq!(p.documented(2.0), Some(4.0));
        assert_eq!(p.documented(2.5), Some(5.0));
        assert_eq!(p.documented(3.0), None);
        assert_eq!(p.documented(1.0), None);
        let e = ClockEstimate::judged(2.0 / 3.8, 4.0 / 3.8, Vec::new(), p);
        assert!(e.agree && e.suspect.is_none(), "{e:?}");
        assert!((e.ghz - 3.8).abs() < 1e-9, "{e:?}");
        assert_eq!(e.sample_chain(), (ClockChain::Add, 2.0));
        let folded = ClockEstimate::judged(1.0 / 3.8, 4.0 / 3.8, Vec::new(), p);
        let why = folded.suspect.expect("a ratio of 4 is no POWER multiply");
        assert!(why.contains("(8.00 cycles at an add's 2)"), "{why}");
    }

    /// On this host, whatever runs beside it: both chains give a positive
    /// clock, and the verdict follows their ratio. Whether they agree on an
    /// idle core is a live claim about the host, not a unit test's (another
    /// test on the other vCPU can stretch one chain): `memlat doctor` shows it.
    #[test]
    fn the_chains_verdict_follows_their_ratio_on_this_core() {
        if !crate::platform::counters::perf_syscall_available() {
            eprintln!(
                "skipped: no perf_event_open, so probably an emulator, where instruction timings mean nothing"
            );
            return;
        }
        let e = estimate_core_clock(0);
        let ghz: Vec<f64> = e.chains.iter().filter_map(|c| c.ghz).collect();
        assert_eq!(ghz.len(), 2, "{e:?}");
        assert!(ghz.iter().all(|g| g.is_finite() && *g > 0.0), "{e:?}");
        if !e.agree {
            assert!(e.suspect.is_some(), "{e:?}");
        }
    }
}
