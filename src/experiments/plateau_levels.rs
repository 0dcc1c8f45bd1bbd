//! The measured plateaus of this machine's cache levels: the type
//! `--plateaus` yields, whether probed, remembered or read from a sweep.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sweep::SweepResult;
use crate::analysis::detect::Detection;
use crate::units::HumanBytes;

/// One size to measure, named after the level it sits in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelSize {
    /// `L1`, `L2`, ..., `memory`, or the size itself when given.
    pub name: String,
    /// Buffer size, bytes.
    pub size: u64,
}

/// One cache level's measured plateau.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// `L1`, `L2`, ...
    pub name: String,
    /// Smallest measured size on the plateau, bytes.
    pub from_bytes: u64,
    /// Largest measured size on the plateau, bytes.
    pub to_bytes: u64,
    /// Its latency (median of its points), ns.
    pub ns: f64,
    /// Where the latency leaves it (the detector's capacity), bytes.
    pub capacity_bytes: Option<u64>,
    /// What every repeat agrees the level serves and does not (the
    /// detector's `capacity_bounds`); `None` in plateaus remembered before
    /// memlat 0.2.
    #[serde(default)]
    pub capacity_bounds: Option<crate::analysis::detect::CapacityBounds>,
}

impl Plateau {
    /// The geometric middle of the plateau, rounded down to `unit` bytes.
    pub fn middle(&self, unit: u64) -> u64 {
        let unit = unit.max(8);
        let mid = ((self.from_bytes as f64) * (self.to_bytes as f64)).sqrt() as u64;
        (mid / unit).max(2) * unit
    }
}

/// The measured plateaus of this machine's cache levels, and where they came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredLevels {
    /// `probe`, `file`, or `remembered`.
    pub source: String,
    /// The sweep file the plateaus were read from (file or remembered).
    pub file: Option<PathBuf>,
    /// When the sweep behind them started (UTC).
    pub measured: String,
    /// Cache levels, smallest first.
    pub levels: Vec<Plateau>,
    /// Memory's latency, ns, when the curve reached it.
    pub memory_ns: Option<f64>,
}

impl MeasuredLevels {
    /// The cache levels of `detection` with a plateau (memory excluded).
    pub fn from_detection(detection: &Detection, source: &str, measured: &str) -> MeasuredLevels {
        let levels = detection
            .levels
            .iter()
            .filter(|l| l.name != "memory")
            .filter_map(|l| {
                let [from_bytes, to_bytes] = l.plateau_bytes?;
                Some(Plateau {
                    name: l.name.clone(),
                    from_bytes,
                    to_bytes,
                    ns: l.latency_ns,
                    capacity_bytes: l.size_bytes,
                    capacity_bounds: l.capacity_bounds,
                })
            })
            .collect();
        MeasuredLevels {
            source: source.into(),
            file: None,
            measured: measured.into(),
            levels,
            memory_ns: detection
                .levels
                .iter()
                .find(|l| l.name == "memory")
                .map(|l| l.latency_ns),
        }
    }

    /// The plateaus of a sweep's detection, `None` without one.
    pub fn from_sweep(result: &SweepResult, source: &str) -> Option<MeasuredLevels> {
        let detection = result.detect()?;
        let levels = MeasuredLevels::from_detection(&detection, source, &result.started);
        (!levels.levels.is_empty()).then_some(levels)
    }

    /// Cache level `n` (1-based), when measured.
    pub fn level(&self, n: u32) -> Option<&Plateau> {
        self.levels.iter().find(|p| p.name == format!("L{n}"))
    }

    /// The capacity of the last cache level measured, bytes.
    pub fn last_capacity(&self) -> Option<u64> {
        let last = self.levels.last()?;
        Some(last.capacity_bytes.unwrap_or(last.to_bytes))
    }

    /// One size in the middle of each plateau, then memory by the one
    /// rule ([`Self::memory`]).
    pub fn sizes(&self, unit: u64, available: Option<u64>) -> Vec<LevelSize> {
        let mut sizes: Vec<LevelSize> = self
            .levels
            .iter()
            .map(|p| LevelSize {
                name: p.name.clone(),
                size: p.middle(unit),
            })
            .collect();
        sizes.push(LevelSize {
            name: "memory".into(),
            size: self.memory(available, unit).size,
        });
        sizes
    }

    /// Memory's size by [`super::memory`]'s rule: [`super::memory::FACTOR`]
    /// times the last level's measured capacity, within its floor and
    /// ceiling and a quarter of `available`; the TLB reach is that of
    /// transparent huge pages (the measuring commands' default).
    pub fn memory(&self, available: Option<u64>, unit: u64) -> super::memory::MemorySize {
        let last = match (self.levels.last(), self.last_capacity()) {
            (Some(p), Some(bytes)) => super::memory::Last::Measured(&p.name, bytes),
            _ => super::memory::Last::Unknown,
        };
        let page = super::memory::page_bytes(crate::platform::buffer::PageRequest::Thp);
        super::memory::size(last, page, available, unit)
    }

    /// One line for a reader: where the sizes come from.
    pub fn describe(&self) -> String {
        let plateaus: Vec<String> = self
            .levels
            .iter()
            .map(|p| {
                format!(
                    "{} {}..{}",
                    p.name,
                    HumanBytes(p.from_bytes),
                    HumanBytes(p.to_bytes)
                )
            })
            .collect();
        let from = match (&self.source[..], &self.file) {
            ("probe", _) => "a coarse probe just now (--plateaus probe|FILE to choose)".to_string(),
            (_, Some(file)) if file.is_dir() => format!(
                "the {} sweeps in {}, {}",
                self.source,
                file.display(),
                self.measured
            ),
            (_, Some(file)) => format!(
                "the {} sweep {} of {}",
                self.source,
                file.display(),
                self.measured
            ),
            _ => format!("a {} sweep of {}", self.source, self.measured),
        };
        format!(
            "sizes in the middle of the measured plateaus ({}), from {from}",
            plateaus.join(", ")
        )
    }
}
