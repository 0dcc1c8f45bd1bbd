//! Command-line definitions only (clap derive); commands/ turns them into work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::chain::Pattern;
use crate::kernels::KernelKind;
use crate::platform::PageRequest;
use crate::units::parse_size;

mod assoc;
mod bandwidth;
mod c2c;
mod detect;
mod levels;
mod linesize;
mod loaded;
mod loaduse;
mod machine;
mod mlp;
mod numa;
mod plot;
mod quick;
mod results;
mod run;
mod shell;
mod sweep;
mod tlb;
mod watch;

pub use assoc::AssocArgs;
pub use bandwidth::BandwidthArgs;
pub use c2c::C2cArgs;
pub use detect::DetectArgs;
pub use levels::LevelsArgs;
pub use linesize::LinesizeArgs;
pub use loaded::LoadedArgs;
pub use loaduse::LoaduseArgs;
pub use machine::{DoctorArgs, EventsArgs, PrefetchersArgs};
pub use mlp::MlpArgs;
pub use numa::NumaArgs;
pub use plot::{PlotArgs, YScale};
pub use quick::QuickArgs;
pub use results::{CompareArgs, MergeArgs, ReportArgs};
pub use run::RunArgs;
pub use shell::{CompletionsArgs, ManArgs, ShellCommand};
pub use sweep::SweepArgs;
pub use tlb::TlbArgs;
pub use watch::WatchArgs;

/// Measures how long a load takes from L1, L2, L3, DRAM or another NUMA node,
/// by pointer chasing: every load's address is the value the previous load
/// returned, so loads cannot overlap and the time per load is the latency.
///
/// With no command, memlat measures a random chain at a few sizes chosen from
/// this machine's caches (L1 to DRAM) and prints a short table.
#[derive(Debug, Parser)]
#[command(name = "memlat", version, propagate_version = true)]
#[command(after_help = "Examples:
  memlat                                     # the latency table, L1 to DRAM
  memlat run -n 16K -s 64                    # one size and stride
  memlat sweep                               # 1 KiB to flat DRAM, files in memlat-results/
  memlat characterize --quick -o results/    # every stage and an HTML report
  memlat doctor                              # what this machine lets memlat measure

Exit status: 0 done; 1 a measurement or file failed; 2 a flag or value refused (usage);
130 stopped by Ctrl-C, 143 by SIGTERM (what was finished is kept).")]
pub struct Cli {
    /// What to do; without one, a quick table from L1 to DRAM.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Options of the quick table (used when no command is given).
    #[command(flatten)]
    pub quick: QuickArgs,

    /// The most memory reading its inputs may take, together (results,
    /// profiles, state; their text and the JSON parsed from it), MiB: a
    /// bound so that /dev/zero or a runaway file cannot fill memory; a file
    /// past it is refused before it is parsed. At most half the memory
    /// available [default: 256, or that half when less].
    #[arg(long, global = true, value_name = "MIB")]
    pub max_input: Option<u64>,
}

/// Whether memlat was started under seed 004's program name (`ptr_chase`,
/// e.g. through a symlink), so it should act as that program.
pub fn invoked_as_ptr_chase(argv0: &std::ffi::OsStr) -> bool {
    std::path::Path::new(argv0)
        .file_name()
        .is_some_and(|name| name == "ptr_chase")
}

/// memlat's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure one size and stride (seed 004's ptr_chase, done right).
    #[command(verbatim_doc_comment)]
    ///
    /// Prints seed 004's `key : value` lines (size, stride, distinct_blocks,
    /// accesses, last element, one line per event, OK), then the latency:
    /// ns and cycles per load as min / median / max over the repeats.
    ///
    /// Examples:
    ///   memlat run -n 16K -s 64                      # L1, stride chain
    ///   memlat run -n 1G --pattern random            # DRAM
    ///   memlat run -n 53248 -s 4096                  # 13 lines 4 KiB apart: conflict misses
    ///   memlat run -n 256K --pattern random -e task-clock,page-faults --format json
    ///   memlat run -n 1G --pattern random --distribution --plot dist.png
    ///                                                # per-load percentiles, modes, DRAM refresh
    Run(RunArgs),
    /// memlat invoked as `ptr_chase` (seed 004's program, e.g. through a
    /// symlink): `memlat run` with the seed's defaults and its own view.
    #[command(name = "ptr-chase", hide = true)]
    PtrChase(RunArgs),
    /// List the perf events memlat knows and whether this machine can count each.
    ///
    /// Examples:
    ///   memlat events
    ///   memlat events --format json
    #[command(verbatim_doc_comment)]
    Events(EventsArgs),
    /// The hardware prefetchers: whether `--prefetchers off` can work here, and
    /// whether an earlier run left registers to restore.
    ///
    /// `--prefetchers off` writes the registers' original values to a state
    /// file before it changes any, and puts them back on every exit it can
    /// catch (normal end, error, panic, Ctrl-C and other signals). After one it
    /// cannot (kill -9, a power cut) the state file remains:
    /// `memlat prefetchers --restore` (as root) writes the values back.
    ///
    /// Examples:
    ///   memlat prefetchers
    ///   sudo memlat prefetchers --restore
    #[command(verbatim_doc_comment)]
    Prefetchers(PrefetchersArgs),
    /// What this machine lets memlat measure, and how well: PMU, perf_event_paranoid,
    /// user cycle counters, hypervisor, CPU model, the core clock from each chain,
    /// THP and hugetlb, frequency scaling, SMT siblings and load, MSR access, NUMA,
    /// caches from sysfs and CPUID side by side.
    ///
    /// Each line: what, the value here, and what it means for measurements (with
    /// the fix where there is one). Nothing needs root. Run it before a long sweep.
    ///
    /// Examples:
    ///   memlat doctor
    ///   memlat doctor --cpu 1 --format json
    #[command(verbatim_doc_comment)]
    Doctor(DoctorArgs),
    /// Measure many sizes x strides or patterns; write CSV, JSON and a plot (seed 004 sections 2-4)
    ///
    /// Sizes are a geometric sequence of prime multiples of the line size, so
    /// a stride chain touches every line of the buffer whatever its stride.
    ///
    /// Files are created before the first point and rewritten after each one,
    /// so Ctrl-C or a crash keeps every finished point (continue with --resume).
    /// Without --csv, --json or --plot, all three go to a new directory
    /// ./memlat-results/sweep-<timestamp>/, named in the output.
    ///
    /// Examples:
    ///   memlat sweep                                   # 1 KiB to flat DRAM, stride 64 and random
    ///   memlat sweep --strides 64,4096 --pages 4k      # seed 004's prefetching experiment
    ///   memlat sweep --pattern random --strides 64 --plot lat.png
    ///   memlat sweep --to 64M -e L1-dcache-load-misses,cache-misses --json s.json
    ///   memlat sweep --resume memlat-results/sweep-20250101-120000/sweep.json
    #[command(verbatim_doc_comment)]
    #[command(mut_arg("sample_ms", |a| a.default_value("5")))]
    #[command(mut_arg("repeats", |a| a.help("Repeats of each point; a random pattern's repeats use fresh chains where one costs less than its sample (the JSON's repeat_varies says) [default: 3]")))]
    Sweep(SweepArgs),
    /// Draw a sweep's JSON as SVG or PNG: latency, bandwidth or events per load by size
    ///
    /// One line per stride or pattern, the detected levels as bands.
    ///
    /// Examples:
    ///   memlat plot sweep.json -o latency.svg --metric ns
    ///   memlat plot sweep.json -o bw.png --metric bandwidth
    ///   memlat plot sweep.json -o misses.png --metric L1-dcache-load-misses
    #[command(verbatim_doc_comment)]
    Plot(PlotArgs),
    /// Load-to-use latency (seed 003): a load, N NOPs, then an add that uses it
    ///
    /// Times the iteration as N grows, for data in L1, L2 and DRAM (or any
    /// --level), and prints cycles per iteration for every N, the knee where
    /// the time starts to grow, what that knee means on this core, and seed
    /// 003's table: min / avg / max load-to-use cycles, loop overhead and
    /// throughput per data source. On an in-order single-issue core the knee
    /// is the latency; on a wider core it is (latency + 1) x issue width, and
    /// the latency is read from the plateau instead. See docs/loaduse.md.
    ///
    /// Examples:
    ///   memlat loaduse                                 # L1, L2, DRAM; 0..64 NOPs
    ///   memlat loaduse --level l1 --nops 0..96 --plot loaduse.svg
    ///   memlat loaduse --level 12K,192K,2M --nops 1..32 --format json
    #[command(verbatim_doc_comment)]
    #[command(mut_arg("sample_ms", |a| a.default_value("20")))]
    #[command(mut_arg("repeats", |a| a.help("Passes over the NOP range, each with a fresh random chain; per N the fastest is kept [default: 3]")))]
    #[command(mut_arg("pattern", |a| a.help("Chain pattern of the loads: stride, random or page-random [default: random]")))]
    Loaduse(LoaduseArgs),
    /// Memory-level parallelism: misses in flight, from N chains side by side
    ///
    /// N random chains walked side by side in one
    /// thread, N = 1..16, at one size per level (as the table of `memlat`
    /// picks them): ns per load, loads and bytes per second, the effective
    /// parallelism (time per load of one chain over that of N), and where
    /// throughput stops growing: the misses this core keeps in flight.
    ///
    /// Examples:
    ///   memlat mlp                                 # every level, 1..16 chains
    ///   memlat mlp --sizes 1G --chains 1,2,4,8,12,16 --plot mlp.png
    ///   memlat mlp --format json -o mlp.json
    #[command(verbatim_doc_comment)]
    Mlp(MlpArgs),
    /// Bandwidth per level: read, write, copy and non-temporal write, one thread and all.
    ///
    /// Streams through a buffer per thread (each pinned to its own CPU) with
    /// the widest vectors the CPU has (AVX-512, AVX2, SSE2; `--kernel portable`
    /// for plain Rust), at one size in the middle of each measured plateau and
    /// one in memory. GB/s = 10^9 bytes a second; a copy counts bytes read plus
    /// bytes written. Each figure is the median of --repeats samples.
    ///
    /// --sweep measures many sizes instead (--per-octave a doubling, from
    /// --from to --to), each labelled with the measured level it falls in,
    /// or `ramp` between levels; a sweep takes 3 samples of 5 ms per figure
    /// unless --repeats or --sample-ms say otherwise.
    ///
    /// Examples:
    ///   memlat bandwidth                           # every level, 1 thread and all
    ///   memlat bandwidth --sizes 16K,1G --threads 1
    ///   memlat bandwidth --format json -o bw.json
    ///   memlat bandwidth --sweep --plot bw-sweep.png   # GB/s from 4 KiB to memory, levels marked
    ///   memlat bandwidth --sweep --from 16K --to 64M --per-octave 2 --threads 1
    #[command(verbatim_doc_comment)]
    #[command(mut_arg("sample_ms", |a| a
        .default_value("20")
        .default_value_if("sweep", "true", Some("5"))))]
    // Chain flags mean nothing to streaming: hidden here (--pattern is refused).
    #[command(mut_arg("pattern", |a| a.hide(true)))]
    #[command(mut_arg("line", |a| a.hide(true)))]
    #[command(mut_arg("seed", |a| a.hide(true)))]
    #[command(mut_arg("kernel", |a| a
        .hide_possible_values(true)
        .hide_default_value(true)
        .help("`portable` streams with plain-Rust kernels (as --vectors portable); the others pick the widest vectors")))]
    Bandwidth(BandwidthArgs),
    /// Latency under load: chase latency against the bandwidth of traffic threads
    ///
    /// One thread chases a random chain beyond the caches
    /// while --threads others read or write their own buffers, with a delay
    /// after every 4 KiB swept from heavy to none (MLC's loaded latency).
    /// Each point: the chase latency (min, median, max) and the bandwidth the
    /// traffic threads counted themselves; the knee is where latency reaches
    /// twice unloaded (the least latency seen: below idle where memory
    /// clocks up under traffic).
    ///
    /// Every thread is pinned: traffic first on other cores of the chaser's
    /// NUMA node, one thread a core, then second SMT threads, then other nodes,
    /// the chaser's own sibling last (said in the output).
    ///
    /// Examples:
    ///   memlat loaded                               # every other CPU reads
    ///   memlat loaded --threads 1 --traffic mix:67 --plot loaded.png
    ///   memlat loaded --traffic nt-write --delays 10000,1000,100,0 --format json
    #[command(verbatim_doc_comment)]
    Loaded(LoadedArgs),
    /// Core-to-core latency of a cache line between every pair of CPUs
    ///
    /// The one-way time of a cache line moving between
    /// every pair of CPUs (compare-and-swap ping-pong, and a write answered on
    /// a second line), as a matrix ordered by topology, a heatmap, and medians
    /// by relation (same core, same L2/L3, same node, other node).
    ///
    /// Each pair is two pinned threads; each sample is timed over enough round
    /// trips to last 200 us (never a 0 ns from a coarse clock); 15 samples.
    ///
    /// Examples:
    ///   memlat c2c
    ///   memlat c2c --cpus 0-7 --method cas --plot c2c.png
    ///   memlat c2c --pairs sample:500 --format json -o c2c.json   # large machines
    #[command(verbatim_doc_comment)]
    C2c(C2cArgs),
    /// The NUMA matrix: idle memory latency from each node to each node's memory
    ///
    /// Idle memory latency from a CPU of each node to memory
    /// bound (mbind) to each node, memory-only nodes (CXL, HBM) as columns; a
    /// heatmap with --plot. On a single-node machine: a 1x1 matrix, said.
    ///
    /// Examples:
    ///   memlat numa
    ///   memlat numa -n 512M --plot numa.png --format json
    #[command(verbatim_doc_comment)]
    Numa(NumaArgs),
    /// TLB reach (entries x page size) and what a TLB miss costs
    ///
    /// For N pages, one line in each (in successive
    /// cache sets) against the same lines packed, N from 8 up: the difference
    /// is translation alone. Finds the L1 dTLB and L2 TLB reach (entries x page
    /// size) and what each miss costs, for 4 KiB and 2 MiB pages (1 GiB where
    /// the hugetlb pool has them), with CPUID's TLB descriptors beside.
    ///
    /// Examples:
    ///   memlat tlb
    ///   memlat tlb --page-sizes 4k --max-pages 16384 --plot tlb.png
    #[command(verbatim_doc_comment)]
    #[command(mut_arg("sample_ms", |a| a.default_value("5")))]
    Tlb(TlbArgs),
    /// The whole machine in one command: doctor, sweep, bandwidth, mlp, tlb, c2c, loaded and distribution, one JSON each and one HTML report
    ///
    /// Each stage runs as its own memlat command and writes DIR/<stage>.json;
    /// DIR/characterize.json says what ran, how long, and why a stage failed
    /// or was skipped (with each stage's command, to repeat it alone), and
    /// DIR/report.html draws every stage. The sweep runs first: bandwidth,
    /// mlp, loaded and distribution place their sizes in its plateaus. c2c
    /// and loaded need two CPUs (skipped on one, said why); distribution
    /// runs where this memlat has `memlat run --distribution`. A stage that
    /// fails is recorded and the next one runs.
    ///
    /// How long: --quick 21-36 s on a 2-CPU KVM guest; the full run 1.5-2.5
    /// minutes there, more with many CPUs (c2c measures every pair).
    /// Each stage prints a line with the time left.
    ///
    /// Ctrl-C stops the running stage after its current point, keeps what it
    /// measured, and writes the report of what is done (exit code 130); a
    /// second Ctrl-C quits at once.
    ///
    /// Examples:
    ///   memlat characterize --quick -o results/       # every stage, short settings
    ///   memlat characterize -o results/               # each command's defaults
    ///   memlat characterize --stages sweep,bandwidth -o bw/
    ///   memlat report results/*.json -o again.html    # the report again, or of several machines
    #[command(verbatim_doc_comment)]
    Characterize(crate::cli::CharacterizeArgs),
    /// Results side by side: ratios with 95% intervals, differing conditions first
    ///
    /// The points two or more result files share (same
    /// series and size, or level), each difference as a ratio of medians with
    /// a 95% bootstrap interval from the repeats, called significant only
    /// beyond 5%; the conditions that differ (CPU, kernel, pages, clock,
    /// version...) listed first. Takes run, quick, sweep and levels results,
    /// and merged files.
    ///
    /// Examples:
    ///   memlat compare thp.json 4k.json
    ///   memlat compare a.json b.json c.json --plot overlay.png --format markdown
    #[command(verbatim_doc_comment)]
    Compare(CompareArgs),
    /// One self-contained HTML page (or Markdown) of result files
    ///
    /// The machine, the method, every table and plot, the warnings: plots as
    /// inline SVG, styles inline, no network. --format markdown for an issue
    /// or a wiki.
    ///
    /// Examples:
    ///   memlat report sweep.json levels.json -o report.html
    ///   memlat report sweep.json --format markdown -o report.md
    #[command(verbatim_doc_comment)]
    Report(ReportArgs),
    /// Results of one kind from many hosts in one table (CSV or merged JSON)
    ///
    /// FILES or DIRECTORIES (searched for .json), keyed by the host each result
    /// records; CSV (one row per host and point) or JSON (a merged file that
    /// compare and report read).
    ///
    /// Examples:
    ///   memlat merge results/ -o fleet.csv
    ///   memlat merge host*/run.json -o fleet.json
    #[command(verbatim_doc_comment)]
    Merge(MergeArgs),
    /// Find the cache levels in a latency curve: capacity, latency and confidence, sysfs beside
    ///
    /// Each level's capacity and latency (ns, cycles) with a confidence, sysfs
    /// and CPUID beside (seed 004, Problem 1).
    ///
    /// Reads a sweep JSON (`memlat sweep --json`), or first measures a quick
    /// random-chain sweep. Levels come from the data alone: plateaus and the
    /// transitions between them; a level the data do not show is not invented.
    ///
    /// Examples:
    ///   memlat detect                        # quick sweep, then the table
    ///   memlat detect sweep.json --format json
    #[command(verbatim_doc_comment)]
    #[command(mut_arg("sample_ms", |a| a.default_value("10")))]
    #[command(mut_arg("repeats", |a| a.help("Repeats of each point of the quick sweep, each a fresh chain [default: 3]")))]
    Detect(DetectArgs),
    /// Seed 002's procedure: one random walk per level, N times, min / median / max
    ///
    /// For each cache level a random walk at the middle of
    /// its measured plateau (half of it with --machine), for memory the size
    /// every command measures it at (4x the last level's measured capacity,
    /// 256M to 1G; 8x the last level with --machine, as seed 002), N
    /// iterations each with a fresh walk; writes
    /// memlat-results/results_{name}.csv and prints min / median / max per level.
    ///
    /// Examples:
    ///   memlat levels                                  # levels from sysfs, sizes measured
    ///   memlat levels --machine examples/machine-zen4-vm.txt --iterations 20
    #[command(verbatim_doc_comment)]
    Levels(LevelsArgs),
    /// Conflict misses and associativity (seed 004 section 5)
    ///
    /// N lines one way-size apart share a set; the largest N that still hits is the ways.
    ///
    /// Examples:
    ///   memlat assoc                         # every level sysfs lists
    ///   memlat assoc --levels 1 --format json
    #[command(verbatim_doc_comment)]
    #[command(mut_arg("sample_ms", |a| a.default_value("10")))]
    Assoc(AssocArgs),
    /// Line size, how a line arrives, and the unit a miss fetches
    ///
    /// The line is what the cache tags as one: X + d is loaded, X's line is
    /// flushed (clflush, dc civac) or evicted through its set (--drop evict),
    /// and X + d misses exactly when it shares X's line (three passes must
    /// agree). How a line arrives: dependent pairs X, X + d over a buffer
    /// beyond L2 (-n), within the line ("fills arrive in 32-byte chunks, the
    /// asked-for chunk first") and past it ("the next line arrives with this
    /// one"). The unit fetched: page-random loads s bytes apart, whose
    /// latency grows with s until they stop sharing fetched units. Seed
    /// 004's stride chain is shown beside.
    ///
    /// Examples:
    ///   memlat linesize
    ///   memlat linesize -n 256K --strides 8,16,32,64,128,256,512
    ///   memlat linesize --drop evict
    #[command(verbatim_doc_comment)]
    #[command(mut_arg("sample_ms", |a| a.default_value("10")))]
    Linesize(LinesizeArgs),
    /// Each level's latency and the shared cache's edge over time, with what
    /// changed and when, at a cost low enough to run beside a workload
    ///
    /// Every interval: one short sample in the middle of each measured plateau
    /// (see --plateaus) and of memory, a few probe sizes across the last
    /// cache level's edge, and the steal time from /proc/stat. The chains are
    /// built once; at most --duty of each interval is spent measuring, and
    /// what is spent is printed. One line per interval (updated in place, with
    /// sparklines, on a terminal); at the end a summary per level (median,
    /// p5-p95) and the events: shifts of 10% or more beyond the series' own
    /// noise, lasting two intervals or more. Ctrl-C ends it with the summary.
    /// A workload moves the shared level's edge only from a CPU that shares
    /// it with --cpu; in a VM the vCPUs can move between core complexes
    /// (`memlat c2c --cpus A,B` says how far apart two are now).
    ///
    /// Examples:
    ///   memlat watch --duration 10m -o w.jsonl --plot w.png
    ///   memlat watch --interval 5s --cpu 3          # until Ctrl-C
    ///   memlat report w.jsonl -o w.html             # timeline and event table
    ///   memlat compare before.jsonl after.jsonl     # per level: median, spread
    #[command(verbatim_doc_comment)]
    Watch(WatchArgs),
    /// `memlat completions` and the hidden `memlat man` (args/shell.rs).
    #[command(flatten)]
    Shell(ShellCommand),
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables and lines for a terminal (`memlat run`: `key : value` lines
    /// that seed 004's pandas reader reads).
    Text,
    /// One JSON object with every sample.
    Json,
    /// The data as rows under a header.
    Csv,
    /// The text's tables as Markdown, for an issue or a wiki.
    Markdown,
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

    /// Repeats of each measurement; each repeat of a random pattern uses a fresh chain where
    /// building and warming one costs less than timing its sample, else the first chain is
    /// walked on (always from a million nodes; the JSON's `repeat_varies` says which). Without it, `run` and `sweep`
    /// stop once two repeats agree within 1% (2% beyond the caches), and go on past their
    /// default (5 and 3) by up to 2 on a noisy point; other commands take their default.
    #[arg(long, value_name = "R")]
    pub repeats: Option<u32>,

    /// Seed of the random chains (repeat r uses SEED + r): the same seed gives the same chains.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Hardware prefetchers: `as-is` leaves them, `off` disables them for the
    /// run through the documented MSRs (x86; root and the msr module needed),
    /// restoring them on exit; where that cannot be done memlat says why and
    /// measures with them as they are.
    #[arg(long, value_enum, value_name = "MODE", default_value = "as-is")]
    pub prefetchers: crate::platform::prefetch::PrefetchMode,

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
    pub clock: crate::platform::clock::ClockRequest,

    /// Target duration of one sample (A loads timed, then 2A loads timed), in
    /// milliseconds; sets A when -a is not given. Each repeat takes 2 rounds of both (more while they disagree) and keeps the fastest of each.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    pub sample_ms: u64,

    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Write the output to FILE instead of standard output (created before measuring).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Where a command takes the measured plateaus it places sizes in.
#[derive(Debug, Clone, Args)]
pub struct PlateauArgs {
    /// Where the size inside each cache level comes from: the middle, in log
    /// scale, of its measured plateau, read from `auto` (this machine's last
    /// complete `memlat sweep`, remembered for 7 days, else a 2-7 s probe),
    /// `probe` (a coarse probe now) or a sweep JSON of this machine.
    #[arg(long, value_name = "auto|probe|FILE", default_value = "auto", value_parser = crate::experiments::plateaus::parse_source)]
    pub plateaus: crate::experiments::plateaus::Source,
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
