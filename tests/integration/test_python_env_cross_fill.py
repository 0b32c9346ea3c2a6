"""python_env's `fill` entry point on this x86_64 controller for a Raspberry Pi OS arm64 host (Python 3.11,
torch 2.5.1: PyPI's last CPU-only aarch64 build, + numpy) and a Debian amd64 host (torch 2.13.0+cpu).

`pip download --platform` alone evaluates torch's dependency markers for the controller and asks for
nvidia-cudnn-cu12 for the Pi (pypa/pip#4304); the fill runs pip through files/pip_for_platform.py for a set
of another platform, and `python -m pip` as before for the controller's own. Real downloads through the
controller's pip configuration (~100 MB from PyPI for the Pi; 15 s here, 27 s with no pip cache). The Pi's
CPU index is left out: this machine reaches PyPI only.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_run import REPO, ansible_playbook_json, host_facts, local_inventory

SCRIPT = REPO / "roles" / "python_env" / "files" / "pip_for_platform.py"
PY311 = {"python": {"executable": "/usr/bin/python3", "version": {"major": 3, "minor": 11}}}
HOSTS = {"pi5": host_facts("raspios12", "pi5", extra=PY311), "amd64": host_facts("debian12", "amd64", extra=PY311)}

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="an x86_64 controller filling an aarch64 set")


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """(wheelhouse, {host: [argv of each pip run]}) after one fill run over both hosts."""
    tmp = tmp_path_factory.mktemp("cross")
    host_vars = {"pi5": {"python_env_torch_version": "2.5.1", "python_env_torch_cpu_index_url": ""},
                 "amd64": {"python_env_torch_version": "2.13.0"}}
    inventory = local_inventory(tmp, host_vars)
    record = [{"name": f"Record the facts of {name}", "when": f"inventory_hostname == '{name}'",
               "ansible.builtin.set_fact": dict(facts, cacheable=True)} for name, facts in HOSTS.items()]
    fill = {"name": "Fill", "ansible.builtin.include_role": {"name": "python_env", "tasks_from": "fill"}}
    (tmp / "play.yml").write_text(json.dumps([{"name": "Fill", "hosts": "all", "gather_facts": False,
                                               "roles": ["cluster_defaults"], "tasks": [*record, fill]}]))
    run = ansible_playbook_json([tmp / "play.yml", "-i", inventory, "-e",
                                 json.dumps({"python_env_wheelhouse": str(tmp / "wh")})], timeout=900)
    assert run.rc == 0, "\n".join(run.failure_messages(h) for h in HOSTS) + run.stderr[-2000:]
    argvs = {}
    for _, task, result in run.results():
        if "Fill the controller wheelhouse" in task:
            for item in result.get("results", []):
                if "cmd" in item:
                    argvs.setdefault(Path(item["item"]["dir"]).name, []).append(item["cmd"])
    return tmp / "wh", argvs


def test_aarch64_set_has_what_the_pi_needs_and_nothing_for_x86_64(filled):
    wheelhouse, argvs = filled
    wheels = sorted(p.name for p in (wheelhouse / "linux-aarch64-cp311-cpu").glob("*.whl"))
    assert any(name.startswith("torch-2.5.1-") and "aarch64" in name for name in wheels), wheels
    assert any(name.startswith("numpy-") for name in wheels) and any(name.startswith("sympy-") for name in wheels)
    assert not [name for name in wheels if name.startswith(("nvidia", "triton"))], wheels
    assert all(name.endswith("-py3-none-any.whl") or "aarch64" in name for name in wheels), wheels
    assert (wheelhouse / "linux-aarch64-cp311-cpu" / "torch-2.5.1_numpy.complete").is_file()
    # The Pi's set went through the wrapper; the amd64 host's ran `python -m pip` unchanged where it is the
    # controller's own platform (Python 3.11 here), through the wrapper too where it is not (a 3.13 controller).
    assert argvs["linux-aarch64-cp311-cpu"][0][1:6] == [str(SCRIPT), "Linux", "aarch64", "3.11", "pip"]
    own = sys.version_info[:2] == (3, 11)
    assert argvs["linux-x86_64-cp311-cpu"][0][1:4] == (["-m", "pip", "download"] if own else
                                                        [str(SCRIPT), "Linux", "x86_64"])
    assert any(p.name.startswith("torch-2.13.0+cpu-") for p in (wheelhouse / "linux-x86_64-cp311-cpu").iterdir())


def test_the_pi_installs_from_the_set_alone(filled, tmp_path):
    """What the host's pip does with --find-links and no index, resolved here with the Pi's markers: every
    requirement of torch and numpy is in the set. No pip configuration of this machine takes part."""
    wheelhouse, _ = filled
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_CONFIG_FILE": os.devnull}
    tags = yaml.safe_load((REPO / "roles/python_env/vars/main.yml").read_text())["__python_env_pip_platforms"]
    proc = subprocess.run([sys.executable, SCRIPT, "Linux", "aarch64", "3.11", "pip", "install", "--dry-run",
                           "--no-index", "--find-links", wheelhouse / "linux-aarch64-cp311-cpu", "--only-binary=:all:",
                           "--target", tmp_path / "t", "--python-version", "3.11", "--implementation", "cp",
                           *(f"--platform={tag}" for tag in tags["Linux-aarch64"]), "torch==2.5.1", "numpy"],
                          capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "torch-2.5.1" in proc.stdout and "nvidia" not in proc.stdout
