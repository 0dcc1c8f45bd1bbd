//! What every result file records about its own layout: the schema
//! version and the command line. Results are built in experiments/, so this
//! sits here, below output/, which writes them.

/// The version of the result JSON layout: 2 added `schema_version`, `kind`
/// and `host` to every result (memlat 0.1.0's files, without them, are 1);
/// 3 gives every result the whole envelope: `memlat_version`, `command`,
/// `started`, `finished` and `noise` too.
pub const SCHEMA_VERSION: u32 = 3;

/// The oldest layout this memlat reads: 1, memlat 0.1.0's files (which
/// record no `schema_version`), since that release's sweeps are what users
/// have kept; 2 and 3 read as well.
pub const OLDEST_SCHEMA: u32 = 1;

/// The command line that made a result, as the process received it.
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}
