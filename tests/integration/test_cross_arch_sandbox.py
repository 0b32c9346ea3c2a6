"""One amd64 and one arm64 host (the Raspberry Pi stand-in, under qemu) in one inventory (issue 14):
site.yml builds Horovod once per platform key, each on a host of that key, and the check's smoke
test runs one Horovod job across both architectures. Slow tier (HVC_SLOW=1): without a cached
arm64 wheel the compile under qemu takes about 40 min on 2 cores (the note of issue 14 has the times).

The hosts are a sandbox of the test's own (hvc-xarch*), from the packaged sandbox inventory: its
`pis` group pins PyPI's CPU-only aarch64 torch 2.5.1 (inventories/sandbox/group_vars/pis), the
amd64 host keeps 2.13.0+cpu. The wheels go into the controller's usual cache, so a later run (and a
user's) installs both without compiling.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest

from horovod_cluster import Cluster
from horovod_cluster.content import cache_dir
from horovod_cluster.ansible.events import TaskLog
from own_sandbox import own_sandbox

MARKER = "/opt/horovod/venv/.horovod-platform-key.json"
COMPILE = "Horovod | Compile with pip wheel"
INSTALL = "Horovod | Install the wheel into the environment"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                       reason="slow (an arm64 Horovod compile under qemu, about 40 min): set HVC_SLOW=1"),
    pytest.mark.skipif(shutil.which("podman") is None, reason="needs podman and qemu-user-static (scripts/setup.sh)"),
]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    root = tmp_path_factory.mktemp("cross-arch")
    with own_sandbox(root, "hvc-xarch", count=1, arm64=1) as (_, hosts):
        yield root, {host.arch: host.name for host in hosts}


def marker(host: str) -> dict:
    return json.loads(subprocess.run(["podman", "exec", host, "cat", MARKER], check=True,
                                     capture_output=True, text=True).stdout)


def test_one_rollout_builds_per_architecture_and_one_job_spans_both(mixed):
    root, names = mixed
    amd64, arm64 = names["amd64"], names["arm64"]
    cached = {arch: any(cache_dir().glob(f"wheels/hvd*-{key}-*/horovod-*.whl"))
              for arch, key in (("amd64", "x86_64-py3.11-pytorch2.13.0_cpu-cpu"),
                                ("arm64", "aarch64-py3.11-pytorch2.5.1-cpu"))}
    timings = TaskLog()
    cluster = Cluster(root / "inventory", artifacts_dir=root / "runs", on_event=timings)

    started = time.monotonic()
    rollout = cluster.rollout()
    rollout_s = time.monotonic() - started
    assert rollout.ok, rollout.to_json()

    keys = {arch: marker(name)["platform_key"] for arch, name in names.items()}
    assert "-x86_64-" in keys["amd64"] and "pytorch2.13.0_cpu" in keys["amd64"], keys
    assert "-aarch64-" in keys["arm64"] and "pytorch2.5.1-cpu" in keys["arm64"], keys
    # Each host runs the wheel of its own key, compiled (or cached) once for that key.
    for arch, name in names.items():
        assert marker(name)["verified"]["info"]["capabilities"]["controllers"], marker(name)
    # A key without a cached wheel is compiled on its own host; a cached one only installed.
    compiled = {host for host, task in timings.seconds if task == COMPILE}
    assert compiled == {names[arch] for arch, hit in cached.items() if not hit}, (cached, timings.seconds)
    assert len(list(cache_dir().glob(f"wheels/{keys['arm64']}/horovod-*linux_aarch64.whl"))) == 1
    assert {host for host, task in timings.seconds if task == INSTALL} == {amd64, arm64}, timings.seconds

    started = time.monotonic()
    report = cluster.check(smoke=True)
    check_s = time.monotonic() - started
    gloo = report.smoke["gloo"]
    # One job, ranks on both architectures, allreduce/allgather/broadcast checked on every rank.
    assert gloo["ok"], gloo
    assert sorted({rank["host"] for rank in gloo["ranks"]}) == sorted([amd64, arm64]), gloo
    # torch 2.13.0+cpu next to 2.5.1 is a warning only; nothing else may differ.
    assert [(f.key, f.severity) for f in report.findings] == [("torch", "warning")], report.to_json()
    assert report.ok, report.to_json()
    print(f"\ncross-arch times: rollout {rollout_s:.0f} s, check {check_s:.0f} s, smoke gloo "
          f"{gloo.get('seconds')} s; compile "
          + ", ".join(f"{host} {s:.0f} s" for (host, task), s in timings.seconds.items() if task == COMPILE)
          + f"; mpi smoke: {report.smoke.get('mpi', {}).get('ok')}")
