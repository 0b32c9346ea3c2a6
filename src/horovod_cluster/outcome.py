"""The data of a finished ansible-runner run: the runner makes it, the results read it (neither imports the other)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunOutcome:
    """What one ansible-runner run left behind: its events and the recap."""

    playbook: str
    status: str
    rc: int
    artifacts: Path
    started: float
    finished: float
    events: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def artifact_data(self) -> dict[str, Any]:
        """The `set_stats` data the playbook published (empty when none)."""
        return self.stats.get("artifact_data") or {}

    def stdout_tail(self, lines: int | None = 15) -> str:
        """For humans only: when a run failed without any host failure (e.g. a syntax error), and
        ansible's own listing of --list-hosts / --list-tags (lines=None: all of it)."""
        path = self.artifacts / "stdout"
        if not path.is_file():
            return ""
        text = path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:] if lines else text)
