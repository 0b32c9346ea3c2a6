"""Issue 45 item 13 on a sandbox host (after the main job): a venv whose creation was cut short (its python is
there, its pip is not) is completed by the next rollout; before, `bin/python` alone counted as done forever and
every rollout failed installing into it."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
VENV = "/opt/horovod/venv"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def _exec(host: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", "exec", host, *argv], capture_output=True, text=True, check=check)


def test_a_venv_without_its_pip_is_completed(tmp_path):
    host = "hvc-node3"
    # What `python -m venv` leaves when stopped before its ensurepip step: the interpreter, no pip at all.
    _exec(host, "sh", "-c", f"rm -rf {VENV}/bin/pip {VENV}/bin/pip3 {VENV}/bin/pip3.* "
                            f"{VENV}/lib/python3*/site-packages/pip {VENV}/lib/python3*/site-packages/pip-*.dist-info")
    result = Cluster(SANDBOX, artifacts_dir=tmp_path / "runs").rollout(limit=host, tags="python_env")
    assert result.ok, result.to_json()
    assert _exec(host, f"{VENV}/bin/pip", "--version").stdout.startswith("pip "), "pip is back"
    # the training packages are still there (venv over an existing one keeps its site-packages)
    assert _exec(host, f"{VENV}/bin/python", "-c", "import torch, horovod").returncode == 0
