"""memlat from Python: memory latency by pointer chasing, with the same engine
(Rust) as the `memlat` command.

    >>> import memlat
    >>> memlat.run(16384)["ns_per_load"]["median"]      # an L1 hit, in ns
    >>> points = memlat.sweep(stop=64 << 20)             # a random-chain sweep
    >>> memlat.detect(points)["levels"]                  # levels from the curve
    >>> memlat.to_pandas(points)                         # one row per point

Every function measures with the GIL released and raises ValueError with
memlat's own message when a setting is out of range, and TypeError when an
argument has the wrong type. Sizes take bytes or the command line's strings
("16K", "1G": powers of 1024).
"""

import json
import operator

from . import _memlat

__version__ = _memlat.__version__

__all__ = ["run", "sweep", "sweep_result", "detect", "watch", "to_pandas"]


def _count(value, name):
    """A whole number of at least 0, as an int: TypeError for another type
    (a float is not silently truncated), ValueError below 0."""
    if isinstance(value, bool):
        raise TypeError(f"{name} {value!r}: give a whole number, not a bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} {value!r}: give a whole number (an int), "
                        f"not {type(value).__name__}") from None
    if number < 0:
        raise ValueError(f"{name} {number}: give 0 or more")
    return number


def _size(value, name):
    """Bytes as an int, or a string such as "16K" read as `memlat run -n` reads it."""
    if isinstance(value, str):
        return _memlat.parse_size(name, value)
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} {value!r}: give bytes as an int or a string such as '16K', "
                        f"not {type(value).__name__}")
    return _count(value, name)


def _optional(value, name):
    return None if value is None else _count(value, name)


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
    return json.loads(_memlat.run(
        _size(size, "size"), _size(stride, "stride"), _text(pattern, "pattern"),
        _optional(accesses, "accesses"), _names(events, "events"), _text(pages, "pages"),
        _optional(cpu, "cpu"), _count(repeats, "repeats"), _count(sample_ms, "sample_ms"),
        _count(distribution_ms, "distribution_ms") if distribution else None))


def sweep_result(start=1024, stop=64 << 20, ratio=1.3, strides=(), random=True,
                 repeats=3, sample_ms=5, pages="thp", cpu=None, refine=True):
    """A whole sweep, as `memlat sweep --json` writes it (config, points, detection)."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)):
        raise TypeError(f"ratio {ratio!r}: give a number such as 1.3")
    strides = [strides] if isinstance(strides, (int, str)) else strides
    return json.loads(_memlat.sweep(
        _size(start, "start"), _size(stop, "stop"), float(ratio),
        [_size(s, "strides") for s in strides], bool(random),
        _count(repeats, "repeats"), _count(sample_ms, "sample_ms"), _text(pages, "pages"),
        _optional(cpu, "cpu"), bool(refine)))


def sweep(start=1024, stop=64 << 20, ratio=1.3, strides=(), random=True, repeats=3,
          sample_ms=5, pages="thp", cpu=None, refine=True):
    """The points of a sweep (seed 004's sizes from start to stop, ratio apart):
    a list of dicts, one per size and series, as `memlat run` returns them."""
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
    interval (index, t_s, utc, ns per level, edge_ns, edge_bytes, edge_hit,
    edge_served_bytes, edge_bracket_bytes, edge_warm_cycles, steal, spent_ms)
    until `duration` seconds have passed (None: until you stop).

    duration, interval: seconds; duty: the share of each interval spent
    measuring, at most. The plateaus come from this machine's remembered
    sweep, else a probe of a few seconds. Each dict also carries `levels`:
    the names of the levels, in the order of `ns`.
    """
    w = _memlat.Watcher(duration, float(interval), cpu, float(duty))
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
