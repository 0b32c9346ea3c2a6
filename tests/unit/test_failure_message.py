"""results.failure_message over a failed loop: the failed items' own messages, on ansible-core 2.19 and 2.21.

Each controller marks a failed loop item its own way (tests/fixtures/ansible-events/README.md): the recorded
events of both are read here, and the same loop is run for real under the ansible-core installed."""
from __future__ import annotations

import json
from pathlib import Path

import ansible_runner
import pytest

from horovod_cluster.results import failure_message

EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "ansible-events"
PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.command: "{{ item }}"
      loop: [/bin/true, /bin/false]
      ignore_errors: true
    - ansible.builtin.assert: {that: item, fail_msg: "bad {{ item }}", quiet: true}
      loop: [true, false]
"""


def _check_messages(failed_results: list[dict]) -> None:
    """The command's item says so in its own words ("non-zero return code" on 2.19, a sentence on 2.21); the
    assert's item gives the role's fail_msg; neither is the loop's "One or more items failed"."""
    command, assertion = (failure_message(res) for res in failed_results)
    assert "non-zero return code" in command and "\n" not in command
    assert assertion == "bad False"


@pytest.mark.parametrize("recorded", ["loop-failed-2.19.14.json", "loop-failed-2.21.5.json"])
def test_recorded_loop_failures_give_the_failed_items_messages(recorded):
    events = json.loads((EVENTS / recorded).read_text())
    assert [res["msg"] for res in events["runner_on_failed"]] == ["One or more items failed"] * 2
    _check_messages(events["runner_on_failed"])


def test_the_installed_ansible_core_gives_the_same(tmp_path):
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "loop.yml").write_text(PLAYBOOK)
    run = ansible_runner.run(private_data_dir=str(tmp_path), playbook="loop.yml", quiet=True)
    failed = [event["event_data"]["res"] for event in run.events if event.get("event") == "runner_on_failed"]
    _check_messages(failed)
