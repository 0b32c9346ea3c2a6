"""ansible-runner's pty closes without ptyprocess's 0.1 s pause once the child has exited (runner_pty.py),
and a child still running is closed as before. Real processes and real ansible runs; the pauses are
recorded by standing in for ptyprocess's time module, not timed."""
from __future__ import annotations

import importlib
import time
import types
from pathlib import Path

import pexpect
import pytest
import ptyprocess.ptyprocess

from horovod_cluster import runner_pty
from horovod_cluster.runner import Runner

API = Path(__file__).resolve().parent.parent / "fixtures" / "api"


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    """Every time.sleep of ptyprocess (its close's delayafterclose, terminate's waits), recorded and taken."""
    taken: list[float] = []

    def sleep(seconds: float) -> None:
        taken.append(seconds)
        time.sleep(seconds)
    monkeypatch.setattr(ptyprocess.ptyprocess, "time", types.SimpleNamespace(sleep=sleep, time=time.time))
    return taken


def test_only_ansible_runner_gets_the_spawn():
    runner_pty.install()
    runner_pty.install()  # idempotent
    runner_module = importlib.import_module("ansible_runner.runner")
    assert runner_module.pexpect.spawn is runner_pty.ExitedChildSpawn
    assert runner_module.pexpect.EOF is pexpect.EOF and runner_module.pexpect.TIMEOUT is pexpect.TIMEOUT
    assert pexpect.spawn is not runner_pty.ExitedChildSpawn, "pexpect itself is left as it is"


def test_an_exited_child_closes_without_the_pause(pauses):
    child = runner_pty.ExitedChildSpawn("true", encoding="utf-8")
    child.expect(pexpect.EOF)
    while child.isalive():  # ansible-runner's loop: close comes once the child is seen to have exited
        time.sleep(0.01)
    child.close()
    assert pauses and max(pauses) == 0, pauses
    assert child.closed and child.exitstatus == 0


def test_a_running_child_is_closed_as_before(pauses):
    child = runner_pty.ExitedChildSpawn("sleep", ["30"], encoding="utf-8")
    child.close(force=True)
    assert 0.1 in pauses, "ptyprocess's own pause before it ends a running child"
    assert child.closed and not child.isalive() and child.signalstatus is not None


def test_a_real_run_takes_no_pause(pauses, tmp_path):
    outcome = Runner(API / "content", tmp_path).run("site.yml", [API / "inventory.yml"], limit="local1")
    assert outcome.rc == 0 and outcome.stats["changed"] == {"local1": 1}
    assert pauses and max(pauses) == 0, f"ansible-runner's close paused: {pauses}"
