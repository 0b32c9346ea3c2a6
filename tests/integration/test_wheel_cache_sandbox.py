"""Issue 45 item 5 on the sandbox's real hosts (after the main job): a Horovod wheel in the controller's cache
that was cut short (a full disk) is installed on no host. The plan names it, and the host that needs Horovod
builds its key again instead (stopped here by horovod_build_timeout, so the test compiles nothing); before,
every host of the key copied the cut-short file and pip failed on it. The test puts the wheel and the host's
marker back."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
WHEELS = Path(os.environ.get("HOROVOD_ARTIFACTS_DIR") or Path(
    os.environ.get("HOROVOD_CLUSTER_CACHE") or Path.home() / ".cache" / "horovod-cluster") / "wheels")
MARKER = "/opt/horovod/venv/.horovod-platform-key.json"
HOST = "hvc-node1"  # the main job's builder: it has the compiler already

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def _exec(host: str, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", "exec", "-i", host, *argv], input=stdin, capture_output=True, text=True,
                          check=True)


class _Plans:
    """on_event listener: the horovod plan each host showed."""

    def __init__(self) -> None:
        self.shown: dict[str, dict] = {}

    def __call__(self, event: dict) -> None:
        data = event.get("event_data") or {}
        if event.get("event") == "runner_on_ok" and data.get("task") == "Horovod | Show the plan":
            self.shown[data["host"]] = data["res"]["msg"]


def test_a_cut_short_cached_wheel_reaches_no_host(tmp_path):
    marker = _exec(HOST, "cat", MARKER).stdout
    (wheel,) = (WHEELS / json.loads(marker)["platform_key"]).glob("horovod-*.whl")
    whole = wheel.read_bytes()
    plans = _Plans()
    try:
        wheel.write_bytes(whole[: len(whole) // 3])
        _exec(HOST, "rm", MARKER)  # so that the host needs Horovod: it would install the cached wheel
        result = Cluster(SANDBOX, artifacts_dir=tmp_path / "runs", on_event=plans,
                         extravars={"horovod_build_timeout": 5}).rollout(limit=HOST, tags="horovod")
    finally:
        wheel.write_bytes(whole)
        _exec(HOST, "tee", MARKER, stdin=marker)
    plan = plans.shown[HOST]
    assert plan["action"] == "build", plan
    assert [r["path"] for r in plan["rejected_wheels"]] == [str(wheel)], plan
    assert result.failed_hosts == [HOST], result.to_json()
    failure = result.hosts[HOST].failure
    assert "Timeout exceeded (horovod_build_timeout=5 s); nothing was installed" in failure.message, failure
