"""The check's probe is a file of the horovod_check role (run with the environment's python by
tasks/versions.yml), and no playbook carries a program in a string."""
from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "roles" / "horovod_check" / "files" / "hvc_probe.py"


def test_probe_prints_one_json_object_of_versions():
    run = subprocess.run([sys.executable, str(PROBE)], capture_output=True, text=True, timeout=120, check=True)
    found = json.loads(run.stdout)
    assert set(found) == {"python", "torch", "horovod", "mpirun", "mpi_prefix", "cmake", "controllers",
                          "tensor_operations", "gloo_transport"}
    assert found["mpi_prefix"] == ""  # no marker: the system's Open MPI
    assert found["python"] == platform.python_version()
    assert found["gloo_transport"] == "tcp"  # this controller is Linux


def test_probe_asks_the_open_mpi_the_marker_names(tmp_path):
    """An environment whose marker names the prefix of PyPI's Open MPI: the probe reports that mpirun's version,
    not PATH's (Debian 12 keeps its distro's 4.1 beside it)."""
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    prefix = tmp_path / "openmpi"
    (prefix / "bin").mkdir(parents=True)
    mpirun = prefix / "bin" / "mpirun"
    mpirun.write_text("#!/bin/sh\necho 'mpirun (Open MPI) 5.0.11'\n")
    mpirun.chmod(0o755)
    (env / ".horovod-platform-key.json").write_text(json.dumps({"mpi_prefix": str(prefix)}))
    run = subprocess.run([str(env / "bin" / "python"), str(PROBE)], capture_output=True, text=True, timeout=120,
                         check=True, env={"PATH": "/usr/bin:/bin"})
    found = json.loads(run.stdout)
    assert (found["mpirun"], found["mpi_prefix"]) == ("5.0.11", str(prefix))


def test_versions_step_runs_the_roles_probe():
    versions = (REPO / "roles" / "horovod_check" / "tasks" / "versions.yml").read_text()
    assert "lookup('ansible.builtin.file', 'hvc_probe.py')" in versions


def test_no_playbook_carries_a_program_in_a_string():
    code = re.compile(r"^\s+(import \w+|from \w+ import|def \w+\()")
    found = [f"{p.relative_to(REPO)}:{n}" for p in [REPO / "site.yml", *sorted((REPO / "playbooks").rglob("*.yml"))]
             for n, line in enumerate(p.read_text().splitlines(), 1) if code.match(line)]
    assert found == []
