"""A rollout with nothing to change stays fast and still repairs a drifted host (after the main job).

On a settled cluster (every host as the last successful rollout left it: playbooks/settled.yml) a rollout
runs no role at all and skips the smoke test, saying why. cluster_rollout_smoke: always turns the fast path
off: every role runs, Horovod's check-build result comes from the marker (the installed files match the
wheel's RECORD hashes) instead of importing the frameworks again, and the smoke test runs; a rollout whose
smoke test fails is a failed rollout and records nothing. (A no-op rollout with the fast
path off skips the smoke test: test_partial_rollout_sandbox.py.) After a host drifted (libopenmpi-dev removed, a file
of the installed Horovod deleted, torch no longer the pinned release, the marker deleted) the next rollout is
not settled, names what changed, puts every piece back, runs check-build there again, and the smoke test. The
smoke test's launcher takes the build's capabilities from that run's horovod role (no second check-build).
Slow tier (HVC_SLOW=1): six rollouts of the 3 hosts, three of them running every role, about 12 min.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from horovod_cluster import Cluster
from horovod_cluster.ansible.events import TaskLog

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
VENV = "/opt/horovod/venv"
MARKER = f"{VENV}/.horovod-platform-key.json"
STATE = "/opt/horovod/rollout-state.json"  # the record of the last successful rollout
CHECK_BUILD = "Horovod | Read the build's capabilities (check-build)"
SMOKE = "Run the smoke script on every slot"  # (gloo), (mpi): on the launcher
LAUNCHER_CHECK_BUILD = "Read what Horovod was built with"  # the check's own check-build, on the launcher
SETTLED_SMOKE = "the cluster is settled: nothing changed since the last rollout"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1", reason="slow (six 3-host rollouts, about 12 min): set HVC_SLOW=1"),
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def _exec(host: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", "exec", host, *argv], capture_output=True, text=True, check=check)


def _torch_version(host: str) -> str:
    """torch's release as pip sees it (its installed metadata)."""
    return _exec(host, f"{VENV}/bin/python", "-c",
                 "from importlib.metadata import version; print(version('torch'))").stdout.strip()


def _horovod_so(host: str) -> str:
    found = _exec(host, "find", f"{VENV}/lib", "-path", "*/horovod/torch/*", "-name", "mpi_lib_v2*.so").stdout.split()
    assert len(found) == 1, found
    return found[0]


def test_noop_rollout_skips_check_build_and_drift_is_repaired(tmp_path):
    hosts = Cluster(SANDBOX).hosts()
    records = {host: _exec(host, "cat", STATE, check=False).stdout for host in hosts}
    # A rollout whose smoke test fails is a failed rollout (a check only reports it): horovodrun given 1 s, and
    # cluster_rollout_smoke: always (which also turns the fast path off, so every role runs). Earlier tests
    # leave the cluster changed on purpose (e.g. the check scripts removed from a host): its roles put it back.
    broken = Cluster(SANDBOX, artifacts_dir=tmp_path / "broken",
                     extravars={"cluster_rollout_smoke": "always", "horovod_check_timeout": 1}).rollout()
    assert not broken.ok and len(broken.failed_hosts) == 1, broken.to_json()
    assert "smoke test failed" in broken.hosts[broken.failed_hosts[0]].failure.message, broken.to_json()
    assert broken.smoke and not any(r["ok"] for r in broken.smoke.values()), broken.smoke
    assert {host: _exec(host, "cat", STATE, check=False).stdout for host in hosts} == records, "a failed rollout records nothing"
    # cluster_rollout_smoke: always turns the fast path off: every role runs and finds nothing to do (check-build's
    # result comes from the marker), and the smoke test runs on a rollout that changed nothing.
    always_tasks = TaskLog()
    always = Cluster(SANDBOX, artifacts_dir=tmp_path / "always", on_event=always_tasks,
                     extravars={"cluster_rollout_smoke": "always"}).rollout()
    assert always.ok and {h: r.changed for h, r in always.hosts.items()} == {h: 0 for h in hosts}, always.to_json()
    assert always_tasks.last_ends(CHECK_BUILD) == {h: "skipped" for h in hosts}
    assert always.settled and not always.settled["settled"], always.settled
    assert set(always.settled["hosts"].values()) == {"the fast path is off (cluster_rollout_smoke: always)"}
    assert list(always_tasks.last_ends(SMOKE).values()) == ["ok"]
    # The smoke test's launcher takes the build's capabilities from the horovod role of the same run.
    assert list(always_tasks.last_ends(LAUNCHER_CHECK_BUILD).values()) == ["skipped"]
    assert sorted(always.smoke) == ["gloo", "mpi"] and all(r["ok"] for r in always.smoke.values()), always.smoke
    for host in hosts:
        verified = json.loads(_exec(host, "cat", MARKER).stdout)["verified"]
        assert "pytorch" in verified["info"]["capabilities"]["frameworks"], verified
    # Settled: no role runs (check-build is not even reached), nothing changes, the smoke test is skipped.
    settled_tasks = TaskLog()
    settled = Cluster(SANDBOX, artifacts_dir=tmp_path / "settled", on_event=settled_tasks).rollout()
    _assert_settled(settled, settled_tasks, hosts)

    # Drift: Open MPI's headers package and one compiled file of Horovod gone on the second host, and its torch no longer the pinned
    # one (its installed metadata says another release, as after a `pip install torch==...` by hand); the
    # marker gone on the third.
    drifted, unmarked = hosts[1], hosts[2]
    library = _horovod_so(drifted)
    pinned_torch = _torch_version(drifted)
    _exec(drifted, "apt-get", "remove", "-y", "-q", "libopenmpi-dev")
    _exec(drifted, "rm", library)
    metadata = _exec(drifted, "find", f"{VENV}/lib", "-maxdepth", "4", "-path", "*/torch-*.dist-info/METADATA").stdout
    _exec(drifted, "sed", "-i", f"s/^Version: {pinned_torch}$/Version: 2.12.0/", metadata.strip())
    assert _torch_version(drifted) == "2.12.0"
    _exec(unmarked, "rm", MARKER)

    repair_tasks = TaskLog()
    repair = Cluster(SANDBOX, artifacts_dir=tmp_path / "repair", on_event=repair_tasks).rollout()
    assert repair.ok, repair.to_json()
    assert repair.settled == {"settled": False, "hosts": {
        hosts[0]: "settled", drifted: "changed on the host: /opt/horovod, /var/lib/dpkg/status",
        unmarked: "changed on the host: /opt/horovod"}}, repair.settled
    assert repair.hosts[hosts[0]].changed == 0, repair.to_json()
    assert repair.hosts[drifted].changed > 0 and repair.hosts[unmarked].changed > 0
    assert repair_tasks.last_ends(CHECK_BUILD) == {hosts[0]: "skipped", drifted: "ok", unmarked: "ok"}
    assert list(repair_tasks.last_ends(SMOKE).values()) == ["ok"], "hosts changed: the smoke test runs"
    assert list(repair_tasks.last_ends(LAUNCHER_CHECK_BUILD).values()) == ["skipped"]
    assert _exec(drifted, "dpkg-query", "-W", "-f", "${Status}", "libopenmpi-dev").stdout == "install ok installed"
    assert _exec(drifted, "test", "-s", library, check=False).returncode == 0
    assert _torch_version(drifted) == pinned_torch, "the pinned torch is back"
    for host in (drifted, unmarked):
        marker = json.loads(_exec(host, "cat", MARKER).stdout)
        assert marker["verified"]["info"]["version"] == "0.28.1", marker

    report = Cluster(SANDBOX).check(smoke=False)
    assert report.ok, report.to_json()
    # The repaired cluster was recorded: settled again.
    again_tasks = TaskLog()
    _assert_settled(Cluster(SANDBOX, artifacts_dir=tmp_path / "again", on_event=again_tasks).rollout(),
                    again_tasks, hosts)


def _assert_settled(result, tasks: TaskLog, hosts: list[str]) -> None:
    assert result.ok, result.to_json()
    assert result.settled == {"settled": True, "hosts": {h: "settled" for h in hosts}}, result.settled
    assert {h: r.changed for h, r in result.hosts.items()} == {h: 0 for h in hosts}, result.to_json()
    # Only the settled play's own tasks ran; every later play ended at its first task (fast_path, the first
    # dependency of every role through cluster_defaults, also of the roles the plays include), before any
    # argument spec was checked: the one check that ran is the settled play's own (cluster_defaults), once a host.
    settled_play = {t["name"] for t in yaml.safe_load((ROOT / "playbooks" / "settled.yml").read_text())[0]["tasks"]}
    includes = {task["name"] for path in (ROOT / "playbooks").glob("*.yml")
                for play in yaml.safe_load(path.read_text()) or [] for task in play.get("tasks") or []
                if "ansible.builtin.include_role" in task}
    ran = {name for _, name, _ in tasks.ended} - settled_play - includes - {"Gathering Facts"}
    validated = sorted(host for host, name, _ in tasks.ended if name.startswith("Validating arguments against arg spec"))
    assert validated == sorted(hosts), validated
    # (the settled play's own fast_path gate is skipped: the cluster is not known to be settled before it)
    assert {n for n in ran if not n.startswith(("Validating arguments against arg spec", "End this play"))} == set()
    assert result.smoke == {"status": "skipped", "reason": SETTLED_SMOKE}, result.smoke
