//! The experiments, one shape each: a plan (pure: what to measure), a run
//! over the [`crate::Engine`], and a report (pure data, serialisable).
//!
//! - [`sweep`]: sizes x strides or patterns (seed 004 sections 2-4);
//! - [`fixed_levels`]: seed 002's sizes from the caches claimed;
//! - [`loaduse`]: load-to-use latency with N NOPs (seed 003);
//! - [`mlp`]: misses in flight, N chains side by side;
//! - [`doctor`]: what the machine lets memlat measure.

pub mod assoc;
pub mod bandwidth;
pub mod c2c;
pub mod doctor;
pub mod fixed_levels;
pub mod linesize;
pub mod loaded;
pub mod loaduse;
pub mod memory;
pub mod mlp;
pub mod noise;
pub mod numa;
pub mod passes;
pub mod plateau_history;
mod plateau_levels;
pub mod plateaus;
pub mod points;
pub mod quick;
pub mod schema;
pub mod sweep;
pub mod tlb;
pub mod watch;

/// One step of an experiment (usually a point), for progress reports.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// From 0.
    pub index: usize,
    /// Steps planned.
    pub total: usize,
    /// What is measured (`random at 1.5 MiB`).
    pub label: &'a str,
    /// Estimated cost, milliseconds.
    pub cost_ms: u64,
}

/// What an experiment tells whoever runs it, and asks them: progress,
/// whether to stop early, and each partial result to keep (so nothing
/// finished is lost when a run is cut short). Every method has a default
/// that does nothing.
pub trait Observer<R> {
    /// The steps to come, with their estimated costs.
    fn planned(&mut self, _steps: &[(String, u64)]) {}
    /// A step starts.
    fn begin(&mut self, _step: &Step) {}
    /// A step ended.
    fn end(&mut self, _step: &Step) {}
    /// Whether to stop after the step in progress (Ctrl-C).
    fn interrupted(&self) -> bool {
        false
    }
    /// The result so far, after every step and at the end.
    fn checkpoint(&mut self, _partial: &R) -> anyhow::Result<()> {
        Ok(())
    }
}

/// An observer that watches nothing: for library callers who only want the result.
pub struct Quiet;

impl<R> Observer<R> for Quiet {}
