"""The hvc_linear strategy (plugins/strategy/hvc_linear.py): ansible's linear strategy, with controller-only
tasks (set_fact, assert, include_*, ...) run in ansible-playbook's own process instead of a forked worker.

Real ansible-playbook runs: which process ran each task (a pipe lookup's $PPID is the Python process that
templated it), and plan.yml's whole plan, refusals included, under hvc_linear and under ansible's linear.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from ansible_run import BAD_INVENTORY, COMMON_ENV, PLAN_INVENTORY, REPO, ansible_playbook, run_playbook

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


# ansible-playbook in this process, counting Jinja's compiles in it (the controller's; a worker's are its own)
COUNTING_PLAYBOOK = """
import sys
from ansible._internal._templating._jinja_bits import AnsibleEnvironment
from ansible.cli.playbook import PlaybookCLI
compiled = 0
original = AnsibleEnvironment.from_string
def counting(self, *args, **kwargs):
    global compiled
    compiled += 1
    return original(self, *args, **kwargs)
AnsibleEnvironment.from_string = counting
rc = PlaybookCLI(["ansible-playbook", *sys.argv[1:]]).run()
print(f"COMPILED {compiled};")
sys.exit(rc)
"""

TEMPLATED = """
- name: Templates and conditions
  hosts: all
  gather_facts: false
  strategy: hvc.horovod_cluster.hvc_linear
  tasks:
    - name: Arguments
      ansible.builtin.set_fact:
        one: "{{ inventory_hostname | upper }}"
        two: "{{ [1, 2, 3] | map('string') | join('-') }}"
      when: inventory_hostname is match('h')
    - name: More, with a loop
      ansible.builtin.set_fact:
        three: "{{ one ~ two ~ item }}"
      loop: [a, b]
      when: two | length > 0
    - name: Check
      ansible.builtin.assert:
        that: three == inventory_hostname | upper ~ '1-2-3b'
"""


def controller_compiles(tmp_path, hosts: int) -> int:
    (tmp_path / "hosts.yml").write_text(
        "all:\n  vars: {ansible_connection: local}\n  hosts: {" + ", ".join(f"h{n}: null" for n in range(hosts)) + "}\n")
    (tmp_path / "templated.yml").write_text(TEMPLATED)
    run = subprocess.run([sys.executable, "-c", COUNTING_PLAYBOOK, "-i", str(tmp_path / "hosts.yml"),
                          str(tmp_path / "templated.yml")], cwd=REPO, env={**os.environ, **COMMON_ENV},
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    return int(re.search(r"COMPILED (\d+);", run.stdout).group(1))


def test_templates_compile_once_however_many_hosts(tmp_path):
    """CompiledTemplates: the tasks' arguments and conditions compile as often for 5 hosts as for one
    (without it, each host-task compiles its own: about 5 times as many)."""
    one = controller_compiles(tmp_path, 1)
    assert one > 5 and controller_compiles(tmp_path, 5) == one


@pytest.mark.parametrize("inventory", [PLAN_INVENTORY, BAD_INVENTORY], ids=["fixture-hosts", "refused-hosts"])
def test_plan_is_the_same_under_linear(inventory):
    """Every role's decide step over the fixture hosts, and over hosts that preflight and the settings
    refuse (rescue, fail, the refusal kept in the plan): the same plan and the same stats as with ansible's
    linear strategy (plan.yml's default; hvc_linear is opt-in)."""
    inline = run_playbook("plan.yml", inventory, extra_vars={"cluster_plan_strategy": "hvc.horovod_cluster.hvc_linear"})
    linear = run_playbook("plan.yml", inventory)
    assert linear.plan and inline.plan == linear.plan
    assert inline.stats == linear.stats
    assert inline.rc == linear.rc
