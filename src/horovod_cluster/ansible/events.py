"""What each task did on each host, from a run's events: `Cluster(on_event=TaskLog())`.

For the evidence behind a figure or a test ("which hosts compiled Horovod?", "did the smoke test run?"),
where the per-host recap counts say too little.
"""
from __future__ import annotations

import time
from typing import Any

# ansible-runner's events for a task's end on a host, and the outcome each stands for.
_ENDS = {"runner_on_ok": "ok", "runner_on_failed": "failed", "runner_on_skipped": "skipped",
         "runner_on_unreachable": "unreachable"}


class TaskLog:
    """An `on_event` listener: each (host, task) that ran to an end, its outcome and its seconds."""

    def __init__(self) -> None:
        self.ended: list[tuple[str, str, str]] = []  # (host, task, ok | failed | skipped | unreachable), in order
        self.seconds: dict[tuple[str, str], float] = {}
        self._started: dict[tuple[str, str], float] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        data = event.get("event_data") or {}
        key = (data.get("host", ""), data.get("task", ""))
        kind = event.get("event", "")
        if kind == "runner_on_start":
            self._started[key] = time.monotonic()
        elif kind in _ENDS:
            self.ended.append((*key, _ENDS[kind]))
            if key in self._started:
                self.seconds[key] = round(time.monotonic() - self._started[key], 1)

    def hosts(self, task: str, outcome: str = "ok") -> list[str]:
        """The hosts where `task` ended with `outcome`, sorted; a host twice if it ran twice."""
        return sorted(host for host, name, end in self.ended if name == task and end == outcome)

    def last_ends(self, prefix: str) -> dict[str, str]:
        """host -> how the last task whose name starts with `prefix` ended there (one task per item of
        a family, such as the smoke test's one per controller); hosts where none ran are absent."""
        return {host: end for host, name, end in self.ended if name.startswith(prefix)}
