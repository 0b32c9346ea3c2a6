"""The Raspberry Pi OS 13 stand-in (issue 46): one fresh arm64 Debian 13 host (`sandbox up --debian13-arm64 1`,
under qemu), in the groups pis and debian13, rolled out with site.yml and checked. It gets Debian's python3-torch
2.6.0 (PyPI has no CPU aarch64 torch for Python 3.13: its 2.5.1 stops at 3.12 and newer ones are CUDA builds), and
Horovod 0.28.1 compiles with GCC 14 against Open MPI 5 there; the check's Gloo and MPI smoke tests pass on its ranks.

Slow tier (HVC_SLOW=1): the compile under qemu alone takes over half an hour (over an hour beside a CI run).
"""
from __future__ import annotations

import json
import subprocess

import pytest

from horovod_cluster import Cluster
from own_sandbox import own_sandbox, slow_own_sandbox

MARKER = "/opt/horovod/venv/.horovod-platform-key.json"

pytestmark = slow_own_sandbox("an arm64 Debian 13 host under qemu, a Horovod compile there: one to two hours")


@pytest.fixture(scope="module")
def pi13(tmp_path_factory):
    """(the host, rollout result, check report)."""
    root = tmp_path_factory.mktemp("pi13")
    with own_sandbox(root, "hvc-p13", count=0, debian13_arm64=1) as (_, hosts):
        cluster = Cluster(root / "inventory", artifacts_dir=root / "runs",
                          extravars={"horovod_artifacts_dir": str(root / "wheels"),
                                     "horovod_build_timeout": 10800})  # 7200 s ran out under qemu beside a CI run
        rollout = cluster.rollout()
        print(f"\ndebian13 arm64 rollout: {rollout.duration:.0f} s")
        yield hosts[0].name, rollout, cluster.check(smoke=True)


def on_host(host: str, *argv: str) -> str:
    return subprocess.run(["podman", "exec", host, *argv], check=True, capture_output=True, text=True).stdout


def test_site_yml_builds_horovod_with_gcc14_on_arm64_debian13(pi13):
    host, rollout, _ = pi13
    assert rollout.ok, rollout.to_json()
    assert "VERSION_ID=\"13\"" in on_host(host, "cat", "/etc/os-release")
    assert on_host(host, "uname", "-m").strip() == "aarch64"
    key = json.loads(on_host(host, "cat", MARKER))["platform_key"]
    assert key.startswith("hvd0.28.1-debian13-aarch64-py3.13-pytorch2.6.0_debian-cpu-"), key
    assert "-mpi5-" in key, key
    assert on_host(host, "gcc", "-dumpversion").startswith("14")


def test_the_venv_sees_debians_torch_and_mpi_5(pi13):
    host, rollout, _ = pi13
    assert rollout.ok
    probe = on_host(host, "/opt/horovod/venv/bin/python", "-c",
                    "import sys, torch, horovod.torch as hvd; print(sys.version_info[:2], torch.__version__,"
                    " torch.__file__, hvd.mpi_built(), hvd.gloo_built())")
    assert probe.split() == ["(3,", "13)", "2.6.0+debian", "/usr/lib/python3/dist-packages/torch/__init__.py",
                             "True", "True"], probe
    assert "Open MPI) 5.0" in on_host(host, "mpirun", "--version")


def test_the_check_passes_gloo_and_mpi_on_it(pi13):
    host, rollout, report = pi13
    assert rollout.ok
    assert report.ok, report.to_json()
    for controller in ("gloo", "mpi"):
        smoke = report.smoke[controller]
        assert smoke["ok"] and {rank["host"] for rank in smoke["ranks"]} == {host}, smoke
