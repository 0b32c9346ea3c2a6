"""check.yml on the sandbox after the main job (site.yml) ran there: the cross-host answer.

Runs in the test command's sandbox stage, after scripts/sandbox-run.sh rolled out site.yml and checked the
cluster with the smoke test and the bandwidth table: the test command names that check's JSON report in
HVC_SANDBOX_CHECK_REPORT, and the first test asserts on it instead of running the same check again (about 70 s).
Run alone, it runs the check itself.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from horovod_cluster import Cluster
from horovod_cluster.ansible.events import TaskLog
from horovod_cluster.results import CheckReport, from_json
from horovod_cluster.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def _smoke_and_bench_check(tmp_path: Path) -> CheckReport:
    """The main job's `check --bench` (its JSON report) when the test command ran it, else a check of its own."""
    saved = os.environ.get("HVC_SANDBOX_CHECK_REPORT")
    if saved:
        report = from_json(Path(saved).read_text())
        assert isinstance(report, CheckReport) and report.bandwidth, f"{saved} is not the report of a check --bench"
        return report
    return Cluster(SANDBOX, artifacts_dir=tmp_path).check(smoke=True, bench=True)


def test_smoke_on_every_slot_with_gloo_and_mpi_and_bandwidth_beside_torch(tmp_path):
    report = _smoke_and_bench_check(tmp_path)
    hosts = Cluster(SANDBOX).hosts()
    assert report.ok, report.to_json()
    for controller in ("gloo", "mpi"):
        smoke = report.smoke[controller]
        assert smoke["ok"] and smoke["controller"] == controller
        assert sorted({rank["host"] for rank in smoke["ranks"]}) == sorted(hosts)
        assert sorted(rank["rank"] for rank in smoke["ranks"]) == list(range(smoke["size"]))
        assert smoke["size"] >= len(hosts)
    assert report.findings == [] and all(not h["problems"] for h in report.hosts.values())
    # One job group per controller, every host in it, on CPU tensors (the sandbox has no GPU).
    assert [(g["controller"], g["hosts"], g["tensors"]) for g in report.job_groups["groups"]] == [
        ("gloo", sorted(hosts), "cpu"), ("mpi", sorted(hosts), "cpu")]
    assert report.job_groups["spans"] == {"gloo": True, "mpi": True}
    # The bandwidth table: one rank per host (horovod_check_bench_ranks_per_host), 4 KiB to 256 MiB, and
    # torch.distributed's allreduce on the same ranks and sizes beside it.
    table, torch = report.bandwidth["allreduce"], report.bandwidth["torch_allreduce"]
    assert table["size"] == len(hosts) and table["algorithm"] == "gloo", table
    assert [row["bytes"] for row in table["rows"]] == [4096, 65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20]
    assert all(row["busbw_GBps"] > 0 and row["seconds"] > 0 for row in table["rows"])
    assert (torch["size"], torch["algorithm"]) == (len(hosts), "torch.distributed/gloo"), torch
    assert [row["bytes"] for row in torch["rows"]] == [row["bytes"] for row in table["rows"]]
    assert all(row["busbw_GBps"] > 0 for row in torch["rows"])
    assert report.bandwidth["link"]["GBps"] > 0 and report.bandwidth["busbw_over_link"] > 0
    # A check changes nothing: its scripts and iperf3 came with the rollout.
    assert {name: h.changed for name, h in report.run.hosts.items()} == {name: 0 for name in hosts}


def test_check_without_the_rollouts_scripts_says_so(tmp_path):
    """A check installs nothing: on a launcher without the check scripts it names what is missing."""
    hosts = Cluster(SANDBOX).hosts()
    launcher, moved = hosts[0], "/opt/horovod-cluster/check.away"
    subprocess.run(["podman", "exec", launcher, "mv", "/opt/horovod-cluster/check", moved], check=True)
    tasks = TaskLog()
    try:
        report = Cluster(SANDBOX, artifacts_dir=tmp_path, on_event=tasks).check(smoke=True)
    finally:
        subprocess.run(["podman", "exec", launcher, "mv", moved, "/opt/horovod-cluster/check"], check=True)
    assert not report.ok
    error = report.smoke["_preconditions"]["error"]
    assert "no check scripts in /opt/horovod-cluster/check" in error and "rollout" in error
    # A check on its own reads what Horovod was built with itself (check-build): no rollout ran before it.
    assert tasks.last_ends("Read what Horovod was built with") == {launcher: "ok"}
    assert all(h.changed == 0 for h in report.run.hosts.values())


def test_a_stopped_host_is_named_within_bounded_time(tmp_path):
    """One host stopped: the report names it unreachable, and the smoke test names the host the
    launcher could not reach, without hanging."""
    hosts = Cluster(SANDBOX).hosts()
    victim = hosts[-1]
    subprocess.run(["podman", "stop", "-t", "1", victim], check=True, capture_output=True)
    try:
        start = time.monotonic()
        report = Cluster(SANDBOX, artifacts_dir=tmp_path).check(smoke=True)
        elapsed = time.monotonic() - start
    finally:
        subprocess.run(["podman", "start", victim], check=True, capture_output=True)
        Sandbox().up(count=len(hosts))  # new address and host key scan, inventory rewritten
    assert elapsed < 240, f"check took {elapsed:.0f} s with a host down"
    assert not report.ok
    assert report.run.hosts[victim].unreachable
    for controller in ("gloo", "mpi"):
        assert report.smoke[controller]["ok"] is False
        assert report.smoke[controller]["unreachable"] == [victim], report.smoke[controller]
        assert victim in report.smoke[controller]["error"]
