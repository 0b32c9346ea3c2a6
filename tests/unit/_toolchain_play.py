"""Run one role's decide step (or main, in check mode) with ansible-playbook over recorded facts.

The facts are recorded ones (set as cacheable facts before the role runs), so Ubuntu, macOS and other platforms can
be planned on this Debian machine; the connection is local and nothing on it is changed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_SIBLING = Path(sys.executable).with_name("ansible-playbook")
PLAYBOOK_BIN = str(_SIBLING) if _SIBLING.exists() else (shutil.which("ansible-playbook") or "ansible-playbook")

PLATFORMS = {
    "debian12": {"os_family": "Debian", "distribution": "Debian", "distribution_major_version": "12",
                 "distribution_version": "12.7", "system": "Linux", "architecture": "x86_64"},
    "raspios12": {"os_family": "Debian", "distribution": "Debian", "distribution_major_version": "12",
                  "distribution_version": "12.7", "system": "Linux", "architecture": "aarch64"},
    "ubuntu22": {"os_family": "Debian", "distribution": "Ubuntu", "distribution_major_version": "22",
                 "distribution_version": "22.04", "system": "Linux", "architecture": "x86_64"},
    "ubuntu24": {"os_family": "Debian", "distribution": "Ubuntu", "distribution_major_version": "24",
                 "distribution_version": "24.04", "system": "Linux", "architecture": "x86_64"},
    "ubuntu20": {"os_family": "Debian", "distribution": "Ubuntu", "distribution_major_version": "20",
                 "distribution_version": "20.04", "system": "Linux", "architecture": "x86_64"},
    "macos14": {"os_family": "Darwin", "distribution": "MacOSX", "distribution_major_version": "14",
                "distribution_version": "14.5", "system": "Darwin", "architecture": "arm64"},
    "rocky9": {"os_family": "RedHat", "distribution": "Rocky", "distribution_major_version": "9",
               "distribution_version": "9.4", "system": "Linux", "architecture": "x86_64"},
}


def host_facts(platform: str, name: str, vcpus: int = 4, address: str = "10.0.0.1", extra=None) -> dict:
    facts = dict(PLATFORMS[platform], hostname=name, fqdn=name, processor_vcpus=vcpus,
                 default_ipv4={"address": address}, python={"executable": "/usr/bin/python3"})
    facts.update(extra or {})
    return {f"ansible_{key}": value for key, value in facts.items()}


def run_role(tmp_path: Path, role: str, hosts: dict, extra_vars=None, tasks_from="decide",
             host_vars=None, check=True) -> subprocess.CompletedProcess:
    """hosts: {inventory name: ansible facts (from host_facts)}; returns the finished process."""
    inventory = {"all": {"hosts": {}}}
    record_tasks = []
    for name, facts in hosts.items():
        inventory["all"]["hosts"][name] = dict({"ansible_connection": "local",
                                                "ansible_python_interpreter": sys.executable},
                                               **(host_vars or {}).get(name, {}))
        # cacheable set_fact of ansible_* keys is how recorded facts become ansible_facts['...'].
        record_tasks.append({"name": f"Record the facts of {name}", "when": f"inventory_hostname == '{name}'",
                             "ansible.builtin.set_fact": dict(facts, cacheable=True)})
    (tmp_path / "inventory.json").write_text(json.dumps(inventory))
    (tmp_path / "play.yml").write_text(json.dumps([{
        "name": f"{role} {tasks_from}", "hosts": "all", "gather_facts": False,
        "tasks": record_tasks + [
            {"name": "Run the role", "ansible.builtin.include_role": {"name": role, "tasks_from": tasks_from}},
            {"name": "Show the plan",
             "ansible.builtin.debug": {"msg": "PLAN {{ inventory_hostname }} {{ __%s_plan | to_json }}" % role}}],
    }]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_ROLES_PATH=str(REPO / "roles"),
               ANSIBLE_CACHE_PLUGIN="memory", ANSIBLE_GATHERING="explicit", ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    cmd = [PLAYBOOK_BIN, str(tmp_path / "play.yml"), "-i", str(tmp_path / "inventory.json"),
           "-e", json.dumps(extra_vars or {})] + (["--check"] if check else [])
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def plans(proc: subprocess.CompletedProcess) -> dict[str, dict]:
    """{host: __<role>_plan}, from the debug task's output."""
    out = {}
    for line in proc.stdout.splitlines():
        if '"msg": "PLAN ' in line:
            host, plan = json.loads("{" + line.strip().rstrip(",") + "}")["msg"][5:].split(" ", 1)
            out[host] = json.loads(plan)
    return out
