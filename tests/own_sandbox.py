"""What the tests that bring up a sandbox of their own share: the hosts, and what each task did.

Such a test (fresh hosts for a compile, an arm64 host, a host without root) must not touch the
session's shared sandbox: its hosts get their own prefix, podman network, SSH key and inventory,
and are removed afterwards, also when bringing them up fails half-way.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from horovod_cluster.sandbox import Host, Sandbox


@contextmanager
def own_sandbox(root: Path, prefix: str, count: int, arm64: int = 0,
                inventory: str = "inventory") -> Iterator[tuple[Sandbox, list[Host]]]:
    """Fresh hosts <prefix>1.. (amd64) and <prefix>-arm64-1.. on network <prefix>; their inventory
    is written to root/<inventory>. Yields the sandbox and its hosts; removes both at the end."""
    sandbox = Sandbox(prefix=prefix, network=prefix, inventory_dir=root / inventory, state_dir=root / "state")
    sandbox.down()  # a run killed earlier may have left them
    try:
        yield sandbox, sandbox.up(count=count, arm64=arm64)
    finally:
        sandbox.down()


class TaskLog:
    """An `on_event` listener: each (host, task) that ran to an end, its outcome and its seconds."""

    def __init__(self) -> None:
        self.ended: list[tuple[str, str, str]] = []  # (host, task, "ok" | "failed"), in order
        self.seconds: dict[tuple[str, str], float] = {}
        self._started: dict[tuple[str, str], float] = {}

    def __call__(self, event: dict) -> None:
        data = event.get("event_data") or {}
        key = (data.get("host", ""), data.get("task", ""))
        kind = event.get("event")
        if kind == "runner_on_start":
            self._started[key] = time.monotonic()
        elif kind in ("runner_on_ok", "runner_on_failed"):
            self.ended.append((*key, "ok" if kind == "runner_on_ok" else "failed"))
            if key in self._started:
                self.seconds[key] = round(time.monotonic() - self._started[key], 1)

    def hosts(self, task: str, outcome: str = "ok") -> list[str]:
        """The hosts where `task` ended with `outcome`, sorted; a host twice if it ran twice."""
        return sorted(host for host, name, end in self.ended if name == task and end == outcome)
