"""Issue 45 item 11 on the sandbox's real hosts (after the main job): the apt tasks wait out a dpkg lock held
longer than apt's own 60 s (cluster_apt_lock_timeout), and a host whose dpkg was interrupted is refused by
preflight, naming the repair, before any role runs there. Each test puts back what it changed."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
# Holds dpkg's two locks as apt and dpkg take them (fcntl), for argv[1] seconds.
LOCK_HOLDER = ("import fcntl, sys, time\n"
               "locks = [open(p, 'r+b') for p in ('/var/lib/dpkg/lock-frontend', '/var/lib/dpkg/lock')]\n"
               "for lock in locks:\n"
               "    fcntl.lockf(lock, fcntl.LOCK_EX)\n"
               "print('held', flush=True)\n"
               "time.sleep(float(sys.argv[1]))\n")
HELD_S = 75  # more than apt's own 60 s

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                       reason="slow (a dpkg lock held 75 s, longer than apt's own wait): set HVC_SLOW=1"),
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def _exec(host: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", "exec", host, *argv], capture_output=True, text=True, check=check)


def test_an_interrupted_dpkg_is_refused_by_preflight_naming_the_repair(tmp_path):
    host = "hvc-node3"
    journal = "/var/lib/dpkg/updates/0007"  # what a killed dpkg leaves behind
    _exec(host, "sh", "-c", f"printf 'Package: libopenmpi-dev\\nStatus: install ok half-configured\\n' > {journal}")
    try:
        result = Cluster(SANDBOX, artifacts_dir=tmp_path / "runs").rollout(limit=host, tags="preflight")
    finally:
        _exec(host, "rm", "-f", journal)
    assert result.failed_hosts == [host], result.to_json()
    failure = result.hosts[host].failure
    assert failure.task.endswith("Refuse this host, naming every finding"), result.to_json()
    assert "dpkg was interrupted" in failure.message and f"run `sudo dpkg --configure -a` on {host}" in failure.message
    assert result.hosts[host].changed == 0


def test_apt_tasks_wait_for_a_dpkg_lock_held_longer_than_apts_default(tmp_path):
    host = "hvc-node2"
    _exec(host, "apt-get", "remove", "-y", "-q", "libopenmpi-dev")  # so that openmpi's apt task has work to do
    holder = subprocess.Popen(["podman", "exec", host, "python3", "-c", LOCK_HOLDER, str(HELD_S)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        started = time.monotonic()
        result = Cluster(SANDBOX, artifacts_dir=tmp_path / "runs").rollout(limit=host, tags="openmpi")
        took = time.monotonic() - started
    finally:
        holder.wait(timeout=HELD_S + 30)
    assert result.ok, result.to_json()
    assert took > HELD_S - 10, f"the rollout took {took:.0f} s: the lock was not in its way"
    assert _exec(host, "dpkg-query", "-W", "-f", "${Status}", "libopenmpi-dev").stdout == "install ok installed"
