"""A training job on the rolled-out cluster (`Cluster.run`, `horovod-cluster run`).

Staging is Ansible's (playbooks/run.yml: check, job folder, files, the launcher's connection as
data); launching is one `ssh` to the launcher that runs horovodrun in the job folder with the
rollout's hostfile and environment, so every rank's output streams back line by line. Every
process of the job carries HVC_JOB_ID=<id> in its environment (horovodrun hands its environment
to the ranks), which is how playbooks/run_stop.yml finds them all on Ctrl-C.
"""
from __future__ import annotations

import base64
import contextlib
import json
import re
import secrets
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .content import filter_plugin
from .results import SCHEMA_VERSION

OutputCallback = Callable[[str], None]
CONTROLLERS = ("gloo", "mpi")
# The device a job's script puts its tensors on: cuda needs NCCL on every rank (playbooks/run.yml refuses it else).
TENSORS = ("cpu", "cuda")
# The job's variables (run --env) in the job folder on every host, 0600; each rank reads it (remote_command).
ENV_FILE = ".hvc-job-env"
# Open MPI's allreduce algorithms for the cluster's MPI jobs (the file says which and why), copied into the job
# folder, where every rank runs: each rank's Open MPI reads the same rules, so all ranks pick the same algorithm.
MPI_RULES = Path(__file__).with_name("openmpi-allreduce-rules.conf")
MPI_RULES_ENV = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                 "OMPI_MCA_coll_tuned_dynamic_rules_filename": MPI_RULES.name}
# Each rank's compute threads where the job's variables set none: the host's processors shared among its ranks
# (horovodrun's HOROVOD_LOCAL_SIZE, mpirun's OMPI_COMM_WORLD_LOCAL_SIZE), as torchrun sets OMP_NUM_THREADS=1 for
# several processes a node. torch's default, a thread per processor in every rank, oversubscribes a host that runs
# several ranks: training 2.1-2.5x slower with 2 ranks a host on the sandbox (docs/benchmarks.md, P7).
RANK_THREADS = ('[ -n "${OMP_NUM_THREADS:-}" ] || { OMP_NUM_THREADS=$(( $(getconf _NPROCESSORS_ONLN) / '
                '${HOROVOD_LOCAL_SIZE:-${OMPI_COMM_WORLD_LOCAL_SIZE:-1}} )); '
                '[ "$OMP_NUM_THREADS" -ge 1 ] || OMP_NUM_THREADS=1; export OMP_NUM_THREADS; }')
# Open MPI's --tag-output prefix "[jobid,rank]<stdout>:" is shown as Gloo's "[rank]<stdout>:".
_MPI_TAG = re.compile(r"(\[\d+,(\d+)\]<(stdout|stderr)>:)")
# The first failed rank, as horovodrun (Gloo) and mpirun report it: "Exit code: 3".
_EXIT_CODE = re.compile(r"^\s*Exit code:\s*(-?\d+)\s*$")
_SSH_TYPES = ("ssh", "smart", "paramiko", "paramiko_ssh", "ansible.builtin.ssh", "ansible.builtin.paramiko_ssh")
_LOCAL_TYPES = ("local", "ansible.builtin.local")
_ENV_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")  # \Z: `$` would accept a trailing newline
# A host name or address, as ssh_mesh's __ssh_mesh_name_re (tests/unit/test_job.py holds them equal).
HOST_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*\Z")


class JobRefused(RuntimeError):
    """The job did not start: a host is not rolled out, the hosts disagree, a bad argument...
    Nothing was launched (the message says why)."""


@dataclass
class JobResult:
    """How a job ended. `rc` is horovodrun's exit code (130 after an interrupt, 124 after its timeout)."""

    job_id: str
    rc: int
    launcher: str
    hosts: list[str]
    controller: str
    np: int
    workdir: str
    command: list[str]  # horovodrun's argv on the launcher
    started: float
    finished: float
    interrupted: bool = False
    timed_out: bool = False  # stopped when the run's timeout came
    stopped: dict[str, int] = field(default_factory=dict)  # host -> processes stopped after an interrupt or timeout
    elastic: bool = False  # ranks came and went between min_np and max_np (np: the ranks it started with)
    min_np: int | None = None
    max_np: int | None = None

    @property
    def ok(self) -> bool:
        return self.rc == 0

    @property
    def duration(self) -> float:
        return self.finished - self.started

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps({"schema_version": SCHEMA_VERSION, "kind": "job", **asdict(self)}, indent=indent)


def new_job_id() -> str:
    """A job id that sorts by time and never repeats: 20261124-010203-1a2b3c4d."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(4)


def job_env(env: Mapping[str, str] | Sequence[str] | None) -> dict[str, str]:
    """Variables for every rank: a mapping, or "NAME=VALUE" strings (the CLI's --env)."""
    if env is None:
        return {}
    pairs = env.items() if isinstance(env, Mapping) else [item.partition("=")[::2] for item in env]
    bad = [name for name, _ in pairs if not _ENV_NAME.match(name)]
    if bad:
        raise JobRefused(f"env: {', '.join(map(repr, bad))} is not a variable name (NAME=VALUE, "
                         "NAME of letters, digits and _)")
    return {name: str(value) for name, value in pairs}


def with_mpi_rules(controller: str, copy: Sequence[str | Path],
                   env: Mapping[str, str]) -> tuple[list[str | Path], dict[str, str]]:
    """A job's copy and env, with MPI_RULES for an MPI job unless env sets Open MPI's coll/tuned variables itself."""
    if controller != "mpi" or any(name.startswith("OMPI_MCA_coll_tuned_") for name in env):
        return list(copy), dict(env)
    return [*copy, MPI_RULES], {**MPI_RULES_ENV, **env}


def job_request(job_id: str, controller: str, np: int | None, workdir: str | None,
                copy: Sequence[str | Path], hostfile: str | None, tensors: str = "cpu",
                env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The `cluster_job` extra var of playbooks/run.yml, after the checks a caller can act on. `env` (job_env's):
    the ranks' variables, which run.yml writes into the job folder (ENV_FILE) for each rank to read."""
    if controller not in CONTROLLERS:
        raise JobRefused(f"controller {controller!r}: expected one of {', '.join(CONTROLLERS)}")
    if tensors not in TENSORS:
        raise JobRefused(f"tensors {tensors!r}: expected one of {', '.join(TENSORS)}")
    if np is not None and int(np) < 1:
        raise JobRefused(f"np {np!r}: expected a positive number of ranks")
    if controller == "mpi" and (env or {}).get("HOROVOD_CPU_OPERATIONS", "").strip().lower() == "gloo":
        # Horovod (0.28.1, master) sets no Gloo context in its process sets under mpirun: signal 11 in Gloo's
        # allreduce at the first tensor (docs/benchmarks.md, P5).
        raise JobRefused("env HOROVOD_CPU_OPERATIONS=gloo with controller 'mpi': Horovod's Gloo operations need "
                         "controller 'gloo' (under mpirun they crash at the first allreduce); expected "
                         "HOROVOD_CPU_OPERATIONS=mpi, or controller 'gloo'")
    missing = [str(p) for p in copy if not Path(p).exists()]
    if missing:
        raise JobRefused(f"copy: no such file or folder on this machine: {', '.join(missing)}")
    return {"id": job_id, "controller": controller, "tensors": tensors, "workdir": workdir or "",
            "copy": [str(Path(p).resolve()) for p in copy], "hostfile": hostfile or "",
            # base64: Ansible would read a value's "{{" as a template
            "env": {name: base64.b64encode(value.encode()).decode() for name, value in (env or {}).items()}}


def hostfile_slots(text: str) -> list[tuple[str, int]]:
    """(host, slots) of each line of a hostfile, read as the check reads it (plugins/filter/hvc_hostfile.py)."""
    return [(host, slots) for host, slots in filter_plugin("hvc_hostfile").hostfile_slots(text)]


def check_hostfile(text: str, source: str) -> None:
    """Refuse a job hostfile (--hostfile, a Slurm allocation's) whose line is not `host [slots=N]`, with the
    host a name or address and N positive: its names reach horovodrun's ssh command lines."""
    reading = filter_plugin("hvc_hostfile")
    for number, line in enumerate(text.splitlines(), 1):
        entry = reading.hostfile_line(line)
        if not entry:
            continue
        host, rest = entry
        if not HOST_NAME.match(host):
            why = f"{host!r} is not a host name or address (letters, digits and . _ : -, a letter or digit first)"
        elif not reading.line_slots(rest):
            why = f"{rest!r}: expected slots=N, N a positive whole number"
        else:
            continue
        raise JobRefused(f"{source} line {number}: {why}")


def only_hosts(text: str, hosts: Sequence[str]) -> str:
    """The hostfile lines of these hosts (a --limit's): ranks run only where the check ran."""
    kept = [line for line in text.splitlines() if any(name in hosts for name, _ in hostfile_slots(line))]
    return "".join(f"{line}\n" for line in kept)


def job_world(text: str) -> list[tuple[str, int]]:
    """The hostfile's (host, slots), refused when it names no host."""
    world = hostfile_slots(text)
    if not world:
        raise JobRefused("the job's hostfile names none of the job's hosts (with --limit: the hostfile's names "
                         "must be the inventory's; or give --hostfile)")
    return world


def placement(text: str, np: int | None) -> tuple[int, str]:
    """(ranks, horovodrun -H value) placing `np` ranks (None: every slot) on the hostfile's slots in
    order. horovodrun's Gloo launcher takes -np as a minimum and starts a rank on every slot of
    --hostfile (Horovod 0.28.1, measured), so the job gets only the slots it asked for."""
    world = job_world(text)
    total = sum(slots for _, slots in world)
    want = total if np is None else int(np)
    if want > total:
        raise JobRefused(f"np {want}: the hostfile has {total} slots ({text.strip() or 'empty'})")
    hosts, left = [], want
    for host, slots in world:
        if left > 0:
            hosts.append(f"{host}:{min(slots, left)}")
            left -= min(slots, left)
    return want, ",".join(hosts)


def elastic_world(text: str, np: int | None, min_np: int | None, max_np: int | None) -> tuple[int, dict[str, Any]]:
    """(ranks to start with, the elastic part of the job) for an elastic job over the hostfile's hosts: at
    least `min_np` ranks (default 1) and at most `max_np` (default every slot); the discovery script lists
    the hosts, of these, that answer."""
    world = job_world(text)
    colons = [host for host, _ in world if ":" in host]
    if colons:
        raise JobRefused(f"elastic: {', '.join(colons)}: horovodrun reads its discovered hosts as host:slots, "
                         "so a host with ':' (an IPv6 address) cannot be one; list it by name")
    total = sum(slots for _, slots in world)
    top = total if max_np is None else int(max_np)
    low = 1 if min_np is None else int(min_np)
    start = top if np is None else int(np)
    if top > total:
        raise JobRefused(f"max_np {top}: the hostfile has {total} slots ({text.strip()})")
    if not 1 <= low <= start <= top:
        raise JobRefused(f"elastic: expected 1 <= min_np <= np <= max_np, got min_np {low}, np {start}, "
                         f"max_np {top}")
    return start, {"min_np": low, "max_np": top, "hosts": [f"{host}:{slots}" for host, slots in world]}


# A host whose ranks failed is left out for 20-30 s, then twice as long after each new failure, up to 5 min
# (Horovod's default leaves it out for good: a Pi plugged back in would never rejoin).
ELASTIC_COOLDOWN = ("10", "300")


def horovodrun_argv(job: Mapping[str, Any], command: Sequence[str]) -> list[str]:
    """horovodrun's command line on the launcher, for the staged job (`hvc_job` of run.yml)."""
    elastic = job.get("elastic")
    if not elastic:
        # the Open MPI Horovod was built against, started on every host (its daemons, its libraries)
        prefix = [f"--mpi-args=--prefix {job['mpi_prefix']}"] if job["controller"] == "mpi" and job.get("mpi_prefix") \
            else []
        return [job["horovodrun"], f"--{job['controller']}", "-np", str(job["np"]), "-H", job["placement"], *prefix,
                *command]
    # horovodrun runs the discovery script through a shell, every second
    discover = [job["discover_hosts"], "--state", f"{job['workdir']}/.discover-hosts.json", *elastic["hosts"]]
    return [job["horovodrun"], "--gloo", "-np", str(job["np"]), "--min-np", str(elastic["min_np"]),
            "--max-np", str(elastic["max_np"]), "--host-discovery-script", " ".join(map(shlex.quote, discover)),
            "--blacklist-cooldown-range", *ELASTIC_COOLDOWN, *command]


def mpi_bin(job: Mapping[str, Any]) -> list[str]:
    """The bin folder of the Open MPI Horovod was built against, where it is not the system's."""
    return [f"{job['mpi_prefix']}/bin"] if job.get("mpi_prefix") else []


def remote_command(job: Mapping[str, Any], command: Sequence[str]) -> str:
    """The shell line the launcher runs: in the job folder, with ssh_mesh's ssh that keeps host key checking
    on (horovodrun's Gloo launcher turns it off) and then the environment's bin first on PATH (so `python` is
    the environment's), then the bin of the Open MPI Horovod was built against (its mpirun), unbuffered output (the
    horovod role's hvc-rank-output.pth makes a Python rank's line-buffered where HVC_JOB_ID is set) and the job
    marker; each value quoted. horovodrun hands them to every rank. The user's variables are not among them:
    horovodrun's Gloo launcher puts its whole environment on each rank's ssh command line, which `ps` shows on every
    host; each rank reads them from the job folder's ENV_FILE (0600, written by run.yml) before the command, and
    takes its share of its host's processors (RANK_THREADS) unless they set OMP_NUM_THREADS."""
    env = {"PYTHONUNBUFFERED": "1",
           # Open MPI refuses root unless told; the sandbox and many labs run as root.
           "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "HVC_JOB_ID": job["id"]}
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    # Each rank: the job's variables from ENV_FILE (if any), then its share of the host's processors.
    source = ('. "$0" && ', f"{job['workdir']}/{ENV_FILE}") if job.get("env") else ("", "hvc-rank")
    command = ["/bin/sh", "-c", f'{source[0]}{RANK_THREADS} && exec "$@"', source[1], *command]
    argv = " ".join(shlex.quote(a) for a in horovodrun_argv(job, command))
    path = ":".join(shlex.quote(d) for d in (job["ssh_dir"], job["bin"], *mpi_bin(job)))
    return (f"cd {shlex.quote(job['workdir'])} && PATH={path}:\"$PATH\" "
            f"exec env {assignments} {argv}")


def launch_argv(job: Mapping[str, Any], remote: str, user: str | None = None,
                private_key: str | Path | None = None) -> list[str]:
    """How this machine starts `remote` on the launcher: `ssh` with the launcher's connection
    variables as Ansible resolved them (user and key fall back to -u/--private-key), or a local
    shell when the launcher is this machine (ansible_connection=local)."""
    conn = job["connection"]
    kind = conn.get("type") or "ssh"
    if kind in _LOCAL_TYPES:
        return ["/bin/sh", "-c", remote]
    if kind not in _SSH_TYPES:
        raise JobRefused(f"the launcher {job['launcher']} is reached with ansible_connection={kind}; "
                         "run starts horovodrun over ssh or locally (ansible_connection=ssh or local)")
    argv = ["ssh", "-o", "BatchMode=yes"]
    if conn.get("port"):
        argv += ["-p", str(conn["port"])]
    key = conn.get("private_key") or private_key
    if key:
        argv += ["-i", str(key)]
    login = conn.get("user") or user
    if login:
        argv += ["-l", str(login)]
    argv += shlex.split(conn.get("ssh_args") or "")
    # After the inventory's own options (ssh keeps the first value): a launcher that stops answering ends the
    # job's ssh within 2 minutes, instead of run waiting on a dead connection forever.
    argv += ["-o", "ServerAliveInterval=30", "-o", "ServerAliveCountMax=4"]
    return [*argv, "--", str(conn["host"]), remote]


class RankLines:
    """Whole output lines, each with its rank as "[3]<stdout>:", from horovodrun's output.

    Gloo prefixes each line itself. Open MPI tags each chunk a rank writes, so an unbuffered
    print ("text", then "\\n") arrives as "[1,0]<stdout>:text[1,1]<stdout>:...[1,0]<stdout>:\\n",
    chunks of several ranks on one line: each chunk is kept with its rank until its newline.
    Also remembers the exit code of the first failed rank that horovodrun or mpirun reports.
    """

    def __init__(self) -> None:
        self.partial: dict[tuple[str, str], str] = {}
        self.rank_exit: int | None = None

    def feed(self, line: str) -> list[str]:
        """One line read from horovodrun (without its newline) -> the complete lines it ends."""
        head, *rest = _MPI_TAG.split(line)  # head, then (tag, rank, stream, text) per chunk
        chunks = [(rest[i + 1], rest[i + 2], rest[i + 3]) for i in range(0, len(rest), 4)]
        out = [head] if head or not chunks else []  # an untagged line: horovodrun's or mpirun's own
        for n, (rank, stream, text) in enumerate(chunks):
            key = (rank, stream)
            self.partial[key] = self.partial.get(key, "") + text
            if n == len(chunks) - 1:  # the line's newline ends the last chunk
                out.append(f"[{rank}]<{stream}>:{self.partial.pop(key)}")
        for text in out:
            found = _EXIT_CODE.match(text)
            if found and self.rank_exit is None:
                self.rank_exit = int(found.group(1))
        return out

    def flush(self) -> list[str]:
        """Chunks still waiting for a newline when the output ends."""
        rest = [f"[{rank}]<{stream}>:{text}" for (rank, stream), text in self.partial.items() if text]
        self.partial.clear()
        return rest

    def exit_code(self, rc: int) -> int:
        """horovodrun's exit code, except that its 1 ("one or more processes exited with non-zero
        status", Gloo) becomes the failed rank's own code (a signal -N: 128+N, as a shell says)."""
        if rc != 1 or not self.rank_exit:
            return rc
        return 128 - self.rank_exit if self.rank_exit < 0 else self.rank_exit


# How a job is stopped: Ctrl-C, a CI runner's cancel, a closed terminal.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def interrupts_ignored() -> Iterator[None]:
    """Ignore Ctrl-C (and SIGTERM, SIGHUP) while the job is being stopped: a second one must not leave ranks
    running."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class JobTimeout(Exception):
    """The job ran longer than its timeout (raised by `stream` once the launch process has ended)."""


def stream(argv: Sequence[str], on_output: OutputCallback, timeout: float | None = None) -> int:
    """Run horovodrun's `argv`, hand each rank's output line (stdout and stderr) to `on_output`, return
    the job's exit code (RankLines.exit_code). On KeyboardInterrupt the process is ended (SIGTERM,
    then SIGKILL) before the interrupt goes on; after `timeout` seconds it is ended and JobTimeout raised."""
    # Its own session: a Ctrl-C in the terminal reaches this process only, which stops the job in order.
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1,
                            start_new_session=True)
    lines = RankLines()
    expired = threading.Event()
    timer = threading.Timer(timeout, lambda: (expired.set(), proc.terminate())) if timeout else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            for line in lines.feed(raw.rstrip("\n")):
                on_output(line)
        for line in lines.flush():
            on_output(line)
        rc = proc.wait()
        if expired.is_set():
            raise JobTimeout(f"the job ran longer than its timeout of {timeout:g} s")
        return lines.exit_code(rc)
    except BaseException:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    finally:
        if timer:
            timer.cancel()


__all__ = ["JobRefused", "JobResult", "CONTROLLERS"]
