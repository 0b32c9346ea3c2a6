"""horovod_build_info on a rolled-out sandbox host: check-build's answer with the framework imported once.

horovodrun --check-build forks a child per question (extension there, MPI, Gloo, NCCL, DDL, CCL), and each child
imports horovod.torch, torch with it. The module imports the installed frameworks once before check-build runs,
so the children fork with torch loaded. The test counts the processes that import torch, with a sitecustomize
that the host's Python loads at start-up (PYTHONPATH), and compares the module's answer with the one of
horovodrun --check-build run as users run it.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest
from ansible_run import ansible_playbook_json

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
# The module's own parser of check-build's text (plugins/module_utils, not a package of this checkout's Python).
_spec = importlib.util.spec_from_file_location("horovod_check_build",
                                               ROOT / "plugins" / "module_utils" / "horovod_check_build.py")
_parser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_parser)
SANDBOX = ROOT / "inventories" / "sandbox"
VENV = "/opt/horovod/venv"
LOG_DIR = "/tmp/hvc-import-log"
# Every process that imports torch (the first time: a forked child that has it already does not) adds its pid.
SITECUSTOMIZE = f'''
import importlib.abc, os, sys

class _LogTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            with open("{LOG_DIR}/torch.pids", "a") as log:
                log.write("%d\\n" % os.getpid())
        return None

sys.meta_path.insert(0, _LogTorch())
'''

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def _exec(host: str, *argv: str) -> str:
    return subprocess.run(["podman", "exec", host, *argv], capture_output=True, text=True, check=True).stdout


def test_check_build_imports_torch_once_and_answers_as_horovodrun(tmp_path):
    host = sorted(Cluster(SANDBOX).hosts())[0]
    playbook = tmp_path / "check_build.yml"
    playbook.write_text(json.dumps([{
        "hosts": host, "gather_facts": False,
        "tasks": [
            {"ansible.builtin.file": {"path": LOG_DIR, "state": "absent"}},
            {"ansible.builtin.file": {"path": LOG_DIR, "state": "directory", "mode": "0755"}},
            {"ansible.builtin.copy": {"dest": f"{LOG_DIR}/sitecustomize.py", "content": SITECUSTOMIZE, "mode": "0644"}},
            {"name": "check-build", "environment": {"PYTHONPATH": LOG_DIR},
             "hvc.horovod_cluster.horovod_build_info": {"python": f"{VENV}/bin/python",
                                                        "expect": {"frameworks": ["pytorch"]}}},
        ]}]))
    run = ansible_playbook_json([playbook, "-i", SANDBOX])
    assert run.rc == 0, run.failure_messages(host) + run.stderr[-2000:]
    info = next(result for h, name, result in run.results() if name == "check-build")
    pids = set(_exec(host, "cat", f"{LOG_DIR}/torch.pids").split())  # a process may look torch up twice
    _exec(host, "rm", "-rf", LOG_DIR)
    # check-build's own way imports torch in each of its forked children (six with torch alone)
    assert len(pids) == 1, f"torch was imported by {len(pids)} processes"

    users_way = _exec(host, "env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                      f"{VENV}/bin/horovodrun", "--check-build")
    expected = _parser.parse_check_build(users_way)
    assert info["version"] == expected["version"]
    assert info["capabilities"] == {k: expected[k] for k in ("frameworks", "controllers", "tensor_operations")}
    assert info["capabilities"]["frameworks"] == ["pytorch"] and "gloo" in info["capabilities"]["controllers"]
