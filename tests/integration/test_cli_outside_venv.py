"""Issue 15: the CLI as a user runs it. The venv's horovod-cluster (and `python -m horovod_cluster`) work
without the venv on PATH: the ansible-* programs are found next to the interpreter, not on PATH (before:
"ansible-inventory" not found). A host listed twice is refused."""
from __future__ import annotations

import json
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


def test_host_listed_twice_is_refused(tmp_path):
    """A host name given twice in a YAML inventory lost the first machine (Ansible only warned, and the CLI's
    quiet runner swallowed the warning): ansible.cfg makes a duplicate key an error, which the CLI reports."""
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  children:\n    cluster:\n      hosts:\n"
                         "        node1: {ansible_host: 10.0.0.1}\n        node2: {ansible_host: 10.0.0.2}\n"
                         "        node1: {ansible_host: 10.0.0.3}\n")
    env = {**os.environ, "HOROVOD_CLUSTER_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([str(BIN / "horovod-cluster"), "plan", "-i", str(inventory)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "duplicate mapping key 'node1'" in proc.stdout + proc.stderr


def test_misspelt_variable_warns_in_the_cli_and_its_reports(tmp_path):
    """preflight's warning (closest real name) reaches the summary, the JSON and the JUnit report."""
    env = {**os.environ, "HOROVOD_CLUSTER_CACHE": str(tmp_path / "cache"), "ANSIBLE_CACHE_PLUGIN": "memory"}
    proc = subprocess.run([str(BIN / "horovod-cluster"), "plan", "-i", str(PLAN_INVENTORY), "--limit", "cpu-debian12",
                           "-e", "horovod_verison=0.28.1", "--json", "plan.json", "--junit", "plan.xml"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warning = "horovod_verison is not a variable of any role nor a project setting; did you mean horovod_version?"
    assert warning in " ".join(proc.stdout.split())  # the terminal may wrap it
    data = json.loads((tmp_path / "plan.json").read_text())
    assert any(warning in w for w in data["run"]["hosts"]["cpu-debian12"]["warnings"]), data["run"]["hosts"]
    assert warning in (tmp_path / "plan.xml").read_text()
