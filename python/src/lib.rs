//! memlat from Python: thin bindings over the library (`memlat._memlat`);
//! the Python package `memlat` wraps them in keyword functions returning
//! dicts. Every function measures with the GIL released and raises
//! `ValueError` with memlat's own message on bad input (the package raises
//! `TypeError` for arguments of the wrong type before they get here).
//!
//! `run` and `sweep` measure on a thread of their own while the calling
//! thread waits with the GIL released and looks for signals every
//! [`POLL`]: Ctrl-C raises the stop flag the engine and the sweep poll, and
//! `KeyboardInterrupt` comes within a second, with what was finished
//! attached as its `partial` attribute (JSON) where there is any.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use memlat::analysis::detect::CurvePoint;
use memlat::chain::Pattern;
use memlat::engine::{Engine, Point};
use memlat::experiments::Observer;
use memlat::experiments::sweep::{Range, RangeEnd, SeriesKey, SweepPlan, SweepResult};
use memlat::platform::PageRequest;
use memlat::platform::counters::parse_event;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
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

/// `cpu`, checked against the CPUs this process may run on (the command
/// line's `--cpu` check), so a wrong one is named rather than an OS error.
fn check_cpu(cpu: Option<usize>) -> PyResult<()> {
    let Some(cpu) = cpu else { return Ok(()) };
    let allowed = memlat::platform::allowed_cpus();
    if allowed.is_empty() || allowed.contains(&cpu) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(|c| c.to_string()).collect();
    Err(error(format!(
        "cpu {cpu}: no such CPU available to memlat (allowed: {}), or None for the current one",
        list.join(", ")
    )))
}

fn engine(
    cpu: Option<usize>,
    events: &[String],
    stop: Option<Arc<AtomicBool>>,
) -> Result<Engine, String> {
    let specs = events
        .iter()
        .map(|e| parse_event(e).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut builder = Engine::builder().events(&specs);
    if let Some(cpu) = cpu {
        builder = builder.cpu(cpu);
    }
    if let Some(stop) = stop {
        builder = builder.stop_on(stop);
    }
    builder.build().map_err(|e| e.to_string())
}

/// How often the waiting thread looks for signals.
const POLL: Duration = Duration::from_millis(50);

/// How long, after Ctrl-C, the waiting thread gives the measuring one to
/// stop and hand back what it has before raising without it (it then stops
/// on its own: the engine polls the flag between chunks of loads).
const GRACE: Duration = Duration::from_millis(500);

/// How a measuring thread's work ended, seen from the waiting thread.
enum Waited<T> {
    Done(T),
    /// The signal's exception (`KeyboardInterrupt`), and the work's result
    /// if it came within [`GRACE`].
    Interrupted(PyErr, Option<T>),
}

/// Runs `work` on a thread of its own (it pins itself, not the caller)
/// with a stop flag, waiting with the GIL released and checking for
/// signals every [`POLL`].
fn measure_interruptibly<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce(Arc<AtomicBool>) -> T + Send + 'static,
) -> PyResult<Waited<T>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let (tx, mut rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("memlat-measure".into())
        .spawn(move || {
            // The waiting thread may have gone (Ctrl-C past the grace): nothing to tell.
            let _ = tx.send(work(flag));
        })
        .map_err(|e| PyRuntimeError::new_err(format!("starting memlat's measuring thread: {e}")))?;
    // A Receiver is not Sync: it goes into each wait and comes back.
    let wait = |py: Python<'_>, rx: mpsc::Receiver<T>, timeout: Duration| {
        py.detach(move || {
            let got = rx.recv_timeout(timeout);
            (got, rx)
        })
    };
    loop {
        let (got, back) = wait(py, rx, POLL);
        rx = back;
        match got {
            Ok(value) => return Ok(Waited::Done(value)),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "memlat's measuring thread ended without a result (a bug: please report it)",
                ));
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Err(signal) = py.check_signals() {
                    stop.store(true, Ordering::SeqCst);
                    let (late, _) = wait(py, rx, GRACE);
                    return Ok(Waited::Interrupted(signal, late.ok()));
                }
            }
        }
    }
}

/// The signal's exception, with `partial` (JSON) set when there is one.
fn interrupted(py: Python<'_>, signal: PyErr, partial: Option<String>) -> PyErr {
    if let Some(partial) = partial {
        // An exception that takes no attributes still goes up, without it.
        let _ = signal.value(py).setattr("partial", partial);
    }
    signal
}

/// The sweep's observer for Python: stops at the flag and keeps the
/// latest checkpoint, which is what a sweep abandoned mid-point has.
struct Stoppable {
    stop: Arc<AtomicBool>,
    last: Option<String>,
}

impl Observer<SweepResult> for Stoppable {
    fn interrupted(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn checkpoint(&mut self, partial: &SweepResult) -> anyhow::Result<()> {
        self.last = Some(serde_json::to_string(partial)?);
        Ok(())
    }
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
    memlat::limits::sample_ms(sample_ms, memlat::limits::Origin::Setting("sample_ms"))
        .map_err(error)?;
    if let Some(accesses) = accesses {
        memlat::limits::accesses(accesses, memlat::limits::Origin::Setting("accesses"))
            .map_err(error)?;
    }
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
    check_cpu(cpu)?;
    let work = move |stop| -> Result<String, String> {
        let mut engine = engine(cpu, &events, Some(stop))?;
        let m = engine.measure(&point).map_err(|e| e.to_string())?;
        memlat::output::result_json("run", &m).map_err(|e| e.to_string())
    };
    match measure_interruptibly(py, work)? {
        Waited::Done(result) => result.map_err(error),
        Waited::Interrupted(signal, late) => {
            Err(interrupted(py, signal, late.and_then(Result::ok)))
        }
    }
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
    memlat::limits::sample_ms(sample_ms, memlat::limits::Origin::Setting("sample_ms"))
        .map_err(error)?;
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
    check_cpu(cpu)?;
    let work = move |flag: Arc<AtomicBool>| -> (Result<String, String>, Option<String>) {
        let mut observer = Stoppable {
            stop: Arc::clone(&flag),
            last: None,
        };
        let range = Range {
            from: start,
            to: stop,
            ratio,
            end: RangeEnd::To,
        };
        let result = sweep_with(&mut observer, flag, cpu, template, range, series, refine);
        (result, observer.last)
    };
    match measure_interruptibly(py, work)? {
        Waited::Done((result, _)) => result.map_err(error),
        Waited::Interrupted(signal, late) => {
            // Cut short between points the sweep returns what it has; in
            // the middle of one, its last checkpoint is that.
            let partial = late.and_then(|(result, last)| result.ok().or(last));
            Err(interrupted(py, signal, partial))
        }
    }
}

/// The sweep itself, on the measuring thread.
fn sweep_with(
    observer: &mut Stoppable,
    flag: Arc<AtomicBool>,
    cpu: Option<usize>,
    template: Point,
    range: Range,
    series: Vec<SeriesKey>,
    refine: bool,
) -> Result<String, String> {
    let mut engine = engine(cpu, &[], Some(flag))?;
    let caches = memlat::platform::caches::data_caches(engine.cpu());
    let mut plan = SweepPlan::new(template, engine.cpu(), range, series, Vec::new(), caches);
    plan.config.refine = refine;
    let result = memlat::experiments::sweep::run(&mut engine, &plan, observer)
        .map_err(|e| format!("{e:#}"))?;
    serde_json::to_string(&result).map_err(|e| e.to_string())
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
        check_cpu(cpu)?;
        let engine = engine(cpu, &[], None).map_err(error)?;
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
