"""ansible-runner's pty without ptyprocess's pause after a child that has already exited.

ansible-runner runs ansible-playbook in a pty through pexpect and closes it with `child.close()`
only once `child.isalive()` has said the child exited (its `while child.isalive()` loop, then a
last read to EOF). ptyprocess's close() then sleeps `delayafterclose` (0.1 s) "to give the kernel
time to update process status" before it asks whether the child still runs; the answer is already
known. That was 0.1 s of every run, `ansible-inventory` and each rollout alike: on a 38-event playbook
what `Runner.run` adds to plain ansible-playbook went from 0.13 s to 0.02-0.03 s without it, on a settled
no-op rollout of 3 hosts from 0.2-0.3 s to 0.11 s (benchmarks/cluster_ratios.py, P3).

The change reaches only ansible-runner's runner module (its `pexpect` name becomes a copy of pexpect
whose `spawn` is `ExitedChildSpawn`); pexpect itself and anyone else's spawns are untouched. A
child still running when closed (a cancelled or timed-out run) is closed exactly as before: the
pause, then SIGHUP/SIGINT/SIGKILL as ptyprocess does.
"""
from __future__ import annotations

import importlib
import types

import pexpect


class ExitedChildSpawn(pexpect.spawn):
    """pexpect.spawn whose close() does not pause for a child that has already exited."""

    def close(self, force: bool = True) -> None:
        if not self.closed and not self.isalive():  # isalive() reaps it (waitpid), as ptyprocess would after the pause
            self.ptyproc.delayafterclose = 0
        super().close(force=force)


def install() -> None:
    """Give ansible-runner's runner module a pexpect whose spawn is ExitedChildSpawn (idempotent)."""
    runner_module = importlib.import_module("ansible_runner.runner")
    if getattr(runner_module.pexpect, "spawn", None) is ExitedChildSpawn:
        return
    shim = types.ModuleType(pexpect.__name__, pexpect.__doc__)
    shim.__dict__.update(vars(pexpect))
    shim.spawn = ExitedChildSpawn
    runner_module.pexpect = shim
