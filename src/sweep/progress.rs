//! The progress bar on stderr (only when stderr is a terminal). Points differ
//! a lot in cost (a 256 MiB buffer is filled and walked in full before it is
//! timed), so progress counts estimated milliseconds, not points, and the ETA
//! follows.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::{Point, ROUNDS};

/// Progress of a sweep; silent when hidden.
pub struct Progress {
    bar: Option<ProgressBar>,
    total_points: usize,
    done_points: usize,
}

/// Rough cost of measuring `spec`, in milliseconds: per repeat, calibration
/// plus the timed rounds plus the clock estimates, and a warm-up walk of the
/// whole chain; filling the buffer once.
pub fn cost_ms(spec: &Point) -> u64 {
    let sample = spec.sample_time.as_secs_f64() * 1e3;
    let per_repeat = sample * (ROUNDS as f64 + 1.0) + 10.0;
    let lines = (spec.size / 64) as f64;
    // About 20 ns a line to walk once (a mix of cache hits and misses), and
    // 0.25 ns a byte to fault in and fill.
    let walk = lines * 20e-6;
    let fill = spec.size as f64 * 0.25e-6;
    (spec.repeats as f64 * (per_repeat + walk) + fill + 40.0).round() as u64
}

impl Progress {
    /// A bar over `points` (already-done points excluded) when `show` and stderr
    /// is a terminal; otherwise nothing is drawn.
    pub fn new(points: &[Point], show: bool) -> Progress {
        let bar = (show && std::io::stderr().is_terminal()).then(|| {
            let total: u64 = points.iter().map(cost_ms).sum();
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% ETA {eta:<4} {msg}",
                )
                .expect("the template is valid")
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress {
            bar,
            total_points: points.len(),
            done_points: 0,
        }
    }

    /// Says which point is being measured.
    pub fn start(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "point {}/{}: {what}",
                self.done_points + 1,
                self.total_points
            ));
        }
    }

    /// Counts `spec` as done.
    pub fn finish_point(&mut self, spec: &Point) {
        self.done_points += 1;
        if let Some(bar) = &self.bar {
            bar.inc(cost_ms(spec));
        }
    }

    /// Removes the bar.
    pub fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}
