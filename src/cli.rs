//! Command-line definitions only (clap derive); commands/ turns them into work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::chain::Pattern;
use crate::kernel::KernelKind;
use crate::memory::PageRequest;
use crate::units::parse_size;

/// Measures how long a load takes from L1, L2, L3, DRAM or another NUMA node,
/// by pointer chasing: every load's address is the value the previous load
/// returned, so loads cannot overlap and the time per load is the latency.
///
/// With no command, memlat measures a random chain at a few sizes chosen from
/// this machine's caches (L1 to DRAM) and prints a short table.
#[derive(Debug, Parser)]
#[command(name = "memlat", version, propagate_version = true)]
pub struct Cli {
    /// What to do; without one, a quick table from L1 to DRAM.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Options of the quick table (used when no command is given).
    #[command(flatten)]
    pub quick: QuickArgs,
}

/// memlat's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure one size and stride (seed 004's ptr_chase, done right).
    ///
    /// Prints seed 004's `key : value` lines (size, stride, distinct_blocks,
    /// accesses, last element, one line per event, OK), then the latency:
    /// ns and cycles per load as min / median / max over the repeats.
    ///
    /// Examples:
    ///   memlat run -n 16K -s 64                      # L1, stride chain
    ///   memlat run -n 1G --pattern random            # DRAM
    ///   memlat run -n 53248 -s 4096                 # 13 lines 4 KiB apart: conflict misses
    ///   memlat run -n 256K --pattern random -e task-clock,page-faults --format json
    Run(RunArgs),
    /// List the perf events memlat knows and whether this machine can count each.
    Events(EventsArgs),
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `key : value` lines a person (or seed 004's pandas reader) can read.
    Text,
    /// One JSON object with every sample.
    Json,
    /// One row per repeat, with a header.
    Csv,
}

/// Flags shared by every command that measures.
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    /// Chain pattern: `stride` (prefetchers can follow it), `random` (one node
    /// per --line, one random cycle), `page-random` (random within 4 KiB pages).
    #[arg(long, value_enum)]
    pub pattern: Option<Pattern>,

    /// Loop that follows the chain: `pointer` (p = *p), `index` (k = a[k], seed
    /// 004), `portable` (volatile reads, no asm).
    #[arg(long, value_enum, default_value = "pointer")]
    pub kernel: KernelKind,

    /// Node spacing in bytes for random patterns [default: L1 line size from sysfs, else 64].
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub line: Option<u64>,

    /// Page size for the buffer: 4k, thp (transparent huge pages), 2m or 1g
    /// (hugetlb; fall back to thp with a warning when the pool is empty).
    #[arg(long, value_enum, default_value = "thp")]
    pub pages: PageRequest,

    /// CPU to pin the measuring thread to [default: the CPU memlat starts on].
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,

    /// NUMA node to bind the buffer's memory to (mbind); try a remote node for remote latency.
    #[arg(long, value_name = "N")]
    pub node: Option<usize>,

    /// Repeats of each measurement; every repeat of a random pattern uses a fresh chain.
    #[arg(long, value_name = "R")]
    pub repeats: Option<u32>,

    /// Seed of the random chains (repeat r uses SEED + r): the same seed gives the same chains.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// perf events to count, comma-separated, with perf's names (cycles,
    /// instructions, L1-dcache-load-misses, LLC-load-misses, dTLB-load-misses,
    /// task-clock, page-faults, ... or rXXXX); see `memlat events`.
    #[arg(short = 'e', long, value_name = "EVENTS")]
    pub events: Option<String>,

    /// Core clock in GHz for converting ns to cycles, instead of perf's cycles
    /// event or the dependent-add estimate.
    #[arg(long, value_name = "F")]
    pub ghz: Option<f64>,

    /// What times the loads: `auto` picks perf's cycles event, else a user-readable
    /// core-cycle counter (rdcycle, pmccntr_el0, rdpmc), else the monotonic clock
    /// with cycles estimated; `cycle-counter` forces the ISA counter (rdtsc,
    /// cntvct_el0 and rdtime are time bases, not cycles); `perf`; `monotonic`.
    #[arg(long, value_enum, default_value = "auto")]
    pub clock: crate::clock::ClockRequest,

    /// Target duration of one sample (A loads timed, then 2A loads timed), in
    /// milliseconds; sets A when -a is not given. Each repeat takes 3 samples and keeps the fastest.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    pub sample_ms: u64,

    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Write the output to FILE instead of standard output (created before measuring).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `memlat run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Buffer size in bytes (K, M, G suffixes are powers of 1024); rounded up to a multiple of 8.
    #[arg(short = 'n', long, value_name = "BYTES", value_parser = parse_size, default_value = "32K")]
    pub size: u64,

    /// Stride in bytes for the stride pattern; rounded up to a multiple of 8.
    #[arg(short = 's', long, value_name = "BYTES", value_parser = parse_size, default_value = "64")]
    pub stride: u64,

    /// Loads per timed sample (rounded up to a multiple of 100) [default: as many as take --sample-ms].
    #[arg(short = 'a', long, value_name = "A")]
    pub accesses: Option<u64>,

    /// Flags shared with the other measuring commands.
    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// The quick table (no command).
#[derive(Debug, Clone, Args)]
pub struct QuickArgs {
    /// Sizes to measure, comma-separated (e.g. 16K,256K,8M,1G) [default: one inside
    /// each data cache sysfs lists, past the level before it, and 8x the last level for DRAM].
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<u64>,

    /// Flags shared with the other measuring commands.
    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// `memlat events`.
#[derive(Debug, Clone, Args)]
pub struct EventsArgs {
    /// Output format (text or json).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_app() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_flags_parse() {
        let cli = Cli::try_parse_from([
            "memlat",
            "run",
            "-n",
            "16K",
            "-s",
            "64",
            "-e",
            "task-clock",
            "--pattern",
            "random",
        ])
        .unwrap();
        let Some(Command::Run(run)) = cli.command else {
            panic!("expected run");
        };
        assert_eq!(run.size, 16384);
        assert_eq!(run.measure.pattern, Some(Pattern::Random));
        assert_eq!(run.measure.events.as_deref(), Some("task-clock"));
    }

    #[test]
    fn no_command_means_quick() {
        let cli = Cli::try_parse_from(["memlat"]).unwrap();
        assert!(cli.command.is_none());
        assert!(cli.quick.sizes.is_empty());
    }
}
