//! memlat: memory-hierarchy latency by pointer chasing.
//!
//! Data flows one way: options (`cli`) -> buffer (`memory`) + chain (`chain`) ->
//! kernel (`kernel`) timed by `clock` and `counters` -> `runner` (warm-up,
//! calibration, repeats) -> [`runner::Measurement`] -> `export`.

#![warn(missing_docs)]

pub mod analysis;
mod arch;
pub mod chain;
pub mod cli;
pub mod commands;
pub mod doctor;
pub mod error;
pub mod kernel;
pub mod levels;
pub mod loaduse;
pub mod output;
pub mod platform;
pub mod runner;
pub mod sweep;
pub mod units;
