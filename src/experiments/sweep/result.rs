//! What a sweep records: its configuration, every measured point, the caches
//! sysfs claims, and the levels detected. One struct is both the JSON file and
//! what `memlat plot`, `memlat detect` and `--resume` read back.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::analysis::detect::{CurvePoint, Detection};
use crate::chain::Pattern;
use crate::engine::Measurement;
use crate::error::UsageError;
use crate::kernels::KernelKind;
use crate::platform::PageRequest;
use crate::platform::caches::CacheInfo;

/// One line of a sweep: a stride chain of some stride, or a random pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesKey {
    /// Chain pattern.
    pub pattern: Pattern,
    /// Stride in bytes for the stride pattern; 0 for the others.
    pub stride: u64,
}

impl SeriesKey {
    /// A stride chain of `stride` bytes.
    pub fn stride(stride: u64) -> SeriesKey {
        SeriesKey {
            pattern: Pattern::Stride,
            stride,
        }
    }

    /// A random (or page-random) chain.
    pub fn pattern(pattern: Pattern) -> SeriesKey {
        match pattern {
            Pattern::Stride => SeriesKey::stride(64),
            _ => SeriesKey { pattern, stride: 0 },
        }
    }

    /// The series a measurement belongs to.
    pub fn of(m: &Measurement) -> SeriesKey {
        match m.pattern {
            Pattern::Stride => SeriesKey::stride(m.stride),
            other => SeriesKey::pattern(other),
        }
    }

    /// `stride 64`, `random`, `page-random`: legend and column names.
    pub fn label(&self) -> String {
        match self.pattern {
            Pattern::Stride => format!("stride {}", self.stride),
            other => other.name().to_string(),
        }
    }
}

/// How the sweep was asked for (flags after defaults were filled in).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepConfig {
    /// Smallest size asked for (`--from`), bytes.
    pub from: u64,
    /// Largest size: `--to`, or the cap of a sweep that ends where memory does.
    pub to: u64,
    /// Why the sizes end where they do: `to` (asked for with `--to`),
    /// `flat-dram` (the latency was level for a few sizes beyond every
    /// cache sysfs lists: memory, by where it lies, not by its latency),
    /// `memory-size` (past the size every command measures memory at,
    /// before the latency levelled), `measured-memory-size` (past memory's
    /// size for the last level measured, every level sysfs lists seen to
    /// end: a guest's share of a far larger L3) or `cap` (the largest size memlat plans
    /// without `--to`).
    #[serde(default = "range_end_to")]
    pub range_end_reason: String,
    /// Ratio of the geometric sequence (`--ratio`).
    pub ratio: f64,
    /// Every size is a prime multiple of this many bytes (the line size).
    pub unit: u64,
    /// The sizes measured, bytes, ascending.
    pub sizes: Vec<u64>,
    /// The lines measured at every size.
    pub series: Vec<SeriesKey>,
    /// Repeats per point (`--repeats`).
    pub repeats: u32,
    /// Whether repeats stop once precise (2 when they agree, up to twice
    /// `repeats` when noisy): without `--repeats`.
    #[serde(default)]
    pub until_precise: bool,
    /// Target duration of one sample, ms (`--sample-ms`).
    pub sample_ms: u64,
    /// Kernel (`--kernel`).
    pub kernel: KernelKind,
    /// Page size asked for (`--pages`).
    pub pages: PageRequest,
    /// Node spacing of random patterns, bytes (`--line`).
    pub line: u64,
    /// Seed of the random chains (`--seed`).
    pub seed: u64,
    /// CPU the measuring thread was pinned to.
    pub cpu: usize,
    /// The kind of that CPU's core where the part has more than one
    /// ([`crate::platform::core_kind`]): a remembered sweep stands only for
    /// cores of its kind. Absent on parts with one kind, and in sweeps
    /// written before memlat recorded it (which match any core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_kind: Option<String>,
    /// NUMA node the buffers were bound to (`--node`).
    pub node: Option<usize>,
    /// Events counted (`-e`).
    pub events: Vec<String>,
    /// Whether sizes inside each level's capacity bracket are measured after
    /// the grid, until every bracket is within 5% (not with `--no-refine`).
    #[serde(default)]
    pub refine: bool,
    /// Whether each point also timed loads one by one for p50 and p99
    /// (`--percentiles`; `Measurement::distribution` on every point).
    #[serde(default)]
    pub percentiles: bool,
    /// The sizes measured to refine capacities (detection series only),
    /// beside `sizes`, ascending.
    #[serde(default)]
    pub refined_sizes: Vec<u64>,
    /// Sizes of the detection series measured again with fresh chains before
    /// the levels were decided (short or weak plateaus, unresolved stretches,
    /// and on a noisy machine the sizes that place a level's edge); their
    /// repeats are pooled with the first pass's.
    #[serde(default)]
    pub remeasured_sizes: Vec<u64>,
    /// The levels the first pass found, before re-measuring: `[from_bytes,
    /// to_bytes, ns]` of each plateau (memory included).
    #[serde(default)]
    pub first_pass_levels: Vec<(u64, u64, f64)>,
}

fn schema_one() -> u32 {
    1
}

fn kind_sweep() -> String {
    "sweep".into()
}

fn range_end_to() -> String {
    "to".into()
}

impl SweepConfig {
    /// Whether the sweep ends where the latency levels beyond the caches (no `--to`).
    pub fn adaptive(&self) -> bool {
        self.range_end_reason != "to"
    }

    /// Checks a configuration read from `file` (`--resume`) as flags are
    /// checked, so a hand-edited file cannot make a point memlat cannot measure.
    pub fn validate(&self, file: &Path) -> Result<(), crate::limits::LimitError> {
        use crate::limits::{self, Origin};
        let field = |name: &str| Origin::Field {
            file: file.to_path_buf(),
            field: format!("config.{name}"),
        };
        limits::repeats(self.repeats, field("repeats"))?;
        limits::sample_ms(self.sample_ms, field("sample_ms"))?;
        limits::line(self.line, field("line"))?;
        limits::line(self.unit, field("unit"))?;
        limits::ratio(self.ratio, field("ratio"))?;
        if self.sizes.len() > limits::MAX_SWEEP_SIZES {
            limits::sweep_steps(self.from, self.to, self.ratio, field("sizes"))?;
        }
        for &size in self.sizes.iter().chain(&self.refined_sizes) {
            if limits::size(size, field("sizes"))? != size {
                return Err(limits::LimitError {
                    origin: field("sizes"),
                    value: size.to_string(),
                    why: "sizes are multiples of 8 bytes".into(),
                });
            }
        }
        for key in &self.series {
            if key.pattern == Pattern::Stride {
                limits::stride(key.stride, field("series.stride"))?;
            }
        }
        Ok(())
    }

    /// Number of points: sizes x series, and the sizes refinement added.
    pub fn point_count(&self) -> usize {
        self.sizes.len() * self.series.len() + self.refined_sizes.len()
    }
}

/// A sweep's results, complete or not. This is the JSON file's content.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepResult {
    /// The layout of this file: 3 (1 for memlat 0.1.0's files, which lack it).
    #[serde(default = "schema_one")]
    pub schema_version: u32,
    /// Always `sweep`.
    #[serde(default = "kind_sweep")]
    pub kind: String,
    /// The host it was measured on (absent in 0.1.0's files).
    #[serde(default)]
    pub host: Option<crate::platform::host::Host>,
    /// memlat version that measured it.
    pub memlat_version: String,
    /// The command line of the run that wrote this file (empty in files
    /// before schema 3).
    #[serde(default)]
    pub command: Vec<String>,
    /// When the sweep started, UTC, ISO 8601.
    pub started: String,
    /// When its last point was measured, UTC, ISO 8601 (`None` before the
    /// first, and in files before schema 3).
    #[serde(default)]
    pub finished: Option<String>,
    /// The sweep's configuration.
    pub config: SweepConfig,
    /// The data caches sysfs claims (shown beside the detection, never used by it).
    pub sysfs_caches: Vec<CacheInfo>,
    /// Every finished point, by size then series.
    pub points: Vec<Measurement>,
    /// Seconds spent measuring so far (over resumed runs too).
    pub total_seconds: f64,
    /// Whether every planned point is in `points`.
    pub complete: bool,
    /// Levels detected from the curve (random series, else the largest stride);
    /// `None` until the sweep ends.
    pub detection: Option<Detection>,
    /// How noisy the machine was during the sweep: steal time, the repeats'
    /// spread, a canary measured at the start and the end.
    #[serde(default)]
    pub noise: Option<crate::experiments::noise::Noise>,
    /// The last step's and any climb's ends measured again with the other
    /// page size, which tells page walks from a level or a farther tier
    /// (absent where the sweep was cut short, the system has one page size,
    /// or the file was written before the test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_test: Option<crate::analysis::detect::tail::PageTest>,
    /// Single loads timed in groups at the middle of each cache level's
    /// plateau, which tell a level from a mixture of its neighbours
    /// ([`crate::analysis::detect::one_latency`]; empty where the sweep had
    /// fewer than two caches, was cut short, the ISA has no per-load timer
    /// in memlat, or the file was written before the test).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_spreads: Vec<crate::analysis::detect::LoadSpread>,
    /// Where the sweep's wall time went, by stage (absent in files written
    /// before stop 53).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<SweepPhases>,
}

/// Seconds of wall time each stage of a sweep took (summed over the runs
/// of a resumed sweep): the grid of sizes, the deciding points measured
/// again, the refinement inside the capacity brackets, the one-latency test
/// and the page test, each with its checkpoints. What is left of
/// `total_seconds` is the noise watch and detection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepPhases {
    /// The planned sizes, every series.
    pub grid_s: f64,
    /// The points that decide the levels, again with fresh chains.
    pub remeasure_s: f64,
    /// Sizes inside the capacity brackets.
    pub refine_s: f64,
    /// Single loads timed in groups ([`SweepResult::load_spreads`]).
    pub spreads_s: f64,
    /// The other page size at the last step ([`SweepResult::page_test`]).
    pub page_test_s: f64,
}

impl SweepResult {
    /// Reads a sweep JSON file (as written by `memlat sweep --json`).
    pub fn load(path: &Path) -> Result<SweepResult> {
        let text = crate::input::read_text(path).map_err(|e| UsageError(e.to_string()))?;
        Self::parse(&text, path)
    }

    /// Reads a sweep JSON text (from `path`, for the message): only a
    /// sweep of a schema this memlat knows, with sizes and series, every
    /// figure within [`crate::limits::figures`]; duplicate points are
    /// dropped and points sorted, each with a notice on stderr. Read
    /// straight into the result, with no JSON tree between (a tree takes
    /// four times the text): the figures are checked as the text streams.
    pub fn parse(text: &str, path: &Path) -> Result<SweepResult> {
        let not_sweep = |e: &dyn std::fmt::Display| {
            // A watch is JSON lines: say what it is, not where line 2 fails.
            // Told from the first line's kind alone: a sweep written on
            // one line is all first line, and a tree of it takes 4x.
            #[derive(Deserialize)]
            struct Kind {
                kind: Option<String>,
            }
            let first = text.lines().next().unwrap_or("");
            let watch = serde_json::from_str::<Kind>(first)
                .is_ok_and(|v| v.kind.as_deref() == Some("watch"));
            UsageError(if watch {
                format!(
                    "{}: a watch (JSON lines), not a sweep: `memlat report {}` draws its timelines, `memlat compare` compares two",
                    path.display(),
                    path.display()
                )
            } else {
                format!(
                    "{}: not a memlat sweep JSON file ({e}); give the file written by `memlat sweep --json`",
                    path.display()
                )
            })
        };
        crate::limits::figures::check_json(&mut serde_json::Deserializer::from_str(text)).map_err(
            |(field, why)| {
                if field == "JSON" {
                    not_sweep(&why)
                } else {
                    UsageError(format!("{}: {field}: {why}", path.display()))
                }
            },
        )?;
        let result: SweepResult = serde_json::from_str(text).map_err(|e| not_sweep(&e))?;
        result.validated(path)
    }

    /// [`SweepResult::parse`] of JSON already read: the same checks, and
    /// the configuration's and points' values within [`crate::limits`].
    pub fn from_value(value: serde_json::Value, path: &Path) -> Result<SweepResult> {
        crate::limits::figures::check(&value)
            .map_err(|(field, why)| UsageError(format!("{}: {field}: {why}", path.display())))?;
        let result: SweepResult =
            serde_json::from_value(value).map_err(|e| Self::refusal(&e, path))?;
        result.validated(path)
    }

    /// Whether `value` is a sweep [`SweepResult::from_value`] reads, read
    /// from the tree as it is (no copy of it is made).
    pub fn check(value: &serde_json::Value, path: &Path) -> Result<()> {
        crate::limits::figures::check(value)
            .map_err(|(field, why)| UsageError(format!("{}: {field}: {why}", path.display())))?;
        let result = SweepResult::deserialize(value).map_err(|e| Self::refusal(&e, path))?;
        result.validated(path).map(drop)
    }

    fn refusal(e: &serde_json::Error, path: &Path) -> UsageError {
        UsageError(format!(
            "{}: not a memlat sweep JSON file ({e}); give the file written by `memlat sweep --json`",
            path.display()
        ))
    }

    /// The checks every reader of a sweep makes, and its points put in order.
    fn validated(self, path: &Path) -> Result<SweepResult> {
        let mut result = self;
        let refuse = |why: String| -> Result<SweepResult> {
            Err(UsageError(format!("{}: {why}", path.display())).into())
        };
        if result.kind != "sweep" {
            return refuse(format!(
                "kind {} is not a sweep; give the file written by `memlat sweep --json`",
                crate::printable::quoted(&result.kind, 60)
            ));
        }
        if !(crate::experiments::schema::OLDEST_SCHEMA..=crate::experiments::schema::SCHEMA_VERSION)
            .contains(&result.schema_version)
        {
            return refuse(format!(
                "schema_version {} is not one this memlat reads ({} to {}){}",
                result.schema_version,
                crate::experiments::schema::OLDEST_SCHEMA,
                crate::experiments::schema::SCHEMA_VERSION,
                if result.schema_version > crate::experiments::schema::SCHEMA_VERSION {
                    "; a newer memlat wrote it?"
                } else {
                    ""
                }
            ));
        }
        if result.config.sizes.is_empty() || result.config.series.is_empty() {
            return refuse(
                "config.sizes and config.series must not be empty: not a sweep memlat wrote".into(),
            );
        }
        result.config.validate(path).map_err(UsageError::from)?;
        for (k, m) in result.points.iter().enumerate() {
            let field = |name: &str| crate::limits::Origin::Field {
                file: path.to_path_buf(),
                field: format!("points[{k}].{name}"),
            };
            crate::limits::size(m.size, field("size")).map_err(UsageError::from)?;
            if m.pattern == Pattern::Stride {
                crate::limits::stride(m.stride, field("stride")).map_err(UsageError::from)?;
            }
        }
        if !result.config.sizes.is_sorted() {
            result.config.sizes.sort_unstable();
            eprintln!(
                "note: {}: config.sizes were not in order; sorted",
                path.display()
            );
        }
        let before = result.points.len();
        let mut seen = std::collections::BTreeSet::new();
        result
            .points
            .retain(|m| seen.insert((m.size, SeriesKey::of(m).label(), m.kernel.name())));
        if result.points.len() < before {
            eprintln!(
                "note: {}: {} duplicate point(s) (same size, series and kernel) left out",
                path.display(),
                before - result.points.len()
            );
        }
        result.sort_points();
        Ok(result)
    }

    /// A notice for a file older than this memlat's layout, read all the same.
    pub fn older_notice(&self, path: &Path) -> Option<String> {
        (self.schema_version < crate::experiments::schema::SCHEMA_VERSION).then(|| {
            format!(
                "{} was written by memlat {} (result schema {}, {}); read as such",
                path.display(),
                self.memlat_version,
                self.schema_version,
                if self.schema_version < 2 {
                    "without host or command"
                } else {
                    "without command or finished"
                }
            )
        })
    }

    /// The series present in `points`, in configuration order, then any others.
    pub fn series(&self) -> Vec<SeriesKey> {
        let mut keys: Vec<SeriesKey> = self.config.series.clone();
        for m in &self.points {
            let key = SeriesKey::of(m);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys.retain(|k| self.points.iter().any(|m| SeriesKey::of(m) == *k));
        keys
    }

    /// The points of one series, by size.
    pub fn series_points(&self, key: SeriesKey) -> Vec<&Measurement> {
        let mut points: Vec<&Measurement> = self
            .points
            .iter()
            .filter(|m| SeriesKey::of(m) == key)
            .collect();
        points.sort_by_key(|m| m.size);
        points
    }

    /// The series hierarchy detection reads: random if measured (prefetchers
    /// cannot follow it), else page-random, else the largest stride.
    pub fn detection_series(&self) -> Option<SeriesKey> {
        let series = self.series();
        let find = |p: Pattern| series.iter().copied().find(|k| k.pattern == p);
        find(Pattern::Random)
            .or_else(|| find(Pattern::PageRandom))
            .or_else(|| {
                series
                    .iter()
                    .copied()
                    .filter(|k| k.pattern == Pattern::Stride)
                    .max_by_key(|k| k.stride)
            })
    }

    /// The latency curve of [`SweepResult::detection_series`].
    pub fn curve(&self) -> Vec<CurvePoint> {
        let Some(key) = self.detection_series() else {
            return Vec::new();
        };
        self.series_points(key)
            .into_iter()
            .map(|m| CurvePoint {
                size_bytes: m.size,
                ns: m.ns_per_load.median,
                ns_min: m.ns_per_load.min,
                ns_max: m.ns_per_load.max,
                cycles: m.cycles_per_load.median,
            })
            .collect()
    }

    /// Runs hierarchy detection on the curve (sysfs shown beside).
    pub fn detect(&self) -> Option<Detection> {
        let curve = self.curve();
        (!curve.is_empty()).then(|| {
            let mut d = crate::analysis::detect::detect_with_pages(
                &curve,
                &self.sysfs_caches,
                self.page_test.as_ref(),
                &self.load_spreads,
            );
            d.record_passes(
                &self.config.remeasured_sizes,
                &self.config.first_pass_levels,
            );
            d
        })
    }

    /// Whether `m` is the measurement of the point (size, key) with this sweep's kernel.
    pub fn has_point(&self, size: u64, key: SeriesKey) -> bool {
        self.points
            .iter()
            .any(|m| m.size == size && SeriesKey::of(m) == key && m.kernel == self.config.kernel)
    }

    /// Sorts points by size, then by series order.
    pub fn sort_points(&mut self) {
        let order = self.series();
        let rank = |m: &Measurement| order.iter().position(|k| *k == SeriesKey::of(m));
        self.points.sort_by_key(|m| (m.size, rank(m)));
    }
}
