"""Run ansible-playbook from the tests as a user would (a real subprocess) over recorded or local hosts.

One runner for unit and integration tests (tests/conftest.py puts this folder on sys.path), so they all get the
same ansible.cfg, roles and fact cache; JSON-callback runs are read into `Run`, default-callback runs are read by
`plans` from the debug line `run_role` adds.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAN_INVENTORY = REPO / "tests" / "fixtures" / "plan" / "hosts.yml"
BAD_INVENTORY = REPO / "tests" / "fixtures" / "plan" / "bad-hosts.yml"
# The venv's own ansible-playbook first: one on PATH may be another ansible-core.
_SIBLING = Path(sys.executable).with_name("ansible-playbook")
ANSIBLE_PLAYBOOK = str(_SIBLING) if _SIBLING.exists() else (shutil.which("ansible-playbook") or "ansible-playbook")
COMMON_ENV = {
    "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_ROLES_PATH": str(REPO / "roles"),
    # recorded hosts stay out of the user's fact cache
    "ANSIBLE_CACHE_PLUGIN": "memory",
    # the tests read the output, and a retry file would land in the repo
    "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_RETRY_FILES_ENABLED": "0",
}
JSON_ENV = {"ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json", "ANSIBLE_SHOW_CUSTOM_STATS": "1"}

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
                "distribution_version": "14.5", "user_dir": "/Users/admin", "system": "Darwin", "architecture": "arm64"},
    "rocky9": {"os_family": "RedHat", "distribution": "Rocky", "distribution_major_version": "9",
               "distribution_version": "9.4", "system": "Linux", "architecture": "x86_64"},
}


def ansible_playbook(args, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """ansible-playbook <args> from the repo; env: settings on top of os.environ and COMMON_ENV."""
    return subprocess.run([ANSIBLE_PLAYBOOK, *map(str, args)], cwd=REPO, env={**os.environ, **COMMON_ENV, **(env or {})},
                          capture_output=True, text=True, timeout=timeout, check=False)


def module_env() -> dict[str, str]:
    """The environment for `ansible localhost -m <module>` over this checkout's modules, its JSON on stdout."""
    return dict(os.environ, ANSIBLE_LIBRARY=str(REPO / "plugins/modules"),
                ANSIBLE_MODULE_UTILS=str(REPO / "plugins/module_utils"),
                ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="json",
                ANSIBLE_CACHE_PLUGIN="memory", ANSIBLE_PYTHON_INTERPRETER=sys.executable)


@dataclass
class Run:
    """A run read through the ansible.posix.json callback: stats, per-task results, set_stats."""

    rc: int
    data: dict
    stderr: str

    @property
    def stats(self) -> dict:
        return self.data.get("stats", {})

    @property
    def plan(self) -> dict:
        return self.data.get("global_custom_stats", {}).get("hvc_plan", {})

    def results(self):
        """(host, task name, result) of every task result in the run."""
        for play in self.data.get("plays", []):
            for task in play.get("tasks", []):
                for host, result in task.get("hosts", {}).items():
                    yield host, task["task"]["name"], result

    def failure_messages(self, host: str) -> str:
        return "\n".join(str(r.get("msg", "")) for h, _, r in self.results() if h == host and r.get("failed"))

    def changed(self) -> int:
        return sum(s.get("changed", 0) for s in self.stats.values())


def ansible_playbook_json(args, env: dict | None = None, timeout: int = 600) -> Run:
    proc = ansible_playbook(args, env={**JSON_ENV, **(env or {})}, timeout=timeout)
    try:  # warnings may come before the JSON document
        data = json.loads(proc.stdout[proc.stdout.index("{"):])
    except ValueError:
        raise AssertionError(f"no JSON from {args}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}") from None
    return Run(proc.returncode, data, proc.stderr)


def run_playbook(playbook: str, inventory, *args: str, extra_vars: dict | None = None, env: dict | None = None) -> Run:
    """playbooks/<playbook> over inventory."""
    extra = ["-e", json.dumps(extra_vars)] if extra_vars else []
    return ansible_playbook_json([REPO / "playbooks" / playbook, "-i", inventory, *args, *extra], env=env)


def plan_preflight(inventory, *args, extra_vars=None) -> Run:
    """plan.yml with only the preflight decide step, over recorded facts."""
    return run_playbook("plan.yml", inventory, *args,
                        extra_vars={"cluster_plan_roles": ["preflight"], **(extra_vars or {})})


def local_inventory(folder: Path, hosts: dict | None = None) -> Path:
    """hosts ({name: host vars}) reached with the local connection, this interpreter running the modules; they
    are the `cluster` group, as site.yml wants them."""
    path = folder / "inventory.json"
    path.write_text(json.dumps({"all": {
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
        "children": {"cluster": {"hosts": hosts or {"localhost": {}}}}}}))
    return path


def host_facts(platform: str, name: str, vcpus: int = 4, address: str = "10.0.0.1", extra=None) -> dict:
    facts = dict(PLATFORMS[platform], hostname=name, fqdn=name, processor_vcpus=vcpus,
                 default_ipv4={"address": address}, python={"executable": "/usr/bin/python3"})
    facts.update(extra or {})
    return {f"ansible_{key}": value for key, value in facts.items()}


def run_role(tmp_path: Path, role: str, hosts: dict, extra_vars=None, tasks_from="decide",
             host_vars=None, check=True, limit=None) -> subprocess.CompletedProcess:
    """One role's tasks_from over recorded facts, so any platform can be planned on this machine; then the debug
    line `plans` reads. hosts: {inventory name: ansible facts (from host_facts)}; returns the finished process."""
    inventory = local_inventory(tmp_path, {name: (host_vars or {}).get(name, {}) for name in hosts})
    # cacheable set_fact of ansible_* keys is how recorded facts become ansible_facts['...'].
    record_tasks = [{"name": f"Record the facts of {name}", "when": f"inventory_hostname == '{name}'",
                     "ansible.builtin.set_fact": dict(facts, cacheable=True)} for name, facts in hosts.items()]
    (tmp_path / "play.yml").write_text(json.dumps([{
        "name": f"{role} {tasks_from}", "hosts": "all", "gather_facts": False,
        "roles": ["cluster_defaults"],  # the shared defaults, listed first as every play of the project does
        "tasks": record_tasks + [
            {"name": "Run the role", "ansible.builtin.include_role": {"name": role, "tasks_from": tasks_from}},
            {"name": "Show the plan",
             "ansible.builtin.debug": {"msg": "PLAN {{ inventory_hostname }} {{ hvc_%s.plan | to_json }}" % role}}],
    }]))
    env = {"ANSIBLE_GATHERING": "explicit", "ANSIBLE_STDOUT_CALLBACK": "default",
           "ANSIBLE_CALLBACK_RESULT_FORMAT": "json"}
    return ansible_playbook([tmp_path / "play.yml", "-i", inventory, "-e", json.dumps(extra_vars or {})]
                            + (["--check"] if check else []) + (["--limit", limit] if limit else []),
                            env=env, timeout=300)


def plans(proc: subprocess.CompletedProcess) -> dict[str, dict]:
    """{host: plan}, the role's published hvc_<role>.plan, from run_role's debug line."""
    out = {}
    for line in proc.stdout.splitlines():
        if '"msg": "PLAN ' in line:
            host, plan = json.loads("{" + line.strip().rstrip(",") + "}")["msg"][5:].split(" ", 1)
            out[host] = json.loads(plan)
    return out
