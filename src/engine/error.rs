//! What can go wrong in a measurement, in the library's words: no flag names
//! (the CLI adds the flag that fixes each, see `cli::errors`).

use crate::chain::ChainError;
use crate::platform::clock::ClockRequest;
use crate::units::HumanBytes;

/// Errors of the engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The buffer would not fit in available memory.
    #[error(
        "a {size} buffer needs about {needed} but only {available} is available (MemAvailable)"
    )]
    NotEnoughMemory {
        /// Requested size.
        size: HumanBytes,
        /// Bytes needed including bookkeeping.
        needed: HumanBytes,
        /// MemAvailable.
        available: HumanBytes,
    },
    /// The sizes cannot make a chain.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// A point asked for something the engine cannot measure.
    #[error("{0}")]
    Invalid(String),
    /// The kernel did not end where the chain says: the number would be a lie.
    #[error(
        "the {kernel} kernel ended at byte offset {got} but the chain says {expected} after {loads} loads; refusing to report a latency (please report this as a bug)"
    )]
    ChainMismatch {
        /// Kernel name.
        kernel: &'static str,
        /// Where the chain says it must end.
        expected: u64,
        /// Where it ended.
        got: u64,
        /// Loads followed.
        loads: u64,
    },
    /// This build has no such kernel (load-use without asm, or too many NOPs).
    #[error("this build has no {0} kernel for {arch}", arch = std::env::consts::ARCH)]
    NoKernel(&'static str),
    /// The clock asked for cannot be used here.
    #[error("{why}")]
    ClockUnavailable {
        /// What was asked for.
        request: ClockRequest,
        /// Why it cannot be had.
        why: String,
    },
    /// The thread could not be pinned.
    #[error("pinning to CPU {cpu}: {source}")]
    Pin {
        /// The CPU.
        cpu: usize,
        /// The OS error.
        source: std::io::Error,
    },
    /// The buffer could not be mapped.
    #[error("mapping {size}: {source}")]
    Map {
        /// Its size.
        size: HumanBytes,
        /// The OS error.
        source: std::io::Error,
    },
    /// The buffer could not be bound to a NUMA node.
    #[error("binding memory to NUMA node {node}: {source}")]
    Bind {
        /// The node.
        node: usize,
        /// The OS error.
        source: std::io::Error,
    },
    /// The caller's stop flag ([`crate::engine::EngineBuilder::stop_on`]) was
    /// raised: the point was abandoned, nothing of it is reported.
    #[error("interrupted: the measurement was stopped before it finished")]
    Interrupted,
    /// Another system call failed.
    #[error("{context}: {source}")]
    System {
        /// What memlat was doing.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl Error {
    /// Whether the user can fix it with a setting (the CLI exits 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::NotEnoughMemory { .. }
                | Error::Chain(_)
                | Error::Invalid(_)
                | Error::ClockUnavailable { .. }
                | Error::NoKernel(_)
        )
    }
}

/// Wraps an OS error with what memlat was doing.
pub(crate) fn system(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let context = context.into();
    move |source| Error::System { context, source }
}

impl From<crate::limits::LimitError> for Error {
    fn from(e: crate::limits::LimitError) -> Error {
        Error::Invalid(e.to_string())
    }
}
