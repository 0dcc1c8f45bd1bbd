//! Independent passes of a reading (line size, ways, TLB reach): a pass
//! counts as evidence of its own only when it does not share the conditions
//! of the one before it. Back to back on one buffer, two passes see the same
//! physical pages (the same cache sets and DRAM banks) and the same
//! co-tenant burst or clock state, so they agree on whatever those caused.

use std::time::Duration;

use crate::engine::Engine;

/// The pause between passes: longer than a scheduler tick (at most 10 ms)
/// many times over and than a core's frequency step (a few ms), so a burst
/// of another tenant or a clock state seen by one pass has moved on by the
/// next; short beside the passes themselves.
pub const GAP: Duration = Duration::from_millis(300);

/// Separates the next pass from the last: a pause, and new buffers (other
/// physical pages) for the sizes the last one used last.
pub fn separate(engine: &mut Engine) {
    pause();
    engine.fresh_buffer();
}

/// Only the pause: for passes whose points each map a buffer of their own size anyway.
pub fn pause() {
    std::thread::sleep(GAP);
}
