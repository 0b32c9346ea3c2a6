"""A rollout on part of the sandbox (--limit), after the main job rolled out every host.

ssh_mesh and hostfile take the hosts outside the play from the controller's records of their last
run, so the limited host keeps the whole cluster in its known_hosts, ssh config and hostfile, the
hosts outside the play are left as they were, and the cross-host check still spans every host. Those records
and the cluster's keypair live on the controller: a controller that lacks them does not find the cluster settled.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
FILES = ["/etc/horovod/hostfile", "/etc/ssh/ssh_known_hosts", "/root/.ssh/config"]
# The controller's folder of the cluster keypair: the sandbox's state folder (hosts.yml, `sandbox up`).
KEY_DIR = Path.home() / ".cache/horovod-cluster/sandbox/ssh_mesh"
KEY = "id_horovod_cluster"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def _exec(host: str, *argv: str) -> str:
    return subprocess.run(["podman", "exec", host, *argv], capture_output=True, text=True, check=True).stdout


def _state(host: str) -> dict[str, str]:
    """Content and modification time of the mesh and hostfile files on a host."""
    return {path: _exec(host, "stat", "-c", "%Y", path) + _exec(host, "cat", path) for path in FILES}


def test_limit_to_one_host_keeps_the_cluster_whole(tmp_path):
    cluster = Cluster(SANDBOX, artifacts_dir=tmp_path)
    hosts = cluster.hosts()
    target, others = hosts[1], [h for h in hosts if h != hosts[1]]
    before = {host: _state(host) for host in others}

    result = cluster.rollout(limit=target)
    assert result.ok, result.to_json()
    assert sorted(result.hosts) == [target]
    assert result.hosts[target].changed == 0, result.to_json()
    # --limit turns the settled-cluster fast path off (every role ran), and with no task changing a host the
    # rollout skips its smoke test (cluster_rollout_smoke: changed) and says why.
    assert result.settled == {"settled": False, "hosts": {target: "the fast path is off (--limit)"}}, result.settled
    assert result.smoke and result.smoke["status"] == "skipped", result.smoke
    assert "no task of this rollout changed a host" in result.smoke["reason"], result.smoke

    # The limited host still lists and trusts every host; the others were not touched.
    hostfile = _exec(target, "cat", "/etc/horovod/hostfile").split("\n")
    assert [line.split()[0] for line in hostfile if line] == hosts
    known = _exec(target, "cat", "/etc/ssh/ssh_known_hosts")
    assert all(f"{host}," in known for host in hosts)
    assert {host: _state(host) for host in others} == before

    report = cluster.check(smoke=True)
    assert report.ok, report.to_json()
    assert sorted({rank["host"] for rank in report.smoke["gloo"]["ranks"]}) == sorted(hosts)


def test_a_controller_without_the_cluster_key_rolls_out_in_full(tmp_path):
    """The keypair gone from the controller (a wiped cache, another checkout's or admin machine's): the cluster
    is not settled, so the rollout makes a new keypair and puts it on every host, not only on the hosts of a
    later --limit run (which would break the mesh), and the earlier key is no longer authorized anywhere."""
    cluster = Cluster(SANDBOX, artifacts_dir=tmp_path / "runs")
    hosts = cluster.hosts()
    old = (KEY_DIR / f"{KEY}.pub").read_text().split()[1]
    shutil.move(KEY_DIR, tmp_path / "old-keys")

    result = cluster.rollout()
    assert result.ok, result.to_json()
    missing = f"the controller lacks what a later run needs: {KEY_DIR}/{KEY}, {KEY_DIR}/{KEY}.pub"
    assert result.settled == {"settled": False, "hosts": {host: missing for host in hosts}}, result.settled
    new = (KEY_DIR / f"{KEY}.pub").read_text().split()[1]
    assert new != old
    for host in hosts:
        assert _exec(host, "cat", f"/root/.ssh/{KEY}.pub").split()[1] == new
        authorized = _exec(host, "cat", "/root/.ssh/authorized_keys")
        assert new in authorized and old not in authorized, host

    # The hosts changed, so the rollout's smoke test ran: both launchers reached every host with the new key.
    assert sorted(result.smoke) == ["gloo", "mpi"] and all(r["ok"] for r in result.smoke.values()), result.smoke
    limited = cluster.rollout(limit=hosts[1])
    assert limited.ok and limited.hosts[hosts[1]].changed == 0, limited.to_json()
