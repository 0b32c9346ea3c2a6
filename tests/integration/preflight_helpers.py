"""Run playbooks for the preflight tests with ansible-playbook (a real subprocess) and read the
results from the ansible.posix.json callback (stats, per-task results, set_stats)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLAN_INVENTORY = REPO / "tests" / "fixtures" / "plan" / "hosts.yml"
BAD_INVENTORY = REPO / "tests" / "fixtures" / "plan" / "bad-hosts.yml"
ANSIBLE_PLAYBOOK = str(Path(sys.executable).with_name("ansible-playbook"))


@dataclass
class Run:
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


def run_playbook(playbook: str, inventory, *args: str, extra_vars: dict | None = None, env: dict | None = None) -> Run:
    cmd = [ANSIBLE_PLAYBOOK, str(REPO / "playbooks" / playbook), "-i", str(inventory), *args]
    if extra_vars:
        cmd += ["-e", json.dumps(extra_vars)]
    full_env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
                    ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_SHOW_CUSTOM_STATS="1",
                    # recorded hosts stay out of the user's fact cache
                    ANSIBLE_CACHE_PLUGIN="memory", ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    full_env.update(env or {})
    proc = subprocess.run(cmd, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=600)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"no JSON from {' '.join(cmd)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return Run(proc.returncode, data, proc.stderr)


def plan_preflight(inventory, *args, extra_vars=None) -> Run:
    """plan.yml with only the preflight decide step, over recorded facts."""
    return run_playbook("plan.yml", inventory, *args,
                        extra_vars={"hvc_plan_roles": ["preflight"], **(extra_vars or {})})


def local_inventory(tmp_path: Path, hosts: dict | None = None) -> Path:
    """localhost reached with the local connection, this interpreter running the modules."""
    hosts = hosts or {"localhost": {}}
    lines = ["all:", "  vars:", "    ansible_connection: local",
             f"    ansible_python_interpreter: {sys.executable}", "  hosts:"]
    for name, host_vars in hosts.items():
        lines.append(f"    {name}:" + ("" if host_vars else " {}"))
        for key, value in host_vars.items():
            lines.append(f"      {key}: {json.dumps(value)}")
    path = tmp_path / "hosts.yml"
    path.write_text("\n".join(lines) + "\n")
    return path
