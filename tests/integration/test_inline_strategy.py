"""The hvc_linear strategy (plugins/strategy/hvc_linear.py): ansible's linear strategy, with controller-only
tasks (set_fact, assert, include_*, ...) run in ansible-playbook's own process instead of a forked worker.

Real ansible-playbook runs: which process ran each task (a pipe lookup's $PPID is the Python process that
templated it), and plan.yml's whole plan, refusals included, under hvc_linear and under ansible's linear.
"""
from __future__ import annotations

import re

import pytest

from ansible_run import BAD_INVENTORY, PLAN_INVENTORY, ansible_playbook, run_playbook

PLAYBOOK = """
- name: Where tasks run
  hosts: all
  gather_facts: false
  strategy: {strategy}
  tasks:
    - name: A controller-only task
      ansible.builtin.set_fact:
        first: "{{{{ lookup('ansible.builtin.pipe', 'echo $PPID') }}}}"
    - name: Another, with a loop
      ansible.builtin.set_fact:
        second: "{{{{ lookup('ansible.builtin.pipe', 'echo $PPID') }}}}"
      loop: [1]
    - name: A delegated one (delegation always goes to a worker)
      ansible.builtin.set_fact:
        delegated: "{{{{ lookup('ansible.builtin.pipe', 'echo $PPID') }}}}"
      delegate_to: localhost
    - name: Show them
      ansible.builtin.debug:
        msg: "PIDS {{{{ inventory_hostname }}}} {{{{ first }}}} {{{{ second }}}} {{{{ delegated }}}};"
"""


def pids(tmp_path, strategy: str) -> dict[str, tuple[str, str, str]]:
    (tmp_path / "hosts.yml").write_text(
        "all:\n  vars: {ansible_connection: local, ansible_python_interpreter: '{{ ansible_playbook_python }}'}\n"
        "  hosts: {h1: null, h2: null}\n")
    (tmp_path / "where.yml").write_text(PLAYBOOK.format(strategy=strategy))
    run = ansible_playbook(["-i", tmp_path / "hosts.yml", tmp_path / "where.yml"])
    assert run.returncode == 0, run.stdout + run.stderr
    found = {host: (a, b, c) for host, a, b, c in re.findall(r"PIDS (\S+) (\d+) (\d+) (\d+);", run.stdout)}
    assert set(found) == {"h1", "h2"}, run.stdout
    return found


def test_controller_only_tasks_run_in_one_process_without_forks(tmp_path):
    found = pids(tmp_path, "hvc.horovod_cluster.hvc_linear")
    inline = {pid for first, second, _ in found.values() for pid in (first, second)}
    assert len(inline) == 1, found  # both hosts, both tasks: ansible-playbook's own process
    delegated = {d for _, _, d in found.values()}
    assert len(delegated) == 2 and not delegated & inline, found  # a fresh worker per host


def test_linear_forks_a_worker_per_host_and_task(tmp_path):
    """The same playbook under ansible's linear: what hvc_linear changes (and what the test above would see
    if the strategy ran nothing inline)."""
    found = pids(tmp_path, "linear")
    assert len({pid for values in found.values() for pid in values}) == 6, found


@pytest.mark.parametrize("inventory", [PLAN_INVENTORY, BAD_INVENTORY], ids=["fixture-hosts", "refused-hosts"])
def test_plan_is_the_same_under_linear(inventory):
    """Every role's decide step over the fixture hosts, and over hosts that preflight and the settings
    refuse (rescue, fail, the refusal kept in the plan): the same plan and the same stats as with ansible's
    linear strategy (plan.yml's `-e cluster_plan_strategy=linear`)."""
    inline = run_playbook("plan.yml", inventory)
    linear = run_playbook("plan.yml", inventory, extra_vars={"cluster_plan_strategy": "linear"})
    assert linear.plan and inline.plan == linear.plan
    assert inline.stats == linear.stats
    assert inline.rc == linear.rc
