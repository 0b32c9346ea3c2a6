"""A small adapter over ansible-runner: one playbook run in, runner events out.

Nothing here reads ansible's stdout: results come from the runner's events (task results,
the play recap of `playbook_on_stats` and the `set_stats` data it carries).

Each run gets its own private data folder `<artifacts_dir>/<ident>` (ansible-runner writes the
run's extra vars to `env/` there, so runs must not share one) holding its artifacts in
`artifacts/<ident>`; the oldest run folders are removed beyond `keep`.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ansible_runner

from .content import cache_dir

EventCallback = Callable[[dict[str, Any]], None]
DEFAULT_KEEP = 10
_RUN_DIR = re.compile(r"^\d{8}T\d{6}-\d+-\d{6}$")  # the idents this module makes


class InventoryError(ValueError):
    """The inventory is missing or does not parse; the message says which and why."""


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

    def stdout_tail(self, lines: int = 15) -> str:
        """For humans only when a run failed without any host failure (e.g. a syntax error)."""
        path = self.artifacts / "stdout"
        if not path.is_file():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def ansible_env(content: Path) -> dict[str, str]:
    """Environment that makes ansible use the content's config and paths from any folder."""
    env = {
        # An inventory source that does not parse is an error, not an empty inventory.
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
        "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(cache_dir() / "facts"),
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_NOCOLOR": "True",  # the saved stdout is shown to people on a failed run
    }
    cfg = content / "ansible.cfg"
    if cfg.is_file():
        env["ANSIBLE_CONFIG"] = str(cfg)
    paths = {
        "ANSIBLE_ROLES_PATH": content / "roles",
        "ANSIBLE_LIBRARY": content / "plugins" / "modules",
        "ANSIBLE_MODULE_UTILS": content / "plugins" / "module_utils",
        "ANSIBLE_FILTER_PLUGINS": content / "plugins" / "filter",
        "ANSIBLE_ACTION_PLUGINS": content / "plugins" / "action",
    }
    env.update({name: str(path) for name, path in paths.items() if path.is_dir()})
    return env


def load_inventory(sources: Sequence[Path], content: Path) -> dict[str, Any]:
    """`ansible-inventory --list` through ansible-runner; raises InventoryError."""
    for source in sources:
        if not source.exists():
            raise InventoryError(f"inventory not found: {source}")
    out, err = ansible_runner.get_inventory(
        "list", [str(s) for s in sources], response_format="json", quiet=True,
        envvars=ansible_env(content),
    )
    if not isinstance(out, dict):
        message = _short_inventory_error(err or str(out) or "ansible-inventory failed")
        raise InventoryError(f"inventory does not parse: {', '.join(map(str, sources))}\n{message}")
    return out


def _short_inventory_error(text: str) -> str:
    """ansible-inventory repeats one YAML error per inventory plugin: keep the first and the verdict."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    keep = lines[:1] + [line for line in lines if line.startswith("Origin:")][:1]
    keep += [line for line in lines if line.startswith("[ERROR]")]
    return "\n".join(dict.fromkeys(keep)) or text.strip()


class Runner:
    """Runs one playbook of the content folder and reports its events as they come."""

    def __init__(self, content: Path, artifacts_dir: Path, keep: int = DEFAULT_KEEP) -> None:
        self.content = content
        self.artifacts_dir = artifacts_dir
        self.keep = keep

    def run(
        self,
        playbook: str,
        inventory: Sequence[Path],
        *,
        limit: str | None = None,
        tags: str | None = None,
        skip_tags: str | None = None,
        extravars: dict[str, Any] | None = None,
        check: bool = False,
        diff: bool = False,
        forks: int | None = None,
        verbosity: int = 0,
        envvars: dict[str, str] | None = None,
        on_event: EventCallback | None = None,
    ) -> RunOutcome:
        self.artifacts_dir.mkdir(parents=True, exist_ok=True)
        events: list[dict[str, Any]] = []
        stats: dict[str, Any] = {}

        def handle(event: dict[str, Any]) -> bool:
            if event.get("event") == "playbook_on_stats":
                stats.update(event.get("event_data", {}))
            events.append(event)
            if on_event:
                on_event(event)
            return True  # keep ansible-runner's own job_events files too

        def status(data: dict[str, Any], runner_config: Any) -> None:
            # starting/running/successful/failed/timeout, as a pseudo-event for the same callback
            if on_event:
                on_event({"event": "runner_status", "status": data.get("status")})

        flags = [flag for flag, wanted in (("--check", check), ("--diff", diff)) if wanted]
        # Sortable and unique enough per controller; ansible-runner rotates by mtime.
        ident = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns() % 10**6:06d}"
        self.rotate(keep=self.keep - 1)  # room for this run
        (self.artifacts_dir / ident).mkdir(parents=True)
        started = time.time()
        result = ansible_runner.run(
            private_data_dir=str(self.artifacts_dir / ident),
            project_dir=str(self.content),
            playbook=playbook,
            inventory=[str(s) for s in inventory],
            ident=ident,
            limit=limit,
            tags=tags,
            skip_tags=skip_tags,
            extravars=extravars or {},
            envvars={**ansible_env(self.content), **(envvars or {})},
            cmdline=" ".join(flags) or None,
            forks=forks,
            verbosity=verbosity or None,
            event_handler=handle,
            status_handler=status,
            quiet=True,
        )
        return RunOutcome(
            playbook=playbook,
            status=result.status,
            rc=result.rc,
            artifacts=Path(result.config.artifact_dir),
            started=started,
            finished=time.time(),
            events=events,
            stats=stats,
        )

    def rotate(self, keep: int) -> None:
        """Remove the oldest run folders so that at most `keep` remain (names sort by time)."""
        if not self.artifacts_dir.is_dir():
            return
        runs = sorted(p for p in self.artifacts_dir.iterdir() if p.is_dir() and _RUN_DIR.match(p.name))
        for old in runs[:max(len(runs) - max(keep, 0), 0)]:
            shutil.rmtree(old, ignore_errors=True)
