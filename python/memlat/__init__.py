"""memlat from Python: memory latency by pointer chasing, with the same engine
(Rust) as the `memlat` command.

    >>> import memlat
    >>> memlat.run(16384)["ns_per_load"]["median"]      # an L1 hit, in ns
    >>> points = memlat.sweep(stop=64 << 20)             # a random-chain sweep
    >>> memlat.detect(points)["levels"]                  # levels from the curve
    >>> memlat.to_pandas(points)                         # one row per point

Every function measures with the GIL released and raises ValueError with
memlat's own message when a setting is out of range, and TypeError when an
argument has the wrong type, each naming the parameter. Sizes take bytes or
the command line's strings ("16K", "1G": powers of 1024).

Ctrl-C stops run and sweep within a second with KeyboardInterrupt; a
sweep's finished points come with it (the exception's `points`, and
`result` for sweep_result: the sweep so far, `complete` false).
"""

import json
import operator

from . import _memlat

__version__ = _memlat.__version__

__all__ = ["run", "sweep", "sweep_result", "detect", "watch", "to_pandas"]


_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1


def _count(value, name, low=0, high=_U64, what=""):
    """A whole number from low to high, as an int: TypeError for another
    type (a float is not silently truncated), ValueError outside the range
    (the Rust side then checks memlat's own, narrower, limits)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} {value!r}: give a whole number, not a bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} {value!r}: give a whole number (an int), "
                        f"not {type(value).__name__}") from None
    if number < low:
        raise ValueError(f"{name} {number}: give {low} or more{what}")
    if number > high:
        raise ValueError(f"{name} {number}: too large; give at most {high}{what}")
    return number


_BYTES = " (bytes, a multiple of 8, e.g. 16K)"
# memlat's largest buffer (64 TiB, `limits::MAX_SIZE`).
_MAX_SIZE = 1 << 46


def _seconds(value, name, optional=False):
    """Seconds as a float: TypeError for a non-number, ValueError for one
    that is not above zero (or not finite)."""
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} {value!r}: give seconds (a number), not {type(value).__name__}")
    try:
        seconds = float(value)
    except OverflowError:
        raise ValueError(f"{name} {value}: too large; give seconds, e.g. 1.0") from None
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{name} {value}: give seconds above zero, e.g. 1.0")
    return seconds


def _fraction(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} {value!r}: give a number, not {type(value).__name__}")
    return float(value)


def _size(value, name):
    """Bytes as an int, or a string such as "16K" read as `memlat run -n` reads it."""
    if isinstance(value, str):
        return _memlat.parse_size(name, value)
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} {value!r}: give bytes as an int or a string such as '16K', "
                        f"not {type(value).__name__}")
    return _count(value, name, low=8, high=_MAX_SIZE, what=_BYTES)


def _optional(value, name, low=0, high=_U64):
    return None if value is None else _count(value, name, low, high)


def _cpu(value):
    return _optional(value, "cpu", high=(1 << 31) - 1)


def _names(value, name):
    """A list of strings; one string alone is one name, not its characters."""
    if isinstance(value, str):
        return [value]
    try:
        names = list(value)
    except TypeError:
        raise TypeError(f"{name} {value!r}: give a name or a list of names") from None
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"{name}: {n!r} is not a name (a str)")
    return names


def _bool(value, name):
    if not isinstance(value, (bool, int)):
        raise TypeError(f"{name} {value!r}: give True or False, not {type(value).__name__}")
    return bool(value)


def _text(value, name):
    if not isinstance(value, str):
        raise TypeError(f"{name} {value!r}: give a name (a str), not {type(value).__name__}")
    return value


def run(size, stride=64, pattern="stride", accesses=None, events=(), pages="thp",
        cpu=None, repeats=5, sample_ms=50, distribution=False, distribution_ms=400):
    """One size and stride or pattern: the fields of `memlat run --format json`.

    size, stride: bytes; pattern: "stride", "random" or "page-random";
    accesses: loads per sample (None: calibrated to sample_ms); events: perf
    event names (uncountable ones are null, with a warning); pages: "4k",
    "thp", "2m" or "1g"; cpu: the CPU to pin to (None: the current one).
    distribution: also time loads one by one for distribution_ms and add
    `distribution` (percentiles_ns, histogram, modes, periodic_stalls), as
    `memlat run --distribution` does.
    """
    args = (
        _size(size, "size"), _size(stride, "stride"), _text(pattern, "pattern"),
        _optional(accesses, "accesses", low=1), _names(events, "events"), _text(pages, "pages"),
        _cpu(cpu), _count(repeats, "repeats", low=1, high=_U32),
        _count(sample_ms, "sample_ms", low=1),
        _count(distribution_ms, "distribution_ms", low=10)
        if _bool(distribution, "distribution") else None)
    try:
        return json.loads(_memlat.run(*args))
    except KeyboardInterrupt as e:
        # A run that finished as Ctrl-C came still comes back with it.
        partial = getattr(e, "partial", None)
        if isinstance(partial, str):
            e.result = json.loads(partial)
        raise


def sweep_result(start=1024, stop=64 << 20, ratio=1.3, strides=(), random=True,
                 repeats=3, sample_ms=5, pages="thp", cpu=None, refine=True):
    """A whole sweep, as `memlat sweep --json` writes it (config, points, detection).

    Ctrl-C raises KeyboardInterrupt within a second; its `result` is the
    sweep so far (the finished points, perhaps none, `complete` false;
    absent when Ctrl-C came before the sweep had started)."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)):
        raise TypeError(f"ratio {ratio!r}: give a number such as 1.3")
    try:
        ratio = float(ratio)
    except OverflowError:
        raise ValueError(f"ratio {ratio}: too large; give a number such as 1.3") from None
    strides = [strides] if isinstance(strides, (int, str)) else strides
    if strides is None or isinstance(strides, bytes) or not hasattr(strides, "__iter__"):
        raise TypeError(f"strides {strides!r}: give a stride or a list of strides (bytes)")
    args = (
        _size(start, "start"), _size(stop, "stop"), ratio,
        [_size(s, "strides") for s in strides], _bool(random, "random"),
        _count(repeats, "repeats", low=1, high=_U32), _count(sample_ms, "sample_ms", low=1),
        _text(pages, "pages"), _cpu(cpu), _bool(refine, "refine"))
    try:
        return json.loads(_memlat.sweep(*args))
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial", None)
        if isinstance(partial, str):
            e.result = json.loads(partial)
            e.points = e.result["points"]
        raise


def sweep(start=1024, stop=64 << 20, ratio=1.3, strides=(), random=True, repeats=3,
          sample_ms=5, pages="thp", cpu=None, refine=True):
    """The points of a sweep (seed 004's sizes from start to stop, ratio apart):
    a list of dicts, one per size and series, as `memlat run` returns them.

    Ctrl-C raises KeyboardInterrupt within a second; its `points` are the
    points finished by then (absent when Ctrl-C came before the sweep started)."""
    return sweep_result(start, stop, ratio, strides, random, repeats, sample_ms,
                        pages, cpu, refine)["points"]


def detect(points):
    """Cache levels from points (memlat.run or memlat.sweep results, or dicts
    with `size` and `ns_per_load`): the fields of `memlat detect --format json`.
    Pass one series (e.g. the random points) for one curve."""
    if isinstance(points, dict):
        points = [points]
    if isinstance(points, (str, bytes)) or not hasattr(points, "__iter__"):
        raise TypeError(f"detect {points!r}: give the points memlat.run or memlat.sweep "
                        f"returns (a list of dicts), not {type(points).__name__}")
    points = list(points)
    for p in points:
        if not isinstance(p, dict):
            raise TypeError(f"detect: {p!r} is not a point (a dict with size and ns_per_load)")
    random = [p for p in points if p.get("pattern", "random") == "random"]
    return json.loads(_memlat.detect(json.dumps(random or list(points))))


def watch(duration=None, interval=1.0, cpu=None, duty=0.1):
    """Each level's latency over time, as `memlat watch`: yields one dict per
    interval (index, t_s, utc, ns per level, edge_ns, edge_miss_ns, edge_bytes,
    edge_hit, edge_served_bytes, edge_bracket_bytes, edge_warm_cycles, steal,
    spent_ms)
    until `duration` seconds have passed (None: until you stop).

    duration, interval: seconds; duty: the share of each interval spent
    measuring, at most. The plateaus come from this machine's remembered
    sweep, else a probe of a few seconds. Each dict also carries `levels`:
    the names of the levels, in the order of `ns`.
    """
    w = _memlat.Watcher(_seconds(duration, "duration", optional=True),
                        _seconds(interval, "interval"), _cpu(cpu), _fraction(duty, "duty"))
    header = json.loads(w.header())
    names = [level["name"] for level in header["plan"]["levels"]]
    for line in w:
        interval_ = json.loads(line)
        interval_["levels"] = names
        yield interval_


def to_pandas(points):
    """One row per point: size, stride, pattern, ns and cycles (median, min,
    max), page backing, and each counted event per load. Needs pandas."""
    import pandas as pd

    rows = []
    for p in points if isinstance(points, list) else [points]:
        row = {k: p.get(k) for k in ("size", "stride", "pattern", "kernel", "repeats", "cycle_source")}
        for k in ("median", "min", "max"):
            row[f"ns_{k}"] = p["ns_per_load"][k]
            row[f"cycles_{k}"] = p["cycles_per_load"][k]
        row["pages"] = p.get("page_backing", {}).get("obtained")
        for name, value in (p.get("events") or {}).items():
            row[name] = value.get("per_load") if isinstance(value, dict) else value
        rows.append(row)
    return pd.DataFrame(rows)
