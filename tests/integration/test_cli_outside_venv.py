"""Issue 15: the venv's horovod-cluster (and `python -m horovod_cluster`) work without the venv on PATH: the
ansible-* programs are found next to the interpreter, not on PATH (before: "ansible-inventory" not found)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_run import PLAN_INVENTORY

BIN = Path(sys.executable).parent


@pytest.mark.skipif(not (BIN / "ansible-inventory").is_file(), reason="ansible is not installed next to this Python")
@pytest.mark.parametrize("command", [[str(BIN / "horovod-cluster")], [sys.executable, "-m", "horovod_cluster"]],
                         ids=["script", "python -m"])
def test_plan_without_the_venv_on_path(tmp_path, command):
    env = {"HOME": os.environ.get("HOME", str(tmp_path)), "PATH": "/usr/bin:/bin", "ANSIBLE_CACHE_PLUGIN": "memory",
           "HOROVOD_CLUSTER_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([*command, "plan", "-i", str(PLAN_INVENTORY), "--limit", "cpu-debian12"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "plan: OK" in proc.stdout
    assert "not found" not in proc.stdout + proc.stderr
