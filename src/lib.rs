//! memlat: memory-hierarchy latency by pointer chasing. Every load's address
//! is the value the previous load returned, so loads cannot overlap and the
//! time per load is the latency of whatever level holds the buffer.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! let mut engine = memlat::Engine::builder().build()?;
//! let point = memlat::Point::random(16 << 10).with_sample_time(Duration::from_millis(5));
//! let m = engine.measure(&point)?;
//! println!("{:.2} ns, {:.1} cycles per load", m.ns_per_load.median, m.cycles_per_load.median);
//! assert!(m.ns_per_load.median > 0.0);
//! # Ok::<(), memlat::Error>(())
//! ```
//!
//! Data flows one way: a [`Point`] (what to measure) -> the [`Engine`]
//! (workload: buffer + [`chain`] + [`kernels`]; sampling: A/2A, clock,
//! counters from [`platform`]) -> a [`Measurement`] (every sample, pure data)
//! -> [`analysis`] (levels, knees, ways) and [`output`] (tables, JSON, plots).
//! The command line (`cli`, `commands`) only turns flags into points and
//! results into files.

#![warn(missing_docs)]

// Warnings and the summary go to stderr; std's eprintln! panics when stderr
// is closed or full (`2>/dev/full`, `2>&1 | head -1`), which would end a run
// with exit 101 and lose its files. This shadows std's for the whole crate
// (textual scope comes before the prelude): a failed write is dropped.
// Every line goes through `printable` (a file name or host name read from
// a file cannot drive the terminal, nor fill stderr).
macro_rules! eprintln {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            $crate::printable::printable_lines(&line, $crate::printable::MESSAGE_CHARS)
        );
    }};
}

pub mod analysis;
mod arch;
pub mod chain;
#[cfg(feature = "cli")]
pub mod cli;
pub mod engine;
pub mod error;
pub mod experiments;
pub mod input;
pub mod kernels;
pub mod limits;
pub mod output;
pub mod platform;
pub mod printable;
pub mod readback;
pub mod safe_fs;

pub use engine::{Engine, EngineBuilder, Error, Measurement, Point};
pub mod units;
