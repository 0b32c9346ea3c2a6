"""The `horovod-cluster` command. Exit codes: 0 ok, 1 a host or check failed, 2 usage error
(`run`: the job's own exit code, 2 when it did not start, 130 after Ctrl-C)."""
from __future__ import annotations

import contextlib
import dataclasses
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from .cluster import (LAST_ROLLOUT, LAST_RUN, Cluster, UsageError, check_extra_vars, check_serial,
                      default_artifacts_dir, load_saved, read_saved)
from .content import content_dir
from .job import CONTROLLERS, STOP_SIGNALS, TENSORS, JobRefused
from .ansible.options import AnsibleOptions, keyword
from .ansible.runner import DEFAULT_KEEP, InventoryBusy, InventoryError
from .results import CheckReport, Result, RolloutResult
from .views.html import check_html
from .views.junit import junit
from .views.progress import LiveProgress, PlainProgress, TaskCounts
from .views.render import render

LOG_WIDTH = 1000  # outside a terminal: wide enough that no table cell or message is cut


def _console(stderr: bool = True) -> Console:
    """rich on a terminal; in a log (CI, a pipe) a fixed wide width instead of 80 columns."""
    console = Console(stderr=stderr)
    return console if console.is_terminal else Console(stderr=stderr, width=LOG_WIDTH)


console = _console()  # messages and progress; set again per command, once the streams are known


class _Group(click.Group):
    """Lists each command with its first sentence whole (click cut it to the terminal's width with "...")."""

    group_class = type  # `sandbox` lists its commands the same way

    def invoke(self, ctx: click.Context):
        """An OSError (a full disk, permission denied) is one line naming the file, exit 2, not a traceback."""
        try:
            return super().invoke(ctx)
        except OSError as err:
            if isinstance(err, BrokenPipeError):  # stdout closed early (| head): nothing left to tell
                raise
            names = " -> ".join(str(name) for name in (err.filename, err.filename2) if name is not None)
            raise InputError(f"{names}: {err.strerror or err}" if names else str(err)) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        rows = [(name, cmd.get_short_help_str(limit=10_000)) for name, cmd in commands if cmd and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="horovod-cluster")
def main() -> None:
    """Provision and check a Horovod cluster across Ubuntu, macOS and Raspberry Pi OS hosts."""
    global console
    console = _console()


@main.group()
def sandbox() -> None:
    """A local cluster of real Debian hosts (podman containers reached over SSH)."""


def _sandbox(status=None):
    """The development sandbox, imported only by its commands (the product never loads it). With a
    status: on a terminal a live status line shows every build line; in CI logs, one line per step."""
    from .sandbox import Sandbox
    if status is None:
        return Sandbox()
    if console.is_terminal:
        def show(line: str) -> None:
            status.update(f"[bold]sandbox[/] {line[:110]}")
        return Sandbox(progress=show, output=show)
    return Sandbox(progress=lambda line: console.print(f"sandbox: {line}"))


def _hosts_table(hosts) -> Table:
    table = Table("host", "arch", "Debian", "state", "address")
    for host in hosts:
        table.add_row(host.name, host.arch, host.release, host.state, host.address or "-")
    return table


@sandbox.command("up")
@click.option("--hosts", "count", default=3, show_default=True, type=click.IntRange(0, 16),
              help="amd64 hosts (Debian 12)")
@click.option("--arm64", default=0, show_default=True, type=click.IntRange(0, 4),
              help="arm64 hosts, the Raspberry Pi OS stand-in (built under qemu on demand)")
@click.option("--debian13", default=0, show_default=True, type=click.IntRange(0, 16),
              help="amd64 hosts with Debian 13 (also in the inventory group debian13)")
@click.option("--debian13-arm64", default=0, show_default=True, type=click.IntRange(0, 4),
              help="arm64 hosts with Debian 13, the Raspberry Pi OS 13 stand-in (in pis and debian13)")
def sandbox_up(count: int, arm64: int, debian13: int, debian13_arm64: int) -> None:
    """Build the images if missing, start the hosts, write inventories/sandbox."""
    from .sandbox import SandboxError
    with console.status("sandbox up") as status:
        box = _sandbox(status)
        try:
            hosts = box.up(count=count, arm64=arm64, debian13=debian13, debian13_arm64=debian13_arm64)
        except SandboxError as err:
            raise click.ClickException(str(err)) from None
    console.print(_hosts_table(hosts))
    console.print(f"inventory: {box.inventory_dir}")


@sandbox.command("build")
@click.option("--arch", "arches", multiple=True, default=["amd64"], show_default=True,
              type=click.Choice(["amd64", "arm64"]))
@click.option("--debian", "release", default="12", show_default=True, type=click.Choice(["12", "13"]),
              help="the Debian release of the images")
def sandbox_build(arches, release: str) -> None:
    """Build the sandbox images only (molecule scenarios use them)."""
    from .sandbox import SandboxError
    with console.status("building images") as status:
        box = _sandbox(status)
        try:
            box.check_tools()
            box.configure_podman()
            built = box.build_images(list(arches), release=release)
        except SandboxError as err:
            raise click.ClickException(str(err)) from None
    console.print("built: " + (", ".join(built) or "nothing (images present)"))


@sandbox.command("status")
def sandbox_status() -> None:
    """List the sandbox hosts and their addresses."""
    hosts = _sandbox().status()
    if not hosts:
        console.print("no sandbox hosts")
        return
    _console(stderr=False).print(_hosts_table(hosts))


@sandbox.command("down")
@click.option("--images", is_flag=True, help="also remove the built images")
def sandbox_down(images: bool) -> None:
    """Remove the hosts and the network (images stay cached unless --images)."""
    removed = _sandbox().down(images=images)
    console.print(f"removed: {', '.join(removed) or 'nothing'}")


# -- plan / rollout / retry / check / report ---------------------------------------------------
class InputError(click.ClickException):
    """Bad inventory or arguments: exit 2 with the message, no traceback."""

    exit_code = 2


def _serial(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse a bad --serial as a usage error (exit 2) before anything runs."""
    try:
        check_serial(value)
        return value
    except UsageError as err:
        raise click.BadParameter(str(err)) from None


def _extra_vars(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Refuse a -e that ansible-playbook would refuse (usage error, exit 2) before anything runs."""
    try:
        return tuple(check_extra_vars(value) for value in values)
    except UsageError as err:
        raise click.BadParameter(str(err)) from None


def _options(*options):
    """A decorator adding these click options to a command, in this order."""
    def decorate(func):
        for option in reversed(options):
            func = option(func)
        return func
    return decorate


_OUTPUT = click.Path(dir_okay=False, allow_dash=True, path_type=Path)

# click's own argument for each option of ansible/options.py that takes more than plain text
_CLICK = {"extra_vars": {"callback": _extra_vars}, "forks": {"type": click.IntRange(1)},
          "private_key": {"type": click.Path(dir_okay=False, path_type=Path)},
          "vault_password_files": {"type": click.Path(path_type=Path)}}


def _ansible_option(option: dataclasses.Field):
    """One ansible-playbook option as its table says; the click parameter is named after the field."""
    cli = dict(option.metadata["cli"])
    if option.metadata["asks"]:
        cli["is_flag"] = True  # the command line asks for the password itself (see _cluster)
    return click.option(*option.metadata["flags"], option.name, help=option.metadata["help"], **cli,
                        **_CLICK.get(option.name, {}))


# ansible-playbook's options every cluster command takes, with its names and meaning.
_ANSIBLE_OPTIONS = (
    click.option("-i", "--inventory", "inventory", multiple=True, type=click.Path(path_type=Path),
                 help="inventory file or folder (repeatable) [default: the content's inventories/sandbox]"),
    *(_ansible_option(option) for option in dataclasses.fields(AnsibleOptions)),
)
_ARTIFACT_OPTIONS = (
    click.option("--artifacts-dir", type=click.Path(file_okay=False, path_type=Path),
                 envvar="HOROVOD_CLUSTER_ARTIFACTS",
                 help="where runs keep their artifacts [default: ~/.cache/horovod-cluster/runs]"),
    click.option("--keep", "keep_runs", default=DEFAULT_KEEP, show_default=True, type=click.IntRange(1),
                 help="artifact folders of past runs to keep, per inventory"),
)
_JSON_OPTION = click.option("--json", "json_file", type=_OUTPUT,
                            help="write the result as JSON to this file (- for stdout)")
run_options = _options(
    *_ANSIBLE_OPTIONS, _JSON_OPTION,
    click.option("--junit", "junit_file", type=_OUTPUT,
                 help="write the result as JUnit XML to this file (- for stdout)"),
    *_ARTIFACT_OPTIONS,
)
job_options = _options(*_ANSIBLE_OPTIONS, _JSON_OPTION, *_ARTIFACT_OPTIONS)

# Options of the commands that run one playbook over a choice of hosts.
play_options = _options(
    click.option("-l", "--limit", help="only these hosts/groups (any ansible pattern)"),
    click.option("--list-hosts", is_flag=True, help="list the hosts each play would run on, run nothing"),
    click.option("--list-tags", is_flag=True, help="list the tags of the plays, run nothing"),
    click.option("--list-tasks", is_flag=True, help="list the tasks of the plays, run nothing"),
)

rollout_options = _options(
    click.option("-t", "--tags", multiple=True, help="only tasks with these tags (comma separated, repeatable)"),
    click.option("--skip-tags", multiple=True, help="skip tasks with these tags (comma separated, repeatable)"),
    click.option("--serial", callback=_serial, help="hosts per batch: a number or a percentage"),
    click.option("--max-fail-percentage", type=click.IntRange(0, 100),
                 help="stop a play when more than this percentage of a batch failed"),
    click.option("-C", "--check", "check_mode", is_flag=True, help="dry run (ansible --check)"),
    click.option("-D", "--diff", is_flag=True, help="show file differences (ansible --diff)"),
)


def _artifacts_dir(opts: dict) -> Path:
    return Path(opts["artifacts_dir"]) if opts.get("artifacts_dir") else default_artifacts_dir()


def _cluster(opts: dict) -> Cluster:
    """The cluster of -i (or the sandbox's), with ansible-playbook's options; asks for passwords."""
    inventory = list(opts.get("inventory") or []) or [content_dir() / "inventories" / "sandbox"]
    ansible = {}
    for option in dataclasses.fields(AnsibleOptions):
        value = opts.get(option.name)
        if option.metadata["asks"]:  # -K, --ask-vault-pass: asked here, the answer goes on
            value = click.prompt(option.metadata["asks"], hide_input=True, err=True) if value else None
        if option.name in opts:
            ansible[keyword(option)] = value
    return Cluster(inventory, artifacts_dir=opts.get("artifacts_dir"), keep_runs=opts.get("keep_runs", DEFAULT_KEEP),
                   **ansible)


@contextlib.contextmanager
def _progress(cluster: Cluster, playbook: str, opts: dict) -> Iterator[TaskCounts]:
    """Per-host progress of a run: live on a terminal, plain lines in a log."""
    counts = TaskCounts(cluster.runs_dir / "task-counts.json")
    echo = opts.get("verbosity", 0) > 0
    progress = LiveProgress(console, playbook, counts, echo) if console.is_terminal else PlainProgress(console, echo)
    with progress:
        cluster.on_event = progress
        try:
            yield counts
        finally:
            cluster.on_event = None


_OUTPUT_NAMES = {"json_file": "--json", "junit_file": "--junit", "html_file": "--html"}


def _one_document_per_stream(opts: dict) -> None:
    """Two documents on stdout would be neither: at most one output may be `-` (a usage error, before any run)."""
    dashes = [name for key, name in _OUTPUT_NAMES.items() if str(opts.get(key)) == "-"]
    if len(dashes) > 1:
        raise click.UsageError(f"{' and '.join(f'{name} -' for name in dashes)}: one document per stream, "
                               "so only one output may go to stdout (-); write the others to files")


def _drive(opts: dict, playbook: str, action: Callable[[Cluster], Result], cluster: Cluster | None = None,
           **listing_args) -> None:
    """Run one action with progress (live on a terminal, plain lines in a log), render it, write
    the files, exit 0 or 1. With --list-hosts/--list-tags/--list-tasks print ansible's listing instead."""
    _one_document_per_stream(opts)
    try:
        cluster = cluster or _cluster(opts)
        cluster.inventory_data()  # a broken inventory fails here, before any progress display
        listing = [what for what in ("hosts", "tags", "tasks") if opts.get(f"list_{what}")]
        if listing:
            rc, text = cluster.listing(playbook, *listing, **listing_args)
            click.echo(text)
            sys.exit(0 if rc == 0 else 1)
        with _progress(cluster, playbook, opts) as counts:
            result = action(cluster)
    except (InventoryError, InventoryBusy, UsageError) as err:
        raise InputError(str(err)) from None
    counts.learn(result if isinstance(result, RolloutResult) else result.run)
    _finish(result, opts)


def _finish(result: Result, opts: dict) -> None:
    """The summary, then --json/--junit/--html; with `-` for any, the summary goes to stderr."""
    outputs = [(opts.get("json_file"), result.to_json), (opts.get("junit_file"), lambda: junit(result))]
    if isinstance(result, CheckReport):
        outputs.append((opts.get("html_file"), lambda: check_html(result)))
    render(result, _console(stderr=any(str(path) == "-" for path, _ in outputs)))
    for path, text in outputs:
        if path is not None and str(path) == "-":
            click.echo(text(), nl=False)
        elif path:
            Path(path).write_text(text())
            console.print(f"wrote {path}")
    sys.exit(0 if result.ok else 1)


@main.command()
@click.option("--facts-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="plan over recorded facts (<host>.json from playbooks/record_facts.yml), no connection; "
                   "forks default to the cores + 1")
@play_options
@run_options
def plan(limit: str | None, facts_dir: Path | None, **opts) -> None:
    """What each role will do on each host, and by which method (changes nothing)."""
    _drive(opts, "playbooks/plan.yml", lambda c: c.plan(limit=limit, facts_dir=facts_dir), limit=limit)


@main.command()
@play_options
@run_options
def wheelhouse(limit: str | None, **opts) -> None:
    """Fill the controller wheelhouse with the framework wheels each host needs, then list it.

    pip download runs on this machine with its own pip configuration; hosts are not changed.
    The wheelhouse is ~/.cache/horovod-cluster/wheelhouse (python_env_wheelhouse)."""
    _drive(opts, "playbooks/wheelhouse.yml", lambda c: c.wheelhouse(limit=limit), limit=limit)


@main.command()
@rollout_options
@play_options
@run_options
def rollout(limit, tags, skip_tags, serial, max_fail_percentage, check_mode, diff, **opts) -> None:
    """Provision the cluster (site.yml) with per-host progress and a summary.

    Takes ansible-playbook's options with their meaning (-i -l -t --skip-tags -C -D -e -f -u -b -K
    --private-key --vault-password-file --ask-vault-pass --list-hosts --list-tags -v)."""
    _drive(opts, "site.yml", lambda c: c.rollout(
        limit=limit, tags=tags, skip_tags=skip_tags, serial=serial,
        max_fail_percentage=max_fail_percentage, check=check_mode, diff=diff),
        limit=limit, tags=tags, skip_tags=skip_tags)


@main.command()
@run_options
def retry(**opts) -> None:
    """Re-run the last rollout on only the hosts that failed or were unreachable.

    With -i: the last rollout on that inventory; without: the last rollout on any."""
    _one_document_per_stream(opts)
    try:
        if not opts["inventory"]:
            last = load_saved(_artifacts_dir(opts), LAST_ROLLOUT)
            if isinstance(last, RolloutResult):
                opts["inventory"] = [Path(p) for p in last.options.get("inventory", [])]  # the same cluster
        cluster = _cluster(opts)
        last = cluster.load(LAST_ROLLOUT)
    except UsageError as err:
        raise InputError(str(err)) from None
    if isinstance(last, RolloutResult) and not last.failed_hosts:
        console.print("nothing to retry: the last rollout had no failed or unreachable host")
    _drive(opts, last.playbook if last else "site.yml", lambda c: c.retry_failed(), cluster=cluster)


@main.command("rotate-key")
@click.option("-C", "--check", "check_mode", is_flag=True, help="dry run (ansible --check)")
@run_options
def rotate_key(check_mode, **opts) -> None:
    """Replace the cluster's SSH mesh key: a new keypair on every host, the old one out of their authorized_keys.

    Run it when a host is lost or leaves the cluster (its disk holds the key). A host it does not reach keeps
    the old key until `retry` or a rollout reaches it."""
    _drive(opts, "site.yml", lambda c: c.rotate_mesh_key(check=check_mode), tags="ssh_mesh")


@main.command("remove-host")
@click.argument("hosts", nargs=-1, required=True)
@run_options
def remove_host(hosts, **opts) -> None:
    """Take the SSH mesh off HOSTS that leave the cluster: their copy of the key, the cluster's keys in their
    authorized_keys, their mesh blocks and records. Then take them out of the inventory and run rotate-key."""
    _drive(opts, "playbooks/leave.yml", lambda c: c.remove_hosts(hosts), limit=",".join(hosts))


@main.command()
@click.option("--smoke/--no-smoke", default=True, show_default=True, help="run the cross-host smoke test")
@click.option("--bench", is_flag=True, help="also measure allreduce and link bandwidth")
@click.option("--html", "html_file", type=_OUTPUT,
              help="write a self-contained HTML report (tables, bandwidth plot) to this file (- for stdout)")
@play_options
@run_options
def check(smoke: bool, bench: bool, limit: str | None, **opts) -> None:
    """Health, versions and cross-host consistency (exit 1 when anything is wrong)."""
    _drive(opts, "playbooks/check.yml", lambda c: c.check(smoke=smoke, bench=bench, limit=limit), limit=limit)


@main.command()
@click.option("--from", "source", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="a JSON file written by --json [default: the last run]")
@click.option("-i", "--inventory", "inventory", multiple=True, type=click.Path(path_type=Path),
              help="the last run on this inventory [default: the last run on any]")
@click.option("--json", "json_file", type=_OUTPUT, help="write JSON here (- for stdout)")
@click.option("--junit", "junit_file", type=_OUTPUT, help="write JUnit here (- for stdout)")
@click.option("--html", "html_file", type=_OUTPUT, help="write a check's HTML report here (- for stdout)")
@click.option("--artifacts-dir", type=click.Path(file_okay=False, path_type=Path), envvar="HOROVOD_CLUSTER_ARTIFACTS")
def report(source: Path | None, **opts) -> None:
    """Show the last run's summary again (and re-export it) without running anything."""
    _one_document_per_stream(opts)
    folder = _cluster(opts).runs_dir if opts["inventory"] else _artifacts_dir(opts)
    path = source or folder / LAST_RUN
    if not path.is_file():
        raise InputError(f"no saved run at {path}: run plan, rollout or check first")
    try:
        result = read_saved(path)
    except UsageError as err:
        raise InputError(str(err)) from None
    if opts.get("html_file") and not isinstance(result, CheckReport):
        raise InputError(f"--html is for check results; {path} holds a {result.kind} result")
    _finish(result, opts)


@main.command(context_settings={"allow_interspersed_args": False})
@click.option("--np", type=click.IntRange(1), help="ranks to start [default: every slot of the hostfile]")
@click.option("--controller", type=click.Choice(CONTROLLERS), default="gloo", show_default=True,
              help="horovodrun's controller")
@click.option("--tensors", type=click.Choice(TENSORS), default="cpu", show_default=True,
              help="the device the script puts its tensors on: cuda needs NCCL on every host of the job")
@click.option("--copy", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="a file or folder to copy into the job folder on every host (repeatable)")
@click.option("--workdir", help="run in this folder, the same path on every host (e.g. a shared one), "
                                "instead of a new job folder under ~/.cache/horovod-cluster/jobs")
@click.option("--hostfile", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="the job's hosts and slots [default: the Slurm allocation's inside one, else the rollout's]")
@click.option("--env", "env", multiple=True, metavar="NAME=VALUE",
              help="a variable for every rank, e.g. HOROVOD_GLOO_TIMEOUT_SECONDS=120 (repeatable)")
@click.option("-l", "--limit", help="check and stage only these hosts (any ansible pattern)")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="stop every rank on every host when the job runs longer (exit 124) [default: no limit]")
@click.option("--elastic", is_flag=True, help="horovodrun's elastic mode (Gloo): the job goes on when hosts leave "
                                              "and grows when they answer again; the script uses hvd.elastic")
@click.option("--min-np", type=click.IntRange(1), help="elastic: the fewest ranks the job goes on with [default: 1]")
@click.option("--max-np", type=click.IntRange(1), help="elastic: the most ranks [default: every slot of the hostfile]")
@job_options
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(command: tuple[str, ...], np: int | None, controller: str, tensors: str, copy: tuple[Path, ...],
        workdir: str | None, hostfile: Path | None, env: tuple[str, ...], limit: str | None, timeout: float | None,
        elastic: bool, min_np: int | None, max_np: int | None, **opts) -> None:
    """Run a training command on every slot of the rolled-out cluster and stream its output.

    horovodrun starts on the launcher (the first host) with the rollout's hostfile and Python
    environment (`python` is the environment's), in a job folder that exists on every host;
    each output line carries its rank ("[3]<stdout>:"). Exits with the job's exit code; 2 when
    it did not start (a host not rolled out, hosts that disagree: nothing runs then); 130 after
    Ctrl-C, which stops every rank on every host; 124 when --timeout came first, which does the same.
    With --elastic, ranks come and go with the hosts that answer (the rollout's discovery script).

    Example: horovod-cluster run --copy train.py -- python train.py --epochs 3
    """
    try:
        cluster = _cluster(opts)
        cluster.inventory_data()
        with _progress(cluster, "playbooks/run.yml", opts):
            job = cluster.stage(command, np=np, controller=controller, copy=copy, workdir=workdir,
                                hostfile=hostfile, env=env, limit=limit, elastic=elastic, min_np=min_np,
                                max_np=max_np, tensors=tensors)
    except (InventoryError, UsageError, JobRefused) as err:
        raise InputError(str(err)) from None
    grow = job.get("elastic")
    ranks = f"{job['np']} ranks, elastic {grow['min_np']}-{grow['max_np']}" if grow else f"{job['np']} ranks"
    console.print(f"job {job['id']}: {ranks} ({job['controller']}) from {job['launcher']} in {job['workdir']}",
                  markup=False)
    # Ctrl-C stops the job's ranks on every host, even where SIGINT came in ignored (a background
    # job of a script); a CI runner cancels with SIGTERM, a closed terminal sends SIGHUP: the same then.
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.default_int_handler)
    json_file = opts.get("json_file")
    to_stderr = str(json_file) == "-"  # stdout then carries the JSON alone
    result = cluster.launch(job, on_output=lambda line: click.echo(line, err=to_stderr), timeout=timeout)
    if result.interrupted or result.timed_out:
        stopped = ", ".join(f"{h} {n}" for h, n in sorted(result.stopped.items()))
        why = "interrupted" if result.interrupted else f"ran longer than --timeout {timeout:g} s"
        console.print(f"job {result.job_id}: {why}; processes stopped per host: {stopped or 'none left'}")
    else:
        console.print(f"job {result.job_id}: exit {result.rc} after {result.duration:.0f} s")
    if json_file is not None:
        if str(json_file) == "-":
            click.echo(result.to_json())
        else:
            Path(json_file).write_text(result.to_json())
    sys.exit(result.rc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
