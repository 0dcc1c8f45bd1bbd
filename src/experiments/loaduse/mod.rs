//! `memlat loaduse` (seed 003): how many cycles after a load its value can be
//! used. A load, N NOPs, then an add that uses the loaded value, timed as N
//! grows, for data in L1, L2 and DRAM; docs/loaduse.md explains the method and
//! how to read the result.
//!
//! - the load-use kernels are [`crate::kernels::load_use`], one per N and ISA, on delta chains;
//! - `driver`: timing them at one working set, pass by pass;
//! - reading a curve (plateau, knees, slope, issue width, latency) is
//!   [`crate::analysis::knee`], pure;
//! - `levels`: what `--level` and `--nops` name, resolved against sysfs;
//! - `report`: the result structs and the words that explain them;
//! - `render`: text, CSV and the chart.

pub mod driver;
pub mod levels;
pub mod render;
pub mod report;
