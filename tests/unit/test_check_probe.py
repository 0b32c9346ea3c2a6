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
    assert set(found) == {"python", "torch", "horovod", "mpirun", "cmake", "controllers", "tensor_operations",
                          "gloo_transport"}
    assert found["python"] == platform.python_version()
    assert found["gloo_transport"] == "tcp"  # this controller is Linux


def test_versions_step_runs_the_roles_probe():
    versions = (REPO / "roles" / "horovod_check" / "tasks" / "versions.yml").read_text()
    assert "lookup('ansible.builtin.file', 'hvc_probe.py')" in versions


def test_no_playbook_carries_a_program_in_a_string():
    code = re.compile(r"^\s+(import \w+|from \w+ import|def \w+\()")
    found = [f"{p.relative_to(REPO)}:{n}" for p in [REPO / "site.yml", *sorted((REPO / "playbooks").rglob("*.yml"))]
             for n, line in enumerate(p.read_text().splitlines(), 1) if code.match(line)]
    assert found == []
