"""The hvc_changes callback tells later plays of the same run which hosts a task changed.

site.yml's smoke test reads HVC_CHANGED_HOSTS (cluster_rollout_smoke: changed); here a real
ansible-playbook run with the project's ansible.cfg, two local hosts and two plays shows what a
later play sees: the changed hosts, nothing when no task changed, and unset without the callback.
"""
from __future__ import annotations

import json
import re

import pytest

from ansible_run import ansible_playbook

PLAYBOOK = """
- name: Change some hosts
  hosts: all
  gather_facts: false
  tasks:
    - name: A task that changes the hosts listed in `change`
      ansible.builtin.command: "true"
      changed_when: inventory_hostname in change
    - name: A loop whose second item changes the host listed in `change_in_loop`
      ansible.builtin.command: "true"
      changed_when: inventory_hostname in change_in_loop and item == 2
      loop: [1, 2]
- name: Read them in a later play
  hosts: all
  gather_facts: false
  tasks:
    - name: Show what the callback says
      ansible.builtin.debug:
        msg: "SEEN={{ lookup('ansible.builtin.env', 'HVC_CHANGED_HOSTS', default='unset') }};"
"""


@pytest.fixture
def playbook(tmp_path):
    (tmp_path / "hosts.yml").write_text(
        "all:\n  vars: {ansible_connection: local, ansible_python_interpreter: '{{ ansible_playbook_python }}'}\n"
        "  hosts: {h1: null, h2: null}\n")
    (tmp_path / "two_plays.yml").write_text(PLAYBOOK)
    return tmp_path


def seen(playbook, change, change_in_loop=(), env=None) -> set[str]:
    extra = json.dumps({"change": list(change), "change_in_loop": list(change_in_loop)})
    run = ansible_playbook(["-i", playbook / "hosts.yml", playbook / "two_plays.yml", "-e", extra], env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    values = set(re.findall(r"SEEN=([^;\"]*);", run.stdout))
    assert len(values) == 1, run.stdout  # both hosts see the same list
    return set(filter(None, values.pop().split(",")))


def test_later_plays_see_the_hosts_a_task_changed(playbook):
    assert seen(playbook, change=["h2"]) == {"h2"}
    assert seen(playbook, change=["h1"], change_in_loop=["h2"]) == {"h1", "h2"}


def test_nothing_changed_is_an_empty_list_not_a_value_from_outside(playbook):
    assert seen(playbook, change=[], env={"HVC_CHANGED_HOSTS": "set-outside"}) == set()


def test_without_the_callback_the_variable_is_unset(playbook, monkeypatch):
    # ansible.cfg enables it; a user's own config may not (here: another callback only): unset then, and
    # site.yml runs its smoke test.
    monkeypatch.delenv("HVC_CHANGED_HOSTS", raising=False)
    assert seen(playbook, change=["h1"], env={"ANSIBLE_CALLBACKS_ENABLED": "ansible.posix.timer"}) == {"unset"}
