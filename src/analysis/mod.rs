//! Pure analysis: measured curves in, findings out. Nothing here measures;
//! every function is tested on made-up and recorded curves.
//!
//! - [`detect`]: cache levels (capacity, latency, confidence) from a latency curve;
//! - [`knee`]: the knee of a load-to-use curve and what it says about the core;
//! - [`assoc`]: the ways of a level from conflict misses;
//! - [`linesize`]: the line size from a stride sweep;
//! - [`stats`]: summaries, ratios with intervals, rank tests;
//! - [`changepoint`]: shifts in a time series (`memlat watch`);
//! - [`compare`] and [`compare_bandwidth`]: results side by side.

pub mod assoc;
pub mod changepoint;
pub mod compare;
pub mod compare_bandwidth;
pub mod detect;
pub mod distribution;
pub mod knee;
pub mod linesize;
pub mod loaded;
pub mod mlp;
pub mod readings;
pub mod stats;
