"""memlat from Python: the same fields as the command, errors as exceptions,
measurements with the GIL released."""

import threading

import pytest

import memlat


def test_run_gives_the_fields_of_memlat_run_json():
    m = memlat.run(16384, repeats=2, sample_ms=5)
    for key in ("schema_version", "kind", "host", "size", "stride", "pattern",
                "ns_per_load", "cycles_per_load", "cycle_source", "samples",
                "page_backing", "warnings"):
        assert key in m, key
    assert m["kind"] == "run" and m["size"] == 16384
    ns = m["ns_per_load"]
    assert 0 < ns["min"] <= ns["median"] <= ns["max"]
    assert len(m["samples"]) == 2


def test_a_distribution_of_timed_loads():
    m = memlat.run(16384, pattern="random", repeats=2, sample_ms=5,
                   distribution=True, distribution_ms=20)
    d = m["distribution"]
    p = d["percentiles_ns"]
    assert 0 < p["p50"] <= p["p90"] <= p["p99"] <= p["p99.9"] <= p["p99.99"]
    assert d["loads_timed"] > 0 and d["histogram"] and d["modes"]
    assert "periodic_stalls" in d
    assert "distribution" not in memlat.run(16384, repeats=2, sample_ms=5)
    with pytest.raises(ValueError, match="distribution_ms"):
        memlat.run(16384, distribution=True, distribution_ms=5)


def test_software_events_are_counted_for_real():
    m = memlat.run(65536, pattern="random", events=["task-clock", "page-faults"],
                   repeats=2, sample_ms=5)
    assert m["events"]["task-clock"] is not None


def test_bad_settings_raise_with_memlats_message():
    with pytest.raises(ValueError, match="size"):
        memlat.run(0)
    with pytest.raises(ValueError, match="pattern"):
        memlat.run(4096, pattern="zigzag")
    with pytest.raises(ValueError, match="ratio"):
        memlat.sweep(ratio=1.0)


def test_sweep_points_and_detection():
    points = memlat.sweep(start=4096, stop=1 << 20, ratio=2, strides=[64],
                          repeats=2, sample_ms=1)
    sizes = [p["size"] for p in points if p["pattern"] == "random"]
    assert sizes == sorted(sizes) and len(sizes) >= 7
    assert {p["pattern"] for p in points} == {"stride", "random"}
    d = memlat.detect(points)
    assert d["levels"] and d["levels"][-1]["name"] == "memory"
    assert all("size_bracket_bytes" in level for level in d["levels"])


def test_to_pandas_has_a_row_per_point():
    pd = pytest.importorskip("pandas")
    points = memlat.sweep(start=4096, stop=64 << 10, ratio=2, repeats=2, sample_ms=1,
                          refine=False)
    df = memlat.to_pandas(points)
    assert isinstance(df, pd.DataFrame) and len(df) == len(points)
    assert (df["ns_median"] > 0).all()


def test_the_gil_is_released_while_measuring():
    ticks = 0
    done = threading.Event()

    def measure():
        memlat.run(1 << 26, pattern="random", repeats=2, sample_ms=50)
        done.set()

    worker = threading.Thread(target=measure)
    worker.start()
    while not done.is_set():
        ticks += 1
    worker.join()
    # Python code ran all the while memlat measured.
    assert ticks > 1000


@pytest.mark.parametrize("call, message", [
    (lambda: memlat.run(-1), "size"),
    (lambda: memlat.run(16384, stride=-64), "stride"),
    (lambda: memlat.run(16384, cpu=-1), "cpu"),
    (lambda: memlat.run(16384, repeats=-1), "repeats"),
    (lambda: memlat.run(16384, repeats=0), "repeats"),
    (lambda: memlat.run(7), "size 7"),
    (lambda: memlat.run("7"), "size 7"),
    (lambda: memlat.run("16Q"), "size"),
    (lambda: memlat.sweep(4096, 1024, 1.3), "stop"),
    (lambda: memlat.sweep(-1, 1024), "start"),
    (lambda: memlat.sweep(1024, 65536, strides=[-64]), "strides"),
    (lambda: memlat.sweep(1024, 65536, repeats=-2), "repeats"),
    (lambda: memlat.run(16384, events="no-such-event"), "no-such-event"),
])
def test_bad_values_raise_value_error_with_memlats_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: memlat.run(16384.5), "size"),
    (lambda: memlat.run(16384.0), "size"),
    (lambda: memlat.run(None), "size"),
    (lambda: memlat.run(True), "size"),
    (lambda: memlat.run(16384, stride=1.5), "stride"),
    (lambda: memlat.run(16384, cpu="0"), "cpu"),
    (lambda: memlat.run(16384, events=[1]), "events"),
    (lambda: memlat.run(16384, pattern=3), "pattern"),
    (lambda: memlat.sweep(1024, 65536, "x"), "ratio"),
    (lambda: memlat.detect("x"), "detect"),
    (lambda: memlat.detect(3), "detect"),
    (lambda: memlat.detect(["x"]), "detect"),
])
def test_wrong_types_raise_type_error(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_sizes_take_the_command_lines_strings():
    m = memlat.run("16K", repeats=2, sample_ms=5)
    assert m["size"] == 16384
    assert memlat.run("256K", stride="4K", repeats=2, sample_ms=5)["stride"] == 4096


def test_one_event_name_is_one_event():
    m = memlat.run(16384, events="task-clock", repeats=2, sample_ms=5)
    assert list(m["events"]) == ["task-clock"], m["events"]


def test_watch_yields_an_interval_dict_each_interval():
    readings = list(memlat.watch(duration=1.0, interval=0.5, duty=0.2))
    assert len(readings) == 2
    first = readings[0]
    for key in ("index", "t_s", "utc", "ns", "edge_ns", "edge_bytes", "steal", "spent_ms", "levels"):
        assert key in first, key
    assert first["levels"][-1] == "memory" and len(first["ns"]) == len(first["levels"])
    assert all(ns > 0 for ns in first["ns"])
    with pytest.raises(ValueError, match="duty"):
        next(memlat.watch(duration=1.0, duty=5))


@pytest.mark.parametrize("call, error, message", [
    (lambda: memlat.run(10**30), ValueError, "size .*too large"),
    (lambda: memlat.run(16384, stride=2**70), ValueError, "stride .*too large"),
    (lambda: memlat.run(-8), ValueError, "size -8: give 8 or more"),
    (lambda: memlat.run(0), ValueError, "size 0: give 8 or more"),
    (lambda: memlat.run(16384, repeats=0), ValueError, "repeats 0: give 1 or more"),
    (lambda: memlat.run(16384, repeats=2**40), ValueError, "repeats .*too large"),
    (lambda: memlat.run(16384, repeats=10**6), ValueError, "repeats 1000000: at most"),
    (lambda: memlat.run(16384, sample_ms=0), ValueError, "sample_ms 0: give 1 or more"),
    (lambda: memlat.run(16384, sample_ms=10**7), ValueError, "sample_ms 10000000: at most"),
    (lambda: memlat.run(16384, accesses=0), ValueError, "accesses 0: give 1 or more"),
    (lambda: memlat.run(16384, accesses=10**30), ValueError, "accesses .*too large"),
    (lambda: memlat.run(16384, cpu=99999), ValueError, "cpu 99999: no such CPU"),
    (lambda: memlat.run(16384, cpu=10**30), ValueError, "cpu .*too large"),
    (lambda: memlat.run(16384, distribution=True, distribution_ms=0), ValueError,
     "distribution_ms 0: give 10 or more"),
    (lambda: memlat.run(16384, pages="huge"), ValueError, "pages"),
    (lambda: memlat.run(16384, distribution="yes"), TypeError, "distribution"),
    (lambda: memlat.sweep(stop=10**30), ValueError, "stop .*too large"),
    (lambda: memlat.sweep(ratio=10**400), ValueError, "ratio .*too large"),
    (lambda: memlat.sweep(ratio=float("nan")), ValueError, "ratio"),
    (lambda: memlat.sweep(strides=None), TypeError, "strides"),
    (lambda: memlat.sweep(strides=[2**70]), ValueError, "strides .*too large"),
    (lambda: memlat.sweep(cpu=99999), ValueError, "cpu 99999: no such CPU"),
    (lambda: memlat.sweep(sample_ms=0), ValueError, "sample_ms 0"),
    (lambda: memlat.sweep(refine="no"), TypeError, "refine"),
    (lambda: next(memlat.watch(cpu=99999)), ValueError, "cpu 99999: no such CPU"),
    (lambda: next(memlat.watch(cpu=-1)), ValueError, "cpu -1"),
    (lambda: next(memlat.watch(interval="1")), TypeError, "interval"),
    (lambda: next(memlat.watch(interval=-1)), ValueError, "interval -1"),
    (lambda: next(memlat.watch(duration=float("inf"))), ValueError, "duration"),
    (lambda: next(memlat.watch(duty=None)), TypeError, "duty"),
])
def test_every_bad_value_names_its_parameter(call, error, message):
    """ValueError or TypeError naming the parameter: never OverflowError, an
    OS error, or a lower bound that the next value up then refuses."""
    with pytest.raises(error, match=message):
        call()


_INTERRUPTED = """
import json, signal, sys, time
import memlat
# Python raises KeyboardInterrupt only where it found SIGINT at its default;
# a test run started in the background of a script inherits it ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
try:
    {call}
except KeyboardInterrupt as e:
    print(json.dumps({{"t": time.monotonic(), "points": len(getattr(e, "points", []) or [])}}))
    sys.exit(7)
print("finished")
"""


@pytest.mark.parametrize("call", ["memlat.sweep()", 'memlat.run("1G")'])
def test_ctrl_c_stops_a_long_call_within_a_second(call):
    import json
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", _INTERRUPTED.format(call=call)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert child.poll() is None, "the call ended before Ctrl-C: nothing was tested"
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=10)
    assert child.returncode == 7, (out, err)
    caught = json.loads(out)
    # CLOCK_MONOTONIC is system-wide on Linux: the child's clock is ours.
    assert caught["t"] - sent < 1.0, caught["t"] - sent
    assert time.monotonic() - sent < 5.0
    if call.startswith("memlat.sweep"):
        # The sweep's finished points come with the exception.
        assert caught["points"] > 0
