"""Debian 13 hosts rolled out with site.yml and checked (issue 46): a sandbox of the test's own, two fresh
`sandbox up --debian13` hosts (hvc-d13*) from the packaged sandbox inventory, whose group debian13 gets Debian's
python3-torch (Python 3.13 has no CPU torch wheel reachable here). Horovod 0.28.1 compiles once with GCC 14 (the
compatibility matrix's gcc13_headers and flatbuffers_span fixes) against Open MPI 5.0.7, into a wheel cache of this
module's own, so the GCC 14 build is proven every run; the check's Gloo and MPI smoke tests then pass.

Slow tier (HVC_SLOW=1): 9 min here (rollout 458 s, the compile 204 s of it), which the default run's time has no
room for yet (docs/testing.md).
"""
from __future__ import annotations

import json
import subprocess

import pytest

from horovod_cluster import Cluster
from horovod_cluster.ansible.events import TaskLog
from own_sandbox import own_sandbox, slow_own_sandbox

MARKER = "/opt/horovod/venv/.horovod-platform-key.json"
COMPILE = "Horovod | Compile with pip wheel"

pytestmark = slow_own_sandbox("2 fresh Debian 13 hosts, a Horovod compile: 9 min")


@pytest.fixture(scope="module")
def debian13(tmp_path_factory):
    """The 2 hosts rolled out and checked: (hosts, rollout result, check report, task timings, wheel cache)."""
    root = tmp_path_factory.mktemp("debian13")
    with own_sandbox(root, "hvc-d13", count=0, debian13=2):
        timings = TaskLog()
        cluster = Cluster(root / "inventory", artifacts_dir=root / "runs", on_event=timings,
                          extravars={"horovod_artifacts_dir": str(root / "wheels")})
        rollout = cluster.rollout()
        yield cluster.hosts(), rollout, cluster.check(smoke=True), timings, root / "wheels"


def on_host(host: str, *argv: str) -> str:
    return subprocess.run(["podman", "exec", host, *argv], check=True, capture_output=True, text=True).stdout


def test_site_yml_builds_horovod_once_with_gcc14_on_debian13(debian13):
    hosts, rollout, _, timings, wheels = debian13
    assert rollout.ok, rollout.to_json()
    for host in hosts:
        assert "VERSION_ID=\"13\"" in on_host(host, "cat", "/etc/os-release")
        key = json.loads(on_host(host, "cat", MARKER))["platform_key"]
        assert key.startswith("hvd0.28.1-debian13-x86_64-py3.13-pytorch2.6.0_debian-cpu-"), key
        assert "-mpi5-" in key, key
        assert on_host(host, "gcc", "-dumpversion").startswith("14")
    compiled = [host for host, task in timings.seconds if task == COMPILE]
    assert len(compiled) == 1, timings.seconds  # one compile, the other host installs its wheel
    assert len(list(wheels.glob("*/horovod-*.whl"))) == 1
    print(f"\ndebian13 rollout: {rollout.duration:.0f} s, compile {timings.seconds[(compiled[0], COMPILE)]:.0f} s")


def test_the_venv_sees_debians_torch_and_mpi_5(debian13):
    hosts, rollout, _, _, _ = debian13
    assert rollout.ok
    for host in hosts:
        probe = on_host(host, "/opt/horovod/venv/bin/python", "-c",
                        "import sys, torch, horovod.torch as hvd; print(sys.version_info[:2], torch.__version__,"
                        " torch.__file__, hvd.mpi_built(), hvd.gloo_built())")
        assert probe.split() == ["(3,", "13)", "2.6.0+debian", "/usr/lib/python3/dist-packages/torch/__init__.py",
                                 "True", "True"], probe
        assert "Open MPI) 5.0" in on_host(host, "mpirun", "--version")


def test_the_check_passes_gloo_and_mpi_across_the_debian13_hosts(debian13):
    hosts, rollout, report, _, _ = debian13
    assert rollout.ok
    assert report.ok, report.to_json()
    for controller in ("gloo", "mpi"):
        smoke = report.smoke[controller]
        assert smoke["ok"] and sorted({rank["host"] for rank in smoke["ranks"]}) == sorted(hosts), smoke
