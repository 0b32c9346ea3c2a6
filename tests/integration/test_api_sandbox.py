"""The Cluster API against the sandbox hosts (real Debian containers over SSH).

Skipped when the sandbox is not up (inventories/sandbox/hosts.yml is written by `sandbox up`).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
CONTENT = ROOT / "tests" / "fixtures" / "api" / "content"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def test_small_rollout_on_sandbox_hosts(tmp_path):
    """A small play over SSH to every sandbox host: all ok, one change each, then a clean retry."""
    cluster = Cluster(SANDBOX, content_dir=CONTENT, artifacts_dir=tmp_path)
    hosts = cluster.hosts()
    assert hosts, "the sandbox inventory lists hosts"
    result = cluster.rollout(serial="50%")
    assert result.ok, result.to_json()
    assert sorted(result.hosts) == hosts
    assert all(h.changed == 1 and h.failed == 0 for h in result.hosts.values())
    assert cluster.retry_failed().hosts == {}


def test_check_on_sandbox_hosts(tmp_path):
    """The real check.yml: every sandbox host reports its OS and versions (or their absence)."""
    report = Cluster(SANDBOX, artifacts_dir=tmp_path).check(smoke=False)
    assert report.run.ok, report.run.to_json()
    assert sorted(report.hosts) == sorted(Cluster(SANDBOX).hosts())
    for host in report.hosts.values():
        assert host["os"].startswith("Debian") and host["versions"]["python"]
