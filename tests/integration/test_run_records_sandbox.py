"""Two rollouts at once on two inventories (issue 13): each keeps its own run record, and `retry` and
`report` pick the run of the inventory they are given, on the real site.yml over the sandbox hosts.

Inventory A is the sandbox; inventory B is the sandbox plus a host that does not answer. Both run
site.yml's preflight stage (`-t preflight`: nothing changes on the hosts) at the same time with one
artifacts folder, as two users of one controller would.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
GHOST = "hvc-ghost"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def inventories(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "lab-a", tmp_path / "lab-b"
    shutil.copytree(SANDBOX, a)
    shutil.copytree(SANDBOX, b)
    hosts = yaml.safe_load((b / "hosts.yml").read_text())
    # An address on no network: its connection times out, the host is unreachable.
    group = hosts["all"]["children"]["cluster"]["children"]["cpu_nodes"]["hosts"]
    group[GHOST] = {"ansible_host": "192.0.2.1", "ansible_ssh_common_args": "-o ConnectTimeout=5"}
    (b / "hosts.yml").write_text(yaml.safe_dump(hosts))
    return a, b


def horovod_cluster(*args: str, artifacts: Path) -> subprocess.Popen:
    exe = shutil.which("horovod-cluster")
    assert exe, "horovod-cluster is not installed in this environment"
    return subprocess.Popen([exe, *args, "--artifacts-dir", str(artifacts)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err


def test_two_inventories_keep_their_own_runs(tmp_path):
    a, b = inventories(tmp_path)
    artifacts = tmp_path / "runs"
    first = horovod_cluster("rollout", "-i", str(a), "-t", "preflight", artifacts=artifacts)
    second = horovod_cluster("rollout", "-i", str(b), "-t", "preflight", artifacts=artifacts)
    (rc_a, out_a, err_a), (rc_b, out_b, err_b) = finish(first), finish(second)
    assert rc_a == 0, out_a + err_a
    assert rc_b == 1 and GHOST in out_b + err_b, out_b + err_b

    # One runs folder per inventory, each with its own last rollout.
    folders = sorted(p.name for p in artifacts.iterdir() if p.is_dir())
    assert len(folders) == 2 and folders[0].startswith("lab-a-") and folders[1].startswith("lab-b-"), folders
    records = {name[:5]: json.loads((artifacts / name / "last-rollout.json").read_text()) for name in folders}
    assert GHOST not in records["lab-a"]["hosts"]
    assert records["lab-b"]["hosts"][GHOST]["unreachable"] > 0

    # `report -i` shows that inventory's run, whichever ran last.
    for inventory, ok in ((a, True), (b, False)):
        rc, out, err = finish(horovod_cluster("report", "-i", str(inventory), "--json", "-", artifacts=artifacts))
        report = json.loads(out)
        assert (GHOST in report["hosts"]) is not ok and report["options"]["inventory"] == [str(inventory)], err
        assert rc == (0 if ok else 1)

    # `retry -i A` has nothing to do; `retry -i B` runs on the unreachable host alone.
    rc, out, err = finish(horovod_cluster("retry", "-i", str(a), artifacts=artifacts))
    assert rc == 0 and "nothing to retry" in out + err, out + err
    rc, out, err = finish(horovod_cluster("retry", "-i", str(b), "--json", "-", artifacts=artifacts))
    retried = json.loads(out)
    assert rc == 1 and retried["limit"] == GHOST and list(retried["hosts"]) == [GHOST], out + err
    assert retried["options"]["tags"] == "preflight"  # the retry repeats what was asked
