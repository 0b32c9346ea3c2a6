"""benchmarks/cpu_use.py: the CPU seconds a benchmark rollout used, over text read from this project's
benchmark machine (/proc/stat's first line, `podman stats` of two sandbox hosts mid-rollout) and over this
machine's live /proc/stat."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import cpu_use  # noqa: E402

# Read on the 2-core benchmark machine (AMD EPYC, Linux 6.18), 2026-11-26.
PROC_STAT = """cpu  2349901 0 914751 2194717 30354 0 21047 4192 0 0
cpu0 1110972 0 436357 1194344 7947 0 4211 2062 0 0
cpu1 1238928 0 478393 1000373 22407 0 16836 2130 0 0
"""
PODMAN_STATS = "hvc-prof1 80489298867\nhvc-prof2 75305209759\n"


def test_busy_is_everything_but_idle_and_iowait():
    tck = os.sysconf("SC_CLK_TCK")
    assert cpu_use.machine_busy_seconds(PROC_STAT) == pytest.approx((2349901 + 914751 + 21047 + 4192) / tck)


def test_a_per_cpu_line_is_refused():
    with pytest.raises(ValueError, match="summary line"):
        cpu_use.machine_busy_seconds(PROC_STAT.split("\n", 1)[1])


def test_podman_cpu_nano_is_seconds_by_container():
    assert cpu_use.parse_podman_cpu(PODMAN_STATS) == {"hvc-prof1": 80.489298867, "hvc-prof2": 75.305209759}


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs Linux's /proc/stat")
def test_busy_seconds_grow_by_the_cpu_this_process_burns():
    before = cpu_use.machine_busy_seconds(Path("/proc/stat").read_text())
    start = time.process_time()
    while time.process_time() - start < 0.5:
        pass
    after = cpu_use.machine_busy_seconds(Path("/proc/stat").read_text())
    assert after - before >= 0.45


def test_done_splits_hosts_from_the_controller(monkeypatch):
    reads = iter([(100.0, {"a": 10.0, "b": 20.0}), (160.0, {"a": 30.0, "b": 35.0})])
    monkeypatch.setattr(cpu_use.CpuUse, "_read", lambda self: next(reads))
    monkeypatch.setattr(cpu_use.os, "cpu_count", lambda: 2)
    use = cpu_use.CpuUse(["a", "b"]).done(40.0)
    assert use == {"wall_s": 40.0, "cpu_s": 60.0, "hosts": {"a": 20.0, "b": 15.0}, "controller": 25.0, "cores": 2,
                   "busy": 0.75, "at_full_busy_s": 30.0}
    assert cpu_use.describe("first_2", use) == (
        "CPU of first_2: 60 s in 40 s (hosts 20 + 15, controller and the rest 25); the 2 cores 75% busy, 30 s were"
        " they busy throughout")


def test_the_recorded_run_reads_as_the_benchmarks_page_quotes_it():
    """docs/benchmarks.md quotes these lines of the run at be18b2e (tests/fixtures/benchmarks/)."""
    run = json.loads((FIXTURES / "benchmarks" / "cluster_ratios-be18b2e.json").read_text())
    lines = [cpu_use.describe(label, use) for label, use in run["cpu"].items()]
    assert lines == [
        "CPU of first_1: 321 s in 226 s (hosts 294, controller and the rest 27); the 2 cores 71% busy, 160 s were"
        " they busy throughout",
        "CPU of first_3: 486 s in 273 s (hosts 292 + 65 + 65, controller and the rest 64); the 2 cores 89% busy,"
        " 243 s were they busy throughout",
        "CPU of first_3_every_host_compiling: 1251 s in 644 s (hosts 389 + 390 + 382, controller and the rest 91);"
        " the 2 cores 97% busy, 626 s were they busy throughout",
    ]
    for use in run["cpu"].values():
        assert abs(sum(use["hosts"].values()) + use["controller"] - use["cpu_s"]) < 0.3
