"""The controller wheelhouse on the sandbox, after the main job (site.yml) ran there.

site.yml's wheelhouse play filled ~/.cache/horovod-cluster/wheelhouse/linux-x86_64-cp311-cpu with pip
download (the controller's pip configuration) and python_env shipped that set to every host.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
CACHE = Path(os.environ.get("HOROVOD_CLUSTER_CACHE", Path.home() / ".cache" / "horovod-cluster"))
WHEEL_SET = CACHE / "wheelhouse" / "linux-x86_64-cp311-cpu"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def test_rollout_filled_the_controller_wheelhouse_and_shipped_it():
    assert (WHEEL_SET / "torch-2.13.0+cpu_numpy.complete").is_file()
    wheel = next(WHEEL_SET.glob("torch-2.13.0+cpu-cp311-cp311-*.whl"))
    for host in Cluster(SANDBOX).hosts():
        listing = subprocess.run(["podman", "exec", host, "ls", "/opt/horovod/wheelhouse"],
                                 capture_output=True, text=True, check=True).stdout.split()
        assert wheel.name in listing and any(name.startswith("sympy-") for name in listing), host
        assert any(name.startswith("numpy-") for name in listing), host
        torch = subprocess.run(["podman", "exec", host, "/opt/horovod/venv/bin/python", "-c",
                                "import torch; print(torch.__version__)"],
                               capture_output=True, text=True, check=True).stdout.strip()
        assert torch == "2.13.0+cpu", host


def test_wheelhouse_command_shows_the_sets_and_downloads_nothing_more(tmp_path):
    """`horovod-cluster wheelhouse` over the rolled-out sandbox: one set for all three hosts, complete,
    so nothing is downloaded and no host changes."""
    before = sorted(p.name for p in WHEEL_SET.iterdir())
    out = tmp_path / "wheelhouse.json"
    run = subprocess.run(["horovod-cluster", "wheelhouse", "-i", str(SANDBOX), "--json", str(out),
                          "--artifacts-dir", str(tmp_path / "runs")], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "linux-x86_64-cp311-cpu" in run.stdout and "torch==2.13.0+cpu" in run.stdout
    result = json.loads(out.read_text())
    hosts = Cluster(SANDBOX).hosts()
    assert sorted(result["hosts"]) == sorted(hosts)
    for info in result["hosts"].values():
        assert info["dir"] == str(WHEEL_SET) and info["requirement"] == "torch==2.13.0+cpu"
        assert not info["downloaded"] and int(info["wheels"]) >= 5
    assert all(h["changed"] == 0 for h in result["run"]["hosts"].values())
    assert sorted(p.name for p in WHEEL_SET.iterdir()) == before


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def test_a_wheel_changed_after_its_set_was_downloaded_reaches_no_host(tmp_path):
    """The fill records the sha256 of each wheel of its download in the set's marker, not an older release an earlier
    fill left in the folder; a wheel truncated on the controller since (a full disk) is refused before anything is
    copied, naming it, and the host keeps its good copy."""
    host = "hvc-node1"
    wheelhouse = tmp_path / "wheelhouse"
    own = wheelhouse / WHEEL_SET.name
    own.mkdir(parents=True)
    for wheel in WHEEL_SET.glob("*.whl"):  # the wheels without the marker: this rollout's fill finds them there
        shutil.copy2(wheel, own)
    stale = own / "filelock-3.0.0-py3-none-any.whl"  # an earlier fill's filelock, replaced on PyPI since
    shutil.copy2(next(own.glob("filelock-*.whl")), stale)
    cluster = Cluster(SANDBOX, artifacts_dir=tmp_path / "runs", extravars={"python_env_wheelhouse": str(wheelhouse)})
    first = cluster.rollout(limit=host, tags="python_env")
    assert first.ok, first.to_json()
    marker = (own / "torch-2.13.0+cpu_numpy.complete").read_text().splitlines()
    assert marker[0] == "torch==2.13.0+cpu"
    recorded = dict(reversed(line.split("  ")) for line in marker[1:])
    assert recorded == {name: _sha256(own / name) for name in recorded} and stale.name not in recorded
    projects = [name.split("-")[0] for name in recorded]
    assert sorted(projects) == sorted(set(projects)) and {"torch", "sympy", "filelock"} <= set(projects), projects

    victim = next(own.glob("sympy-*.whl"))
    good = _sha256(victim)
    with victim.open("r+b") as f:
        f.truncate(victim.stat().st_size // 2)
    second = cluster.rollout(limit=host, tags="python_env")
    assert not second.ok
    failure = second.hosts[host].failure
    assert failure.task == "Python env | Refuse wheels that changed since their set was downloaded", failure
    assert victim.name in failure.message and "no longer has the sha256" in failure.message, failure
    there = subprocess.run(["podman", "exec", host, "sha256sum", f"/opt/horovod/wheelhouse/{victim.name}"],
                           capture_output=True, text=True, check=True).stdout.split()[0]
    assert there == good


def test_the_set_goes_in_by_its_hashes_and_no_other_file_of_a_release_takes_its_place(tmp_path):
    """Issue 45 item 9: the hosts' pip install took torch's dependencies by name, from the host's wheelhouse copy and
    the index, and so the file pip prefers: a wheel of a more specific tag added to a release (on PyPI anyone with the
    project's upload rights can add one to an existing release) wins over the set's. Here such a file lies beside the
    set's copy of mpmath; the set is installed by path and sha256 (`hvc-wheels.txt`, hash-checking mode) and the
    other file is not taken."""
    host = "hvc-node1"
    real = next(WHEEL_SET.glob("mpmath-*-py3-none-any.whl"))
    version = real.name.split("-")[1]
    other = tmp_path / f"mpmath-{version}-cp311-cp311-manylinux_2_17_x86_64.whl"  # a tag pip prefers on this host
    shutil.copy(real, other)
    with zipfile.ZipFile(other, "a") as wheel:
        wheel.writestr("mpmath/hvc_planted.py", "PLANTED = True\n")
    site = "/opt/horovod/venv/lib/python3.11/site-packages"
    cluster = Cluster(SANDBOX, artifacts_dir=tmp_path / "runs")
    first = cluster.rollout(limit=host, tags="python_env")
    assert first.ok, first.to_json()
    hashed = subprocess.run(["podman", "exec", host, "cat", "/opt/horovod/venv/hvc-wheels.txt"],
                            capture_output=True, text=True, check=True).stdout
    assert f"/opt/horovod/wheelhouse/{real.name} --hash=sha256:{_sha256(real)}" in hashed.splitlines()
    subprocess.run(["podman", "cp", str(other), f"{host}:/opt/horovod/wheelhouse/{other.name}"], check=True)
    try:
        subprocess.run(["podman", "exec", host, "/opt/horovod/venv/bin/pip", "uninstall", "-y", "-q", "mpmath"],
                       check=True)
        again = cluster.rollout(limit=host, tags="python_env")
        assert again.ok, again.to_json()
        planted = subprocess.run(["podman", "exec", host, "test", "-e", f"{site}/mpmath/hvc_planted.py"])
        assert planted.returncode != 0, "the other file of the release was installed"
        subprocess.run(["podman", "exec", host, "/opt/horovod/venv/bin/python", "-c", "import mpmath, torch"],
                       check=True)
    finally:
        subprocess.run(["podman", "exec", host, "rm", "-f", f"/opt/horovod/wheelhouse/{other.name}"], check=True)
