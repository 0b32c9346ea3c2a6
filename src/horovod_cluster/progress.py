"""Live per-host progress from ansible-runner events, rendered with rich.

One row per host shows the task it is on and a bar over the play's tasks. ansible announces no
task count up front, so the bar's length is what the same play took last time (remembered in
the artifacts folder); on a first run the bar pulses instead.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from .results import RolloutResult

_DONE = {"runner_on_ok": "ok", "runner_on_failed": "failed", "runner_on_skipped": "skipped",
         "runner_on_unreachable": "unreachable"}
_STYLE = {"ok": "green", "changed": "yellow", "failed": "red", "unreachable": "red", "skipped": "cyan"}


class TaskCounts:
    """Tasks per host per play of earlier runs: {playbook: {play: count}}."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.data: dict[str, dict[str, int]] = json.loads(path.read_text())
        except (OSError, ValueError):
            self.data = {}

    def get(self, playbook: str, play: str) -> int | None:
        return self.data.get(playbook, {}).get(play)

    def learn(self, result: RolloutResult) -> None:
        """Only complete runs teach the count (a failed host stops early)."""
        if not result.ok or result.limit or result.options.get("tags") or result.options.get("skip_tags"):
            return
        plays = self.data.setdefault(result.playbook, {})
        for host in result.hosts.values():
            for play, count in host.plays.items():
                plays[play] = max(count, plays.get(play, 0))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=1))


class LiveProgress:
    """An event handler for `Cluster(on_event=...)` that draws per-host progress."""

    def __init__(self, console: Console, playbook: str, counts: TaskCounts, echo: bool = False) -> None:
        self.console = console
        self.playbook = playbook
        self.counts = counts
        self.echo = echo  # -v: also show ansible's own display lines
        self.progress = Progress(
            TextColumn("[bold]{task.description}", justify="left"),
            BarColumn(bar_width=24),
            TextColumn("{task.completed:>3.0f}/{task.fields[total_text]}"),
            TextColumn("{task.fields[state]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.rows: dict[str, TaskID] = {}
        self.play = ""
        self.play_row: TaskID | None = None

    def __enter__(self) -> LiveProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event", "")
        data = event.get("event_data", {})
        if self.echo and event.get("stdout"):
            self.progress.console.print(event["stdout"], markup=False, highlight=False)
        if kind == "playbook_on_play_start":
            self._start_play(data.get("play", ""))
        elif kind == "playbook_on_task_start" and self.play_row is not None:
            self.progress.update(self.play_row, advance=1, state=data.get("task", ""))
        elif kind == "runner_on_start" and data.get("host"):
            self.progress.update(self._row(data["host"]), state=f"[dim]{data.get('task', '')}")
        elif kind in _DONE and data.get("host"):
            outcome = _DONE[kind]
            if outcome == "ok" and (data.get("res") or {}).get("changed"):
                outcome = "changed"
            text = f"[{_STYLE[outcome]}]{outcome}[/] {data.get('task', '')}"
            self.progress.update(self._row(data["host"]), advance=1, state=text)

    def _start_play(self, play: str) -> None:
        self.play = play
        for row in self.rows.values():
            self.progress.update(row, visible=False)
        self.rows.clear()
        total = self.counts.get(self.playbook, play)
        self.play_row = self.progress.add_task(f"play: {play}", total=total, state="",
                                               total_text=str(total or "?"))

    def _row(self, host: str) -> TaskID:
        if host not in self.rows:
            total = self.counts.get(self.playbook, self.play)
            self.rows[host] = self.progress.add_task(f"  {host}", total=total, state="",
                                                     total_text=str(total or "?"))
        return self.rows[host]
