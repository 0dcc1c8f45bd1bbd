//! memlat: memory-hierarchy latency by pointer chasing.
//!
//! Data flows one way: options (`cli`) -> buffer (`memory`) + chain (`chain`) ->
//! kernel (`kernel`) timed by `clock` and `counters` -> `runner` (warm-up,
//! calibration, repeats) -> [`runner::Measurement`] -> `export`.

#![warn(missing_docs)]

mod arch;
pub mod assoc;
pub mod chain;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod counters;
pub mod detect;
pub mod doctor;
pub mod error;
pub mod export;
pub mod kernel;
pub mod levels;
pub mod linesize;
pub mod loaduse;
pub mod machine;
pub mod memory;
pub mod platform;
pub mod plot;
pub mod prefetch;
pub mod runner;
pub mod stats;
pub mod sweep;
pub mod topology;
pub mod units;
