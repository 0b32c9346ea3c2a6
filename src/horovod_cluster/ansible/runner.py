"""A small adapter over ansible-runner: one playbook run in, runner events out.

Nothing here reads ansible's stdout: results come from the runner's events (task results,
the play recap of `playbook_on_stats` and the `set_stats` data it carries).

Each run gets its own private data folder `<artifacts_dir>/<ident>` holding its artifacts in
`artifacts/<ident>`; the oldest run folders are removed beyond `keep`, except a run still in
progress (it holds a lock on its folder's RUN_LOCK file while ansible runs, in any process).

ansible-playbook's own options (`AnsibleOptions`) reach it as its command line (ansible-runner's
`cmdline`) with their ansible meaning; become and vault passwords answer its prompts through
ansible-runner's `passwords` (prompt regex -> answer). Extra vars go as files (`-e @file`, 0600, removed
after the run), never as text on the command line, where `ps` and artifacts/<id>/command would show them.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import ansible_runner
from ansible.parsing.splitter import parse_kv

from ..content import cache_dir
from ..outcome import RunOutcome
from .options import AnsibleOptions, absolute_at

EventCallback = Callable[[dict[str, Any]], None]
DEFAULT_KEEP = 10
_RUN_DIR = re.compile(r"^\d{8}T\d{6}-\d+-\d{6}$")  # the idents this module makes
RUN_LOCK = ".running"  # held (flock) by the process whose run is in progress in that folder


class InventoryError(ValueError):
    """The inventory is missing or does not parse; the message says which and why."""


def ansible_env(content: Path) -> dict[str, str]:
    """Environment that makes ansible use the content's config and paths from any folder."""
    env = {
        # An inventory source that does not parse is an error, not an empty inventory.
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
        "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(cache_dir() / "facts"),
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_NOCOLOR": "True",  # the saved stdout is shown to people on a failed run
        "ANSIBLE_AGNOSTIC_BECOME_PROMPT": "True",  # BECOME_PROMPT whatever the become method
    }
    # The ansible-* programs of this interpreter's environment (a venv's bin/), also when that
    # environment is not on PATH: `.venv/bin/horovod-cluster` works without activating the venv.
    tools = Path(sys.executable).parent
    if (tools / "ansible-playbook").is_file():
        env["PATH"] = os.pathsep.join([str(tools), os.environ.get("PATH", os.defpath)])
    cfg = content / "ansible.cfg"
    if cfg.is_file():
        env["ANSIBLE_CONFIG"] = str(cfg)
    paths = {
        "ANSIBLE_ROLES_PATH": content / "roles",
        "ANSIBLE_LIBRARY": content / "plugins" / "modules",
        "ANSIBLE_MODULE_UTILS": content / "plugins" / "module_utils",
        "ANSIBLE_ACTION_PLUGINS": content / "plugins" / "action",
    }
    env.update({name: str(path) for name, path in paths.items() if path.is_dir()})
    env["ANSIBLE_COLLECTIONS_PATH"] = os.pathsep.join(
        [str(collection_root(content)), "~/.ansible/collections", "/usr/share/ansible/collections"])
    return env


# The playbooks call roles and plugins as hvc.horovod_cluster.<name>.
COLLECTION = ("hvc", "horovod_cluster")


def collection_root(content: Path) -> Path:
    """A collections path where hvc.horovod_cluster is `content`: a checkout's own .collections/ (a
    link to the checkout), else a link kept in the cache for this content folder (an installed
    wheel's copy has no room for one)."""
    own = content / ".collections"
    if (own.joinpath("ansible_collections", *COLLECTION) / "roles").is_dir():
        return own
    digest = hashlib.sha256(str(content.resolve()).encode()).hexdigest()[:16]
    root = cache_dir() / "collections" / digest
    link = root.joinpath("ansible_collections", *COLLECTION)
    if not link.is_symlink() or link.resolve() != content.resolve():
        link.parent.mkdir(parents=True, exist_ok=True)
        tmp = link.with_name(f".{link.name}.{os.getpid()}")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(content.resolve(), target_is_directory=True)
        os.replace(tmp, link)  # atomic: a concurrent run sees the old link or the new one
    return root


def load_inventory(sources: Sequence[Path], content: Path, options: AnsibleOptions | None = None,
                   limit: str | None = None) -> dict[str, Any]:
    """`ansible-inventory --list` (with `--limit`: only the hosts it selects, which is ansible's own
    pattern matching), through ansible-runner; raises InventoryError."""
    options = options or AnsibleOptions()
    for source in sources:
        if not source.exists():
            raise InventoryError(f"inventory not found: {source}")
    with tempfile.TemporaryDirectory(prefix="hvc-inventory-") as tmp:
        # run_command uses pexpect (it answers a vault prompt), which mixes warnings into stdout:
        # --output keeps the JSON apart.
        output = Path(tmp) / "inventory.json"
        args = ["--list", "--output", str(output), *[a for s in sources for a in ("-i", str(s))], *options.vault_args()]
        out, err, rc = ansible_runner.run_command(
            "ansible-inventory", args + (["--limit", absolute_at(limit)] if limit else []), quiet=True,
            envvars=ansible_env(content), passwords=options.passwords(),
        )
        if rc == 0 and output.is_file():
            return json.loads(output.read_text())
    message = _short_inventory_error(err or out or "ansible-inventory failed")
    raise InventoryError(f"inventory does not parse: {', '.join(map(str, sources))}\n{message}")


def _short_inventory_error(text: str) -> str:
    """ansible-inventory repeats one YAML error per inventory plugin: keep the first and the verdict. Its own lines
    start with "[": a Python warning printed before them (cryptography's deprecations) is not the reason."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    ansible_lines = [line for line in lines if line.startswith("[")]
    keep = (ansible_lines or lines)[:1] + [line for line in lines if line.startswith("Origin:")][:1]
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
        options: AnsibleOptions | None = None,
        limit: str | None = None,
        tags: str | None = None,
        skip_tags: str | None = None,
        extravars: dict[str, Any] | None = None,
        check: bool = False,
        diff: bool = False,
        listing: Sequence[str] = (),
        envvars: dict[str, str] | None = None,
        on_event: EventCallback | None = None,
    ) -> RunOutcome:
        """One ansible-playbook run; `listing` (--list-hosts, --list-tags, --list-tasks) only lists."""
        options = options or AnsibleOptions()
        events: list[dict[str, Any]] = []
        stats: dict[str, Any] = {}

        stop = _Stop()

        def handle(event: dict[str, Any]) -> bool:
            stop.event(event)
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
        folder = self.artifacts_dir / ident
        run_env = {**ansible_env(self.content), **(envvars or {})}
        with _in_progress(folder), stop.handling(), _vars_files(folder, options.extra_vars, extravars) as vars_args:
            self.rotate(keep=self.keep)  # this run's folder counts, and is not removed
            started = time.time()
            result = ansible_runner.run(
                private_data_dir=str(folder),
                project_dir=str(self.content),
                playbook=playbook,
                inventory=[str(s) for s in inventory],
                ident=ident,
                limit=absolute_at(limit) if limit else None,
                tags=tags,
                skip_tags=skip_tags,
                envvars=run_env,
                cmdline=shlex.join([*options.cmdline(extra_vars=False), *vars_args, *flags, *listing]) or None,
                passwords=options.passwords(),
                suppress_env_files=True,  # no env/ files: passwords stay in memory
                # ansible-runner's default ("jsonfile", under the run's artifacts) writes a host's whole facts to
                # a file on every set_fact, on the controller's busy main thread; the facts are read nowhere after
                # the run. Any other value leaves ansible.cfg's fact_caching (memory), as with ansible-playbook.
                fact_cache_type="memory",
                forks=options.forks,
                verbosity=options.verbosity or None,
                event_handler=handle,
                status_handler=status,
                cancel_callback=stop.cancel,
                quiet=True,
            )
        _keep_own_env_only(Path(result.config.artifact_dir) / "command", run_env)
        if stop.asked:  # the play was stopped; the interruption goes on to the caller
            _end_strays(result.config.artifact_dir)
            raise KeyboardInterrupt
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
            if not in_progress(old):
                shutil.rmtree(old, ignore_errors=True)


class _Stop:
    """Ctrl-C, or SIGTERM (how a CI runner cancels a job), during a run ends the play, not only this
    process: ansible-playbook runs in a session of its own (ansible-runner's pty) and its workers each in
    another (ansible's setsid), so a plain exit would leave them running against the hosts. The signal
    goes on to ansible-playbook as SIGTERM (its pid comes with every event), which passes it to its workers
    and ends; before its first event, ansible-runner's cancel stops it (no task has started yet)."""

    def __init__(self) -> None:
        self.asked = False  # a signal came
        self.pid: int | None = None

    def event(self, event: dict[str, Any]) -> None:
        if self.pid is None and event.get("pid"):
            self.pid = int(event["pid"])
            if self.asked:  # the signal came before this first event, and ansible-runner's cancel no longer fires
                _terminate(self.pid)

    def received(self, signum: int, frame: Any) -> None:
        self.asked = True
        if self.pid:
            _terminate(self.pid)

    def cancel(self) -> bool:
        return self.asked and self.pid is None

    @contextlib.contextmanager
    def handling(self) -> Iterator[None]:
        """Take SIGINT and SIGTERM while the run goes on. A signal already ignored (a job being stopped)
        stays ignored, and outside the main thread Python takes no signals: nothing changes there."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
        for signum, handler in previous.items():
            if handler is not signal.SIG_IGN:
                signal.signal(signum, self.received)
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


@contextlib.contextmanager
def _vars_files(folder: Path, given: Sequence[str], extravars: dict[str, Any] | None) -> Iterator[list[str]]:
    """ansible-playbook's `-e` arguments, each text one a file of `folder/vars` (0600) for the run's length: the
    given ones in their order, then the package's own (last, so they win, as ansible-runner put them). A text is
    what ansible reads it as: YAML or JSON as it is, key=value pairs by ansible's own parse_kv."""
    args: list[str] = []
    made = folder / "vars"
    try:
        for number, text in enumerate([*given, *([json.dumps(extravars)] if extravars else [])]):
            if text.startswith("@"):  # a file already: its path is no secret
                args += ["-e", text]
                continue
            if not made.exists():
                made.mkdir(mode=0o700, parents=True)
            path = made / f"extra-vars-{number}.json"
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as out:
                out.write(text if text[:1] in ("[", "{") else json.dumps(parse_kv(text)))
            args += ["-e", f"@{path}"]
        yield args
    finally:
        shutil.rmtree(made, ignore_errors=True)


def _keep_own_env_only(command: Path, own: dict[str, str]) -> None:
    """ansible-runner records the whole environment ansible-playbook ran with in artifacts/<id>/command, and
    the artifacts of the last runs are kept: the controller's own variables (CI tokens, proxy credentials) are
    reduced to their names; the ones this package set stay whole."""
    with contextlib.suppress(OSError, ValueError):
        recorded = json.loads(command.read_text())
        env = recorded.get("env") or {}
        recorded["env"] = {name: value for name, value in env.items() if name in own}
        recorded["env_inherited"] = sorted(name for name in env if name not in own)
        staging = command.with_name(".command.new")
        staging.write_text(json.dumps(recorded))
        staging.chmod(0o600)
        staging.replace(command)


def _end_strays(artifact_dir: str) -> None:
    """Kill what a stopped run left behind: ansible-playbook's workers each run in a session of their own,
    and one forked while the SIGTERM came can miss it and outlive the playbook (seen 1 in ~30 stops). Every
    process of the run has ansible-runner's AWX_ISOLATED_DATA_DIR (this run's artifacts) in its environment.
    Linux only (/proc); elsewhere nothing is found."""
    marker = b"\0AWX_ISOLATED_DATA_DIR=" + os.fsencode(artifact_dir) + b"\0"
    for environ in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError):
            if marker in b"\0" + environ.read_bytes() and int(environ.parent.name) != os.getpid():
                os.kill(int(environ.parent.name), signal.SIGKILL)


def _terminate(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)


@contextlib.contextmanager
def _in_progress(folder: Path) -> Iterator[None]:
    """Create the run folder and hold its lock while the run goes on (the kernel releases it if the
    process dies). The folder appears under its name with the lock already held, so that no
    rotation can take it in between."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".new-", dir=folder.parent))
    with open(staging / RUN_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        staging.rename(folder)
        try:
            yield
        finally:
            (folder / RUN_LOCK).unlink(missing_ok=True)


class InventoryBusy(RuntimeError):
    """Another rollout on this inventory is running on this controller."""


@contextlib.contextmanager
def inventory_lock(name: str) -> Iterator[None]:
    """One rollout per inventory (`name`: its runs folder's) on this controller at a time: two would remove
    each other's build folder and fill the same wheel folders. The kernel releases the lock if the holder dies."""
    folder = cache_dir() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{name}.lock", "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.seek(0)
            raise InventoryBusy(f"another rollout on this inventory is running ({lock.read().strip() or 'starting'}); "
                                "wait for it to end, or stop it") from None
        lock.truncate(0)
        lock.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}")
        lock.flush()
        try:
            yield
        finally:
            lock.truncate(0)


def in_progress(folder: Path) -> bool:
    """Whether a run (of this or another process) is going on in this run folder."""
    try:
        with open(folder / RUN_LOCK) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except FileNotFoundError:
        return False
    except OSError:  # held
        return True
    return False
