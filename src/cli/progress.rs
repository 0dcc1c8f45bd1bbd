//! The progress bar on stderr (only when stderr is a terminal), and the
//! observer that drives it for any experiment: progress counts estimated
//! milliseconds, not steps, since steps differ a lot in cost (a 256 MiB
//! buffer is filled and walked before it is timed), and the ETA follows.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::experiments::{Observer, Step};

/// Progress of an experiment; silent when hidden.
pub struct Progress {
    bar: Option<ProgressBar>,
    show: bool,
}

impl Progress {
    /// A bar, drawn when `show` and stderr is a terminal.
    pub fn new(show: bool) -> Progress {
        Progress {
            bar: None,
            show: show && std::io::stderr().is_terminal(),
        }
    }

    /// Removes the bar.
    pub fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl<R> Observer<R> for Progress {
    fn planned(&mut self, steps: &[(String, u64)]) {
        if !self.show {
            return;
        }
        // A second plan (a sweep's refinement) replaces the first bar.
        self.clear();
        let total: u64 = steps.iter().map(|(_, cost)| cost).sum();
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% ETA {eta:<4} {msg}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        self.bar = Some(bar);
    }

    fn begin(&mut self, step: &Step) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "point {}/{}: {}",
                step.index + 1,
                step.total,
                step.label
            ));
        }
    }

    fn end(&mut self, step: &Step) {
        if let Some(bar) = &self.bar {
            bar.inc(step.cost_ms);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Says on stderr which step starts ("measuring L2: 1..34 lines 64 KiB
/// apart ..."): for experiments of a few long steps, where a bar says little.
#[derive(Default)]
pub struct Announce;

impl<R> Observer<R> for Announce {
    fn begin(&mut self, step: &Step) {
        eprintln!("measuring {} ...", step.label);
    }
}

/// [`Announce`], and every checkpoint handed to a function (e.g. one that
/// rewrites a results file, so an interrupted run keeps what it measured).
pub struct AnnounceAnd<F>(pub F);

impl<R, F: FnMut(&R) -> anyhow::Result<()>> Observer<R> for AnnounceAnd<F> {
    fn begin(&mut self, step: &Step) {
        eprintln!("measuring {} ...", step.label);
    }

    fn checkpoint(&mut self, partial: &R) -> anyhow::Result<()> {
        (self.0)(partial)
    }
}

/// The progress bar, and Ctrl-C (with an [`crate::cli::interrupt::Guard`]
/// installed) ends the run after the step in progress.
pub struct Stoppable(pub Progress);

impl<R> Observer<R> for Stoppable {
    fn planned(&mut self, steps: &[(String, u64)]) {
        Observer::<R>::planned(&mut self.0, steps);
    }

    fn begin(&mut self, step: &Step) {
        Observer::<R>::begin(&mut self.0, step);
    }

    fn end(&mut self, step: &Step) {
        Observer::<R>::end(&mut self.0, step);
    }

    fn interrupted(&self) -> bool {
        crate::cli::interrupt::interrupted()
    }
}

/// Runs `run` with Ctrl-C caught (the run stops after the step in progress)
/// and the progress bar drawn when `show`; the bar is cleared and the
/// previous SIGINT handler back before this returns, whatever `run` returned.
pub fn until_ctrl_c<T>(
    show: bool,
    run: impl FnOnce(&mut Stoppable) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let _guard = crate::cli::interrupt::Guard::install();
    let mut observer = Stoppable(Progress::new(show));
    let result = run(&mut observer);
    observer.0.clear();
    result
}
