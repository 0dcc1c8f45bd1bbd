//! When a measured core clock is suspect: only where physics says it cannot
//! be, never by a multiple of what the system claims. A guest told only its
//! TSC rate (2.6 GHz) runs its cores at 4.3; a laptop part sold at a 1.8 GHz
//! base boosts to 4.8. Claims are shown beside the clock, not multiplied
//! into a ceiling.
//!
//! A clock is suspect when
//! - the add and multiply chains disagree (their time ratio is not the
//!   multiply's documented latency: [`super::documented_mul_cycles`]);
//! - it lies outside [`SHIPPING_GHZ`], what any shipping core runs at;
//! - or an L1 hit would take fewer than [`MIN_L1_CYCLES`].
//!
//! The add-immediate fold of Golden Cove (adds executed at rename, several a
//! cycle: a chain read 19.8 GHz on a 3.5 GHz core) fails the first two.

/// What any shipping core runs at, GHz. The fastest boost to about 6.2 GHz
/// (Intel's Core i9-14900KS, 2024), so 6.5 leaves room for a faster part
/// without admitting a folded add chain (10 GHz and up); no core memlat can
/// run on clocks below 0.2 GHz (the slowest RISC-V and Arm boards it knows
/// run at 0.4 to 1 GHz).
pub const SHIPPING_GHZ: std::ops::RangeInclusive<f64> = 0.2..=6.5;

/// No cache answers a dependent load in fewer cycles: the address must be
/// generated and the tags compared before the data can go back (2 cycles on
/// the simplest in-order cores, 4 to 6 on today's).
pub const MIN_L1_CYCLES: f64 = 2.0;

/// Why a clock of `ghz` cannot be a core's, when it cannot.
pub fn outside_shipping_cores(ghz: f64) -> Option<String> {
    (!SHIPPING_GHZ.contains(&ghz)).then(|| {
        format!(
            "the core clock measured {ghz:.2} GHz, outside the {}..{} GHz any shipping core runs at (the fastest boost to about 6.2 GHz): the chains were not timed at the core's clock (an emulator, adds folded at rename, or a stalled guest); give the clock with --ghz",
            SHIPPING_GHZ.start(),
            SHIPPING_GHZ.end()
        )
    })
}

/// Why the clock is suspect, when an L1 hit measured `cycles` at it.
pub fn l1_cycles_suspect(cycles: f64) -> Option<String> {
    (cycles.is_finite() && cycles < MIN_L1_CYCLES).then(|| {
        format!(
            "an L1 hit took {cycles:.1} cycles at this clock, under the {MIN_L1_CYCLES} cycles no cache can answer a dependent load in: the clock is too high; give it with --ghz"
        )
    })
}

#[cfg(test)]
#[path = "physics_tests.rs"]
mod tests;
