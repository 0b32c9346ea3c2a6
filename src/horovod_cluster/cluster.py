"""The `Cluster` API: plan, rollout, retry and check a cluster described by an inventory.

Data flows one way: `Cluster` -> `Runner` (ansible-runner) -> playbooks and roles; results
come back only as runner events and the `set_stats` data the playbooks publish.
"""
from __future__ import annotations

import contextlib
import dataclasses
import difflib
import hashlib
import os
import re
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from .content import cache_dir, content_dir as default_content_dir, settings_engine
from .job import (JobRefused, JobResult, JobTimeout, OutputCallback, check_hostfile, elastic_world,
                  horovodrun_argv, interrupts_ignored, job_env, job_request, launch_argv, new_job_id, only_hosts,
                  placement, remote_command, stream, with_mpi_rules)
from .results import CheckReport, PlanResult, Result, RolloutResult, WheelhouseResult, from_json
from .ansible.options import AnsibleOptions
from .ansible.runner import (DEFAULT_KEEP, EventCallback, InventoryError, Runner, inventory_lock,
                     load_inventory)
from .slurm import allocation_hostfile

# Saved results, in the artifacts folder (the last of any inventory: `report`/`retry` without -i)
# and in the inventory's own runs folder (see `runs_dir`).
LAST_RUN = "last-run.json"  # any result, for `report`
LAST_ROLLOUT = "last-rollout.json"  # the last rollout or retry, for `retry_failed`


def default_artifacts_dir() -> Path:
    """HOROVOD_CLUSTER_ARTIFACTS, else ~/.cache/horovod-cluster/runs (for the API and the CLI alike)."""
    override = os.environ.get("HOROVOD_CLUSTER_ARTIFACTS")
    return Path(override).resolve() if override else cache_dir() / "runs"


def runs_dir(artifacts_dir: Path, inventory: Sequence[Path]) -> Path:
    """Where the runs of one inventory keep their folders and saved results: a subfolder named
    after the inventory and a short hash of its resolved paths, so that runs on other inventories
    never rotate them away nor replace their last results."""
    paths = sorted(str(Path(p).resolve()) for p in inventory)
    digest = hashlib.sha256("\n".join(paths).encode()).hexdigest()[:8]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(paths[0]).stem if paths else "none")
    return artifacts_dir / f"{name}-{digest}"


def load_saved(artifacts_dir: Path, name: str = LAST_RUN) -> Result | None:
    """A result saved in an artifacts folder (LAST_RUN or LAST_ROLLOUT), or None; UsageError when it is not one."""
    path = artifacts_dir / name
    return read_saved(path) if path.is_file() else None


def read_saved(path: Path) -> Result:
    """A result saved with --json or by a run; UsageError naming the file when it is not one (truncated, foreign)."""
    try:
        return from_json(path.read_text())
    except ValueError as err:  # UnicodeDecodeError and json's errors are ValueErrors too
        raise UsageError(f"{path} is not a saved horovod-cluster result: {err}") from None


class UsageError(ValueError):
    """A bad argument (unknown host in limit, bad serial); nothing was run."""


def check_serial(value: int | str | None) -> str | list[str] | None:
    """ansible's `serial`: a positive number or a percentage (1-100%), or a comma list of them
    (batch sizes in order); a list is passed on as a list, which is what the play keyword takes."""
    if value is None:
        return None
    parts = [p.strip() for p in str(value).split(",")]
    engine = settings_engine()  # the rule preflight applies to cluster_serial
    if engine.serial_error(parts):
        raise UsageError(f"bad serial {value!r}; allowed: {engine.SERIAL_FORM}")
    return parts if len(parts) > 1 else parts[0]


class _AnyTagLoader(yaml.SafeLoader):
    """YAML as ansible reads it, for a shape check only: its own tags (!unsafe, !vault) are accepted."""


_AnyTagLoader.add_multi_constructor("!", lambda loader, suffix, node: None)
_JINJA = re.compile(r"{{.*?}}|{%.*?%}", re.S)  # ansible's split keeps a template whole, spaces and all


def check_extra_vars(value: str) -> str:
    """One `-e` as ansible-playbook reads it: `@file` (YAML or JSON of a mapping; a vault file is not opened),
    JSON/YAML of a mapping when it starts with { or [, else key=value pairs. Returns it unchanged."""
    if not value:
        return value
    if value.startswith("@"):
        path = Path(value[1:]).expanduser()
        try:
            text = path.read_text()
        except OSError as err:
            raise UsageError(f"{value}: cannot read {path}: {err.strerror or err}") from None
        if text.lstrip().startswith("$ANSIBLE_VAULT"):
            return value
        _mapping(value, text)
    elif value[0] in "/.":
        raise UsageError(f"{value}: a file of variables is given as @{value}")
    elif value[0] in "{[":
        _mapping(value, value)
    else:
        try:
            words = shlex.split(_JINJA.sub("J", value))
        except ValueError as err:
            raise UsageError(f"{value}: {err}") from None
        bare = [word for word in words if "=" not in word]
        if bare:
            raise UsageError(f"{value}: expected key=value pairs, JSON, YAML or @file; {bare[0]!r} has no =")
    return value


def _mapping(value: str, text: str) -> None:
    try:
        data = yaml.load(text, Loader=_AnyTagLoader)  # noqa: S506 - a SafeLoader that builds nothing of the tags
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise UsageError(f"{value[:80]}: does not parse as JSON or YAML: {problem}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{value[:80]}: is {type(data).__name__}, not a mapping of variables")


class Cluster:
    """A cluster described by an Ansible inventory (a file, a folder, or several of them).

    Example: `Cluster("inventories/sandbox").rollout(serial="50%").ok`

    The keyword arguments from `extravars` on are ansible-playbook's options with its meaning:
    `extravars` a dict of variables, or `-e` arguments as ansible-playbook takes them ("k=v k2=v2",
    JSON or YAML, "@vars.yml"; values stay strings as there), `forks` (-f), `verbosity` (-v...),
    `user` (-u), `become` (-b), `become_password` (answers -K), `private_key` (--private-key),
    `vault_password_file` (one or several), `vault_password` (answers --ask-vault-pass).
    """

    def __init__(
        self,
        inventory: str | Path | Sequence[str | Path],
        *,
        content_dir: str | Path | None = None,
        artifacts_dir: str | Path | None = None,
        keep_runs: int = DEFAULT_KEEP,
        on_event: EventCallback | None = None,
        extravars: Mapping[str, Any] | str | Sequence[str] | None = None,
        forks: int | None = None,
        verbosity: int = 0,
        user: str | None = None,
        become: bool = False,
        become_password: str | None = None,
        private_key: str | Path | None = None,
        vault_password_file: str | Path | Sequence[str | Path] | None = None,
        vault_password: str | None = None,
    ) -> None:
        sources = [inventory] if isinstance(inventory, (str, Path)) else list(inventory)
        self.content_dir = Path(content_dir).resolve() if content_dir else default_content_dir()
        # A relative inventory is looked up in the working folder, then in the content folder
        # (so the README's Cluster("inventories/sandbox") works from a checkout or anywhere).
        self.inventory = [self._resolve_inventory(Path(s)) for s in sources]
        self.artifacts_dir = Path(artifacts_dir).resolve() if artifacts_dir else default_artifacts_dir()
        self.runs_dir = runs_dir(self.artifacts_dir, self.inventory)
        self.extravars = dict(extravars) if isinstance(extravars, Mapping) else {}
        self.options = AnsibleOptions.from_keywords(locals())  # the keywords from `extravars` on, by their table
        self.on_event = on_event
        self.runner = Runner(self.content_dir, self.runs_dir, keep=keep_runs)
        self._inventory_data: dict[str, Any] | None = None
        self.last: Result | None = None
        self.last_rollout: RolloutResult | None = None
        self.last_stage: RolloutResult | None = None  # the check and staging run of the last job

    def _resolve_inventory(self, path: Path) -> Path:
        if path.is_absolute() or path.exists() or not (self.content_dir / path).exists():
            return path.resolve()
        return (self.content_dir / path).resolve()

    # -- inventory --------------------------------------------------------------------------
    def inventory_data(self) -> dict[str, Any]:
        """`ansible-inventory --list` of this cluster; raises InventoryError."""
        if self._inventory_data is None:
            self._inventory_data = load_inventory(self.inventory, self.content_dir, self.options)
        return self._inventory_data

    def hosts(self) -> list[str]:
        return _hosts(self.inventory_data())

    def groups(self) -> list[str]:
        return sorted(k for k in self.inventory_data() if k != "_meta")

    def select(self, limit: str) -> list[str]:
        """The hosts a `--limit` selects, as ansible-playbook resolves it (ansible-inventory --limit):
        every pattern Ansible takes works (`cpu_nodes[0]`, `gpu*:!nosuch`, `~regex`, `@file`).
        A limit that selects no host is refused, naming the groups and the closest names."""
        selected = _hosts(load_inventory(self.inventory, self.content_dir, self.options, limit=limit))
        if not selected:
            names = self.hosts() + self.groups()
            terms = [t.strip().lstrip("!&") for t in re.split(r"[,:]", limit)]
            close = dict.fromkeys(m for t in terms if t for m in difflib.get_close_matches(t, names, n=3))
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise UsageError(f"--limit {limit!r} selects no host of the inventory "
                             f"(groups: {', '.join(self.groups())}{hint})")
        return selected

    # -- runs -------------------------------------------------------------------------------
    def _run(self, playbook: str, *, extravars: dict[str, Any] | None = None, ansible: AnsibleOptions | None = None,
             **options: Any) -> tuple[RolloutResult, dict[str, Any]]:
        """One playbook run -> (its typed result, the `set_stats` data it published)."""
        # Fail early, before anything runs, on a missing, broken or empty inventory.
        if not self.hosts():
            raise InventoryError(f"no hosts in the inventory {', '.join(map(str, self.inventory))}")
        limit = options.pop("limit", None) or None
        if limit:
            self.select(limit)
        outcome = self.runner.run(
            playbook, self.inventory, options=ansible or self.options, limit=limit,
            extravars={**self.extravars, **(extravars or {})}, on_event=self.on_event, **options,
        )
        result = RolloutResult.from_outcome(
            outcome, limit=limit, check_mode=bool(options.get("check")),
            options={"playbook": playbook, "inventory": [str(p) for p in self.inventory], "limit": limit,
                     "extravars": extravars or {}, **options},
        )
        return result, outcome.artifact_data

    @staticmethod
    def _rollout(run: RolloutResult, stats: dict[str, Any]) -> RolloutResult:
        """A run of site.yml: with its closing smoke test and whether it found the cluster settled."""
        run.smoke = (stats.get("hvc_check") or {}).get("smoke")
        run.settled = stats.get("hvc_settled")
        return run

    def listing(self, playbook: str, *what: str, limit: str | None = None, tags: str | Sequence[str] | None = None,
                skip_tags: str | Sequence[str] | None = None) -> tuple[int, str]:
        """ansible-playbook's own --list-hosts / --list-tags / --list-tasks of a playbook (`what`:
        "hosts", "tags", "tasks"): (its exit code, its listing). Nothing runs on any host."""
        if limit:
            self.select(limit)
        outcome = self.runner.run(playbook, self.inventory, options=self.options, limit=limit, tags=_join(tags),
                                  skip_tags=_join(skip_tags), extravars=self.extravars,
                                  listing=[f"--list-{w}" for w in what])
        return outcome.rc, outcome.stdout_tail(lines=None)

    def plan(self, limit: str | None = None, facts_dir: str | Path | None = None) -> PlanResult:
        """What each role will do on each host, decided by the roles themselves (plan.yml).

        With `facts_dir` (DIR/<host>.json from playbooks/record_facts.yml) the plan runs over
        recorded facts without connecting, and keeps them out of the fact cache.
        """
        extra: dict[str, Any] = {}
        if facts_dir is not None:
            if not Path(facts_dir).is_dir():
                raise UsageError(f"facts folder not found: {facts_dir}")
            extra = {"extravars": {"cluster_facts_dir": str(Path(facts_dir).resolve())},
                     "envvars": {"ANSIBLE_CACHE_PLUGIN": "memory"}}
            if self.options.forks is None:
                # No host is reached: every worker is the controller's own CPU work, and workers beyond its
                # cores only take turns with ansible's main process (which hands out every task).
                extra["ansible"] = dataclasses.replace(self.options, forks=recorded_plan_forks())
        run, stats = self._run("playbooks/plan.yml", limit=limit, **extra)
        return self._remember(PlanResult(hosts=stats.get("hvc_plan") or {}, run=run,
                                         job_groups=stats.get("hvc_job_groups") or {}))

    def wheelhouse(self, limit: str | None = None) -> WheelhouseResult:
        """Fill the controller wheelhouse with the wheels these hosts need (pip download, once per
        wheel set; hosts are not changed). `rollout` does the same as its first step after preflight."""
        run, stats = self._run("playbooks/wheelhouse.yml", limit=limit)
        return self._remember(WheelhouseResult(hosts=stats.get("hvc_wheelhouse") or {}, run=run))

    def rollout(
        self,
        limit: str | None = None,
        tags: str | Sequence[str] | None = None,
        skip_tags: str | Sequence[str] | None = None,
        serial: int | str | Sequence[int | str] | None = None,
        max_fail_percentage: int | None = None,
        check: bool = False,
        diff: bool = False,
        playbook: str = "site.yml",
    ) -> RolloutResult:
        """Run site.yml; `serial`/`max_fail_percentage` reach the plays as cluster_serial/cluster_max_fail_percentage."""
        extravars: dict[str, Any] = {}
        if not isinstance(serial, (str, int, type(None))):
            serial = ",".join(map(str, serial))
        if (serial := check_serial(serial)) is not None:
            extravars["cluster_serial"] = serial
        if max_fail_percentage is not None:
            if not 0 <= int(max_fail_percentage) <= 100:
                raise UsageError(f"bad max_fail_percentage {max_fail_percentage!r}: expected 0-100")
            extravars["cluster_max_fail_percentage"] = int(max_fail_percentage)
        with contextlib.nullcontext() if check else inventory_lock(self.runs_dir.name):
            run, stats = self._run(playbook, limit=limit, tags=_join(tags), skip_tags=_join(skip_tags),
                                   extravars=extravars, check=check, diff=diff)
        return self._remember(self._rollout(run, stats))

    def rotate_mesh_key(self, check: bool = False) -> RolloutResult:
        """A new SSH mesh keypair for this cluster, installed on every host, the old one removed from their
        authorized_keys (site.yml's ssh_mesh tasks with ssh_mesh_rotate). A host it does not reach keeps the old
        key until a rollout or `retry_failed` reaches it."""
        with contextlib.nullcontext() if check else inventory_lock(self.runs_dir.name):
            # the fast path would find an unchanged cluster settled and skip the mesh play
            run, stats = self._run("site.yml", tags="ssh_mesh", check=check,
                                   extravars={"ssh_mesh_rotate": True, "cluster_rollout_fast_path": False})
        return self._remember(self._rollout(run, stats))

    def remove_hosts(self, hosts: Sequence[str]) -> RolloutResult:
        """Take the SSH mesh off hosts that leave the cluster (playbooks/leave.yml): their copy of the key, this
        cluster's keys in their authorized_keys, their mesh blocks and records. Then take them out of the inventory
        and `rotate_mesh_key`."""
        unknown = sorted(set(hosts) - set(self.hosts()))
        if not hosts or unknown:
            raise UsageError(f"remove-host takes hosts of the inventory; not there: {', '.join(unknown) or 'none given'}")
        with inventory_lock(self.runs_dir.name):
            run, stats = self._run("playbooks/leave.yml", limit=",".join(hosts))
        return self._remember(self._rollout(run, stats))

    def retry_failed(self) -> RolloutResult:
        """Re-run the last rollout (or retry) on only its failed and unreachable hosts.

        With no such host there is nothing to do: the result is empty and ok.
        """
        run = self.last_rollout or self.load(LAST_ROLLOUT)
        if not isinstance(run, RolloutResult):
            raise UsageError("nothing to retry: no previous run in " + str(self.runs_dir))
        playbook, options = self._retry_options(run)
        hosts = run.failed_hosts
        if not hosts:
            return RolloutResult(playbook=playbook, status="successful", rc=0, artifacts="",
                                 started=0.0, finished=0.0, options=run.options)
        with contextlib.nullcontext() if options.get("check") else inventory_lock(self.runs_dir.name):
            run, stats = self._run(playbook, limit=",".join(hosts), **options)
        return self._remember(self._rollout(run, stats))

    def _retry_options(self, run: RolloutResult) -> tuple[str, dict[str, Any]]:
        """The saved run's playbook and options, as far as a rollout sets them: the saved JSON is a file of the
        artifacts folder, and whoever can write it must not choose a playbook, environment variables or extra
        vars that run with this user's passwords. The playbook must be one of the content folder's."""
        saved = dict(run.options)
        playbook = str(saved.get("playbook", run.playbook))
        path = (self.content_dir / playbook).resolve()
        if Path(playbook).is_absolute() or not path.is_file() or not path.is_relative_to(self.content_dir):
            raise UsageError(f"the saved run's playbook {playbook!r} is not a playbook of the content folder "
                             f"{self.content_dir}: retry runs only those")
        options = {key: saved[key] for key in ("tags", "skip_tags") if isinstance(saved.get(key), str)}
        options.update({key: saved[key] for key in ("check", "diff") if isinstance(saved.get(key), bool)})
        rollout_vars = (saved.get("extravars") or {}) if isinstance(saved.get("extravars"), dict) else {}
        extravars = {}
        if "cluster_serial" in rollout_vars:
            serial = rollout_vars["cluster_serial"]
            extravars["cluster_serial"] = check_serial(",".join(map(str, serial)) if isinstance(serial, list)
                                                       else serial)
        if isinstance(rollout_vars.get("cluster_max_fail_percentage"), int):
            extravars["cluster_max_fail_percentage"] = min(max(rollout_vars["cluster_max_fail_percentage"], 0), 100)
        return playbook, {**options, "extravars": extravars}

    def check(self, smoke: bool = True, bench: bool = False, limit: str | None = None) -> CheckReport:
        """Health, versions and consistency of every host (check.yml publishes `hvc_check`)."""
        run, stats = self._run("playbooks/check.yml", limit=limit,
                               extravars={"cluster_check_smoke": smoke, "cluster_check_bench": bench})
        return self._remember(CheckReport.from_stats(stats.get("hvc_check"), run))

    # -- jobs -------------------------------------------------------------------------------
    def run(self, command: Sequence[str], *, np: int | None = None, controller: str = "gloo",
            copy: Sequence[str | Path] = (), workdir: str | None = None, hostfile: str | Path | None = None,
            env: Mapping[str, str] | Sequence[str] | None = None, limit: str | None = None,
            on_output: OutputCallback | None = None, timeout: float | None = None, elastic: bool = False,
            min_np: int | None = None, max_np: int | None = None, tensors: str = "cpu") -> JobResult:
        """Run a training command on every slot of the cluster with horovodrun, e.g.
        `cluster.run(["python", "train.py"], copy=["train.py"], controller="mpi")`; its exit code
        is the result's `rc`. See `stage` for the arguments; `on_output` gets each output line
        ("[rank]<stdout>:..."; default: print). Ctrl-C stops every process of the job on every host, and
        so does `timeout` (seconds) when the job runs longer (rc 124, as `timeout` gives)."""
        return self.launch(self.stage(command, np=np, controller=controller, copy=copy, workdir=workdir,
                                      hostfile=hostfile, env=env, limit=limit, elastic=elastic, min_np=min_np,
                                      max_np=max_np, tensors=tensors), on_output, timeout)

    def stage(self, command: Sequence[str], *, np: int | None = None, controller: str = "gloo",
              copy: Sequence[str | Path] = (), workdir: str | None = None, hostfile: str | Path | None = None,
              env: Mapping[str, str] | Sequence[str] | None = None, limit: str | None = None,
              elastic: bool = False, min_np: int | None = None, max_np: int | None = None,
              tensors: str = "cpu") -> dict[str, Any]:
        """Check the hosts, then prepare a job (playbooks/run.yml) without starting it: the files of
        `copy` go into the job folder on every host (a new one under ~/.cache/horovod-cluster/jobs,
        or `workdir`, a folder that already exists the same on every host, e.g. a shared one); `np`
        ranks (default: every slot) with `controller` (gloo or mpi). The hosts and slots are the
        rollout's hostfile, or the file `hostfile`, or, inside a Slurm allocation, the allocation's
        nodes and tasks. `env`: variables for every rank ({NAME: VALUE} or "NAME=VALUE" strings,
        e.g. HOROVOD_GLOO_TIMEOUT_SECONDS=120). `elastic`: horovodrun's elastic mode (Gloo), starting with
        `np` ranks and going on with the hosts that answer, between `min_np` (default 1) and `max_np`
        (default every slot) ranks; the script must use hvd.elastic (examples/train_elastic.py). `tensors`: the
        device the script puts its tensors on, cpu or cuda (NCCL on every rank: refused where a host has none).
        Raises JobRefused (nothing started) when a host is not rolled out, the hosts disagree, or Horovod
        lacks the controller; returns the staged job for `launch`."""
        if not command:
            raise JobRefused("no command to run: give one, e.g. horovod-cluster run -- python train.py")
        if not elastic and (min_np is not None or max_np is not None):
            raise JobRefused("min_np and max_np are for elastic jobs (--elastic)")
        if elastic and controller != "gloo":
            raise JobRefused(f"elastic: controller {controller!r}: horovodrun's elastic mode runs with Gloo only")
        try:
            text = Path(hostfile).read_text() if hostfile else allocation_hostfile(os.environ)
        except (OSError, ValueError) as err:
            raise JobRefused(f"no hostfile for the job: {err}") from None
        if text:
            check_hostfile(text, str(hostfile) if hostfile else "the Slurm allocation's hostfile")
        copy, variables = with_mpi_rules(controller, copy, job_env(env))
        request = job_request(new_job_id(), controller, np, workdir, copy, text, tensors, variables)
        run, stats = self._run("playbooks/run.yml", limit=limit, extravars={
            "cluster_check_smoke": False, "cluster_check_bench": False, "cluster_job": request})
        self.last_stage = run
        job = stats.get("hvc_job")
        if not run.ok or not job:
            raise JobRefused(_refusal(run))
        world = job["hostfile_text"]
        if limit and not text:  # the rollout's hostfile names every host; run where the check ran
            world = only_hosts(world, job["hosts"])
        if elastic:
            ranks, grow = elastic_world(world, np, min_np, max_np)
            return {**job, "np": ranks, "elastic": grow, "command": list(command), "env": variables}
        ranks, hosts = placement(world, np)
        return {**job, "np": ranks, "placement": hosts, "command": list(command), "env": variables}

    def launch(self, job: Mapping[str, Any], on_output: OutputCallback | None = None,
               timeout: float | None = None) -> JobResult:
        """Start a staged job on its launcher and stream its output until it ends (or `timeout` seconds)."""
        argv = launch_argv(job, remote_command(job, job["command"]), self.options.user, self.options.private_key)
        elastic = job.get("elastic") or {}
        started, stopped, interrupted, timed_out = time.time(), {}, False, False
        try:
            rc = stream(argv, on_output or print, timeout)
        except (KeyboardInterrupt, JobTimeout) as stop:
            interrupted, timed_out = isinstance(stop, KeyboardInterrupt), isinstance(stop, JobTimeout)
            rc = 130 if interrupted else 124
            with interrupts_ignored():
                stopped = self.stop_job(job["id"], hosts=job["hosts"])
        return JobResult(job_id=job["id"], rc=rc, launcher=job["launcher"], hosts=list(job["hosts"]),
                         controller=job["controller"], np=int(job["np"]), workdir=job["workdir"],
                         command=horovodrun_argv(job, job["command"]),
                         started=started, finished=time.time(), interrupted=interrupted, timed_out=timed_out,
                         stopped=stopped, elastic=bool(elastic), min_np=elastic.get("min_np"),
                         max_np=elastic.get("max_np"))

    def stop_job(self, job_id: str, hosts: Sequence[str] | None = None) -> dict[str, int]:
        """Stop every process of a job on these hosts (default: all); {host: processes stopped}."""
        run, stats = self._run("playbooks/run_stop.yml", limit=",".join(hosts) if hosts else None,
                               extravars={"cluster_job": {"id": job_id}})
        if not run.ok:
            raise RuntimeError(f"could not stop every process of job {job_id}: {_refusal(run)}")
        return {h: int(n) for h, n in (stats.get("hvc_job_stop") or {}).items()}

    # -- saved results ----------------------------------------------------------------------
    def _remember(self, result: Result) -> Result:  # type: ignore[misc]
        """Save the result for `report`/`retry`: in this inventory's runs folder and, as the last
        run of any inventory, in the artifacts folder."""
        self.last = result
        text = result.to_json()
        names = [LAST_RUN] + ([LAST_ROLLOUT] if isinstance(result, RolloutResult) else [])
        for folder in (self.runs_dir, self.artifacts_dir):
            folder.mkdir(parents=True, exist_ok=True)
            for name in names:
                _write(folder / name, text)
        if isinstance(result, RolloutResult):
            self.last_rollout = result
        run = result if isinstance(result, RolloutResult) else result.run
        if run.artifacts and Path(run.artifacts).is_dir():
            (Path(run.artifacts) / "result.json").write_text(text)
        return result

    def load_last(self) -> Result | None:
        """The last result saved for this inventory (by any process), or None."""
        return self.load(LAST_RUN)

    def load(self, name: str) -> Result | None:
        """A saved result of this inventory: LAST_RUN or LAST_ROLLOUT."""
        return load_saved(self.runs_dir, name)


def recorded_plan_forks() -> int:
    """Forks for a plan over recorded facts: the controller's cores (those this process may use) and one
    more, to keep them busy while a worker starts or ends."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


def _refusal(run: RolloutResult) -> str:
    """Why a run failed, one clause per distinct reason with the hosts it applies to."""
    reasons: dict[str, list[str]] = {}
    for name, host in sorted(run.hosts.items()):
        if host.failure is not None:
            reasons.setdefault(host.failure.message, []).append(name)
    text = "; ".join(f"{', '.join(hosts)}: {message}" for message, hosts in reasons.items())
    return text or run.error or f"{run.playbook} ended {run.status}"


def _hosts(inventory: dict[str, Any]) -> list[str]:
    """The hosts of an `ansible-inventory --list` answer."""
    grouped = {h for k, g in inventory.items() if k != "_meta" for h in g.get("hosts", [])}
    return sorted(inventory.get("_meta", {}).get("hostvars", {}).keys() | grouped)


def _write(path: Path, text: str) -> None:
    """Replace a file whole (a concurrent reader never sees half of it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


def _join(value: str | Sequence[str] | None) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    return ",".join(value) or None


__all__ = ["Cluster", "InventoryError", "JobRefused", "JobResult", "UsageError", "check_extra_vars", "check_serial"]
