"""Per-host progress from ansible-runner events: live on a terminal, plain lines in a log.

On a terminal (`LiveProgress`) one row per host shows the task it is on and a bar over the play's
tasks. ansible announces no task count up front, so the bar's length is what the same play took
last time (remembered in the artifacts folder); on a first run the bar pulses instead.
In a log (`PlainProgress`, CI) plain lines: each play, each failed task (its message is printed once, in the
summary), one line per host when a play ends, and a heartbeat while a task runs long. The counts are the
summary's alone (ansible's recap): events cannot tell a rescued failure from one that stopped the host.
"""
from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ..results import RolloutResult

_DONE = {"runner_on_ok": "ok", "runner_on_failed": "failed", "runner_on_skipped": "skipped",
         "runner_on_unreachable": "unreachable"}
_STYLE = {"ok": "green", "changed": "yellow", "failed": "red", "unreachable": "red", "skipped": "cyan"}


class TaskCounts:
    """Tasks per host per play of earlier runs: {playbook: {play: count}}."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            data = {}
        # a file cut short or changed by hand only costs the bar its length: keep what has the right shape
        self.data: dict[str, dict[str, int]] = {
            playbook: {play: n for play, n in plays.items() if isinstance(n, int)}
            for playbook, plays in (data.items() if isinstance(data, dict) else ()) if isinstance(plays, dict)}

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


HEARTBEAT = 30.0  # seconds between "still running" lines in a log; HOROVOD_CLUSTER_HEARTBEAT overrides


class PlainProgress:
    """An event handler for `Cluster(on_event=...)` that writes plain lines for logs (no terminal):

        play: Horovod
        hvc-node2  FAILED  Horovod | Compile with pip wheel
        hvc-node1  Horovod | Compile with pip wheel  running 4m10s     (every `heartbeat` s)
        hvc-node1  play Horovod: 12 tasks
    """

    def __init__(self, console: Console, echo: bool = False, heartbeat: float | None = None) -> None:
        self.console = console
        self.echo = echo  # -v: also show ansible's own display lines
        self.heartbeat = heartbeat or float(os.environ.get("HOROVOD_CLUSTER_HEARTBEAT") or HEARTBEAT)
        self.play = ""
        self.counts: Counter[str] = Counter()  # host -> task results in the current play
        self.running: dict[str, tuple[str, float]] = {}  # host -> (task, started)
        self.said: dict[str, float] = {}  # host -> when its task last got a line
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.ticker = threading.Thread(target=self._beat, name="heartbeat", daemon=True)

    def __enter__(self) -> PlainProgress:
        self.ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.ticker.join()
        with self.lock:
            self._end_play()

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event", "")
        data = event.get("event_data", {})
        host = data.get("host")
        with self.lock:
            if self.echo and event.get("stdout"):
                self._say(event["stdout"])
            if kind == "playbook_on_play_start":
                self._end_play()
                self.play = data.get("play", "")
                self._say(f"play: {self.play}")
            elif kind == "playbook_on_stats":
                self._end_play()
            elif kind == "runner_on_start" and host:
                self.running[host] = (data.get("task", ""), time.monotonic())
                self.said[host] = time.monotonic()
            elif kind in _DONE and host:
                self.running.pop(host, None)
                self.counts[host] += 1
                if _DONE[kind] in ("failed", "unreachable") and not data.get("ignore_errors"):
                    self._say(f"{host}  {_DONE[kind].upper()}  {data.get('task', '')}")

    def _end_play(self) -> None:
        for host, count in sorted(self.counts.items()):
            self._say(f"{host}  play {self.play}: {count} tasks")
        self.counts.clear()
        self.running.clear()

    def _beat(self) -> None:
        while not self.done.wait(min(1.0, self.heartbeat / 4)):
            now = time.monotonic()
            with self.lock:
                for host, (task, started) in sorted(self.running.items()):
                    if now - self.said[host] >= self.heartbeat:
                        self.said[host] = now
                        self._say(f"{host}  {task}  running {_duration(now - started)}")

    def _say(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
