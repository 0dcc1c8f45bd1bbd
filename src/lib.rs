//! memlat: memory-hierarchy latency by pointer chasing.
//!
//! Data flows one way: options (`cli`) -> buffer (`memory`) + chain (`chain`) ->
//! kernel (`kernel`) timed by `clock` and `counters` -> `runner` (warm-up,
//! calibration, repeats) -> [`runner::Measurement`] -> `export`.

#![warn(missing_docs)]

pub mod chain;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod counters;
pub mod error;
pub mod export;
pub mod kernel;
pub mod memory;
pub mod runner;
pub mod stats;
pub mod topology;
pub mod units;
