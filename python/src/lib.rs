//! memlat from Python: thin bindings over the library (`memlat._memlat`);
//! the Python package `memlat` wraps them in keyword functions returning
//! dicts. Every function measures with the GIL released and raises
//! `ValueError` with memlat's own message on bad input (the package raises
//! `TypeError` for arguments of the wrong type before they get here).

use std::time::Duration;

use memlat::analysis::detect::CurvePoint;
use memlat::chain::Pattern;
use memlat::engine::{Engine, Point};
use memlat::experiments::Quiet;
use memlat::experiments::sweep::{Range, RangeEnd, SeriesKey, SweepPlan};
use memlat::platform::PageRequest;
use memlat::platform::counters::parse_event;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Python takes sizes as given: a size memlat would round up (the command
/// line rounds with a notice) is refused rather than measured silently as another.
fn whole_nodes(what: &str, bytes: u64) -> PyResult<()> {
    if bytes.is_multiple_of(8) {
        return Ok(());
    }
    Err(error(format!(
        "{what} {bytes}: memlat measures whole 8-byte nodes; give a multiple of 8, e.g. {}",
        bytes.div_ceil(8) * 8
    )))
}

/// `memlat run -n`'s size parser: bytes with K, M, G (powers of 1024).
#[pyfunction]
fn parse_size(what: &str, text: &str) -> PyResult<u64> {
    memlat::units::parse_size(text).map_err(|e| error(format!("{what}: {e}")))
}

/// A kebab-case name (`random`, `thp`) as one of memlat's enums.
fn named<T: serde::de::DeserializeOwned>(what: &str, name: &str) -> PyResult<T> {
    serde_json::from_value(serde_json::Value::from(name)).map_err(|_| {
        error(format!(
            "{what} {name:?}: not one memlat knows (see `memlat run --help`)"
        ))
    })
}

fn engine(cpu: Option<usize>, events: &[String]) -> PyResult<Engine> {
    let specs = events
        .iter()
        .map(|e| parse_event(e).map_err(error))
        .collect::<PyResult<Vec<_>>>()?;
    let mut builder = Engine::builder().events(&specs);
    if let Some(cpu) = cpu {
        builder = builder.cpu(cpu);
    }
    builder.build().map_err(error)
}

/// `memlat run` as JSON: one size and stride or pattern.
#[pyfunction]
#[pyo3(signature = (size, stride=64, pattern="stride", accesses=None, events=Vec::new(), pages="thp", cpu=None, repeats=5, sample_ms=50, distribution_ms=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    size: u64,
    stride: u64,
    pattern: &str,
    accesses: Option<u64>,
    events: Vec<String>,
    pages: &str,
    cpu: Option<usize>,
    repeats: u32,
    sample_ms: u64,
    distribution_ms: Option<u64>,
) -> PyResult<String> {
    whole_nodes("size", size)?;
    whole_nodes("stride", stride)?;
    memlat::limits::stride(stride, memlat::limits::Origin::Setting("stride")).map_err(error)?;
    memlat::limits::repeats(repeats, memlat::limits::Origin::Setting("repeats")).map_err(error)?;
    let pattern = named::<Pattern>("pattern", pattern)?;
    // As `memlat run`: a stride chain of one node rereads it on every load.
    if pattern == Pattern::Stride
        && size > 0
        && size.is_multiple_of(8)
        && stride.is_multiple_of(size)
    {
        return Err(error(format!(
            "stride {stride} is a multiple of size {size}: every load would reread one node; give a stride below the size, e.g. stride=8, and a size of 16 or more"
        )));
    }
    if let Some(ms) = distribution_ms {
        memlat::limits::distribution_ms(ms, memlat::limits::Origin::Setting("distribution_ms"))
            .map_err(error)?;
    }
    let point = Point {
        size: memlat::limits::size(size, memlat::limits::Origin::Setting("size")).map_err(error)?,
        stride,
        pattern,
        pages: named::<PageRequest>("pages", pages)?,
        accesses,
        repeats,
        sample_time: Duration::from_millis(sample_ms),
        distribution: distribution_ms.map(Duration::from_millis),
        ..Point::default()
    };
    py.detach(move || {
        let mut engine = engine(cpu, &events)?;
        let m = engine.measure(&point).map_err(error)?;
        memlat::output::result_json("run", &m).map_err(error)
    })
}

/// `memlat sweep` as JSON (the file `--json` writes): sizes from `start` to
/// `stop` `ratio` apart, random chains and any stride chains.
#[pyfunction]
#[pyo3(signature = (start=1024, stop=64 << 20, ratio=1.3, strides=Vec::new(), random=true, repeats=3, sample_ms=5, pages="thp", cpu=None, refine=true))]
#[allow(clippy::too_many_arguments)]
fn sweep(
    py: Python<'_>,
    start: u64,
    stop: u64,
    ratio: f64,
    strides: Vec<u64>,
    random: bool,
    repeats: u32,
    sample_ms: u64,
    pages: &str,
    cpu: Option<usize>,
    refine: bool,
) -> PyResult<String> {
    memlat::limits::ratio(ratio, memlat::limits::Origin::Setting("ratio")).map_err(error)?;
    memlat::limits::repeats(repeats, memlat::limits::Origin::Setting("repeats")).map_err(error)?;
    for &s in &strides {
        whole_nodes("stride", s)?;
        memlat::limits::stride(s, memlat::limits::Origin::Setting("strides")).map_err(error)?;
    }
    let start =
        memlat::limits::size(start, memlat::limits::Origin::Setting("start")).map_err(error)?;
    let stop =
        memlat::limits::size(stop, memlat::limits::Origin::Setting("stop")).map_err(error)?;
    if stop <= start {
        return Err(error(format!(
            "stop {stop}: the largest size must be above start {start}"
        )));
    }
    memlat::limits::sweep_steps(start, stop, ratio, memlat::limits::Origin::Setting("ratio"))
        .map_err(error)?;
    let mut series: Vec<SeriesKey> = strides.iter().map(|&s| SeriesKey::stride(s)).collect();
    if random {
        series.push(SeriesKey::pattern(Pattern::Random));
    }
    if series.is_empty() {
        return Err(error("give strides or random=True: a sweep needs a series"));
    }
    let template = Point {
        repeats,
        sample_time: Duration::from_millis(sample_ms),
        pages: named::<PageRequest>("pages", pages)?,
        ..Point::default()
    };
    py.detach(move || {
        let mut engine = engine(cpu, &[])?;
        let caches = memlat::platform::caches::data_caches(engine.cpu());
        let range = Range {
            from: start,
            to: stop,
            ratio,
            end: RangeEnd::To,
        };
        let mut plan = SweepPlan::new(template, engine.cpu(), range, series, Vec::new(), caches);
        plan.config.refine = refine;
        let result =
            memlat::experiments::sweep::run(&mut engine, &plan, &mut Quiet).map_err(error)?;
        serde_json::to_string(&result).map_err(error)
    })
}

/// `memlat detect` on points given as JSON (`[{size, ns_per_load: {median,
/// min, max}}, ...]`, or `ns_per_load` a number).
#[pyfunction]
fn detect(points_json: &str) -> PyResult<String> {
    let points: Vec<serde_json::Value> = serde_json::from_str(points_json).map_err(error)?;
    let curve: Vec<CurvePoint> = points
        .iter()
        .filter_map(|p| {
            let size = p["size"].as_u64()?;
            let ns = &p["ns_per_load"];
            let median = ns["median"].as_f64().or_else(|| ns.as_f64())?;
            Some(CurvePoint {
                size_bytes: size,
                ns: median,
                ns_min: ns["min"].as_f64().unwrap_or(median),
                ns_max: ns["max"].as_f64().unwrap_or(median),
                cycles: p["cycles_per_load"]["median"].as_f64().unwrap_or(0.0),
            })
        })
        .collect();
    if curve.is_empty() {
        return Err(error(
            "no points with size and ns_per_load: give memlat.run or memlat.sweep results",
        ));
    }
    serde_json::to_string(&memlat::analysis::detect::detect(&curve, &[])).map_err(error)
}

/// `memlat watch` as an iterator of JSON lines: each interval's readings.
/// It measures holding the GIL (a watch owns pinned buffers that stay on
/// this thread) and waits between intervals; Ctrl-C is seen after the
/// interval in progress.
#[pyclass(unsendable)]
struct Watcher {
    watch: memlat::experiments::watch::Watch,
    header: String,
}

#[pymethods]
impl Watcher {
    #[new]
    #[pyo3(signature = (duration=None, interval=1.0, cpu=None, duty=0.1))]
    fn new(duration: Option<f64>, interval: f64, cpu: Option<usize>, duty: f64) -> PyResult<Self> {
        let seconds = |s: f64, what: &str| {
            Duration::try_from_secs_f64(s)
                .map_err(|_| error(format!("{what} {s}: give seconds above zero")))
        };
        let interval = seconds(interval, "interval")?;
        let duration = duration.map(|d| seconds(d, "duration")).transpose()?;
        memlat::experiments::watch::plan::check(interval, duty).map_err(error)?;
        let engine = engine(cpu, &[])?;
        let watch = memlat::experiments::watch::Watch::probe(engine, interval, duration, duty)
            .map_err(|e| error(format!("{e:#}")))?;
        let header = serde_json::to_string(watch.header()).map_err(error)?;
        Ok(Watcher { watch, header })
    }

    /// The plan and plateaus, as JSON (the header line of a watch file).
    fn header(&self) -> String {
        self.header.clone()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<String>> {
        py.check_signals()?;
        match self.watch.next() {
            Some(interval) => {
                let interval = interval.map_err(|e| error(format!("{e:#}")))?;
                serde_json::to_string(&interval).map(Some).map_err(error)
            }
            None => Ok(None),
        }
    }
}

#[pymodule]
fn _memlat(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Watcher>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(detect, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
