"""The `horovod-cluster` command. Exit codes: 0 ok, 1 a host or check failed, 2 usage error."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click
import yaml
from rich.console import Console
from rich.table import Table

from .cluster import (LAST_ROLLOUT, LAST_RUN, Cluster, UsageError, check_serial, default_artifacts_dir,
                      load_saved)
from .content import content_dir
from .progress import LiveProgress, TaskCounts
from .render import render
from .results import Result, RolloutResult, from_json
from .runner import DEFAULT_KEEP, InventoryError
from .sandbox import Sandbox, SandboxError

console = Console(stderr=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="horovod-cluster")
def main() -> None:
    """Provision and check a Horovod cluster across Ubuntu, macOS and Raspberry Pi OS hosts."""


@main.group()
def sandbox() -> None:
    """A local cluster of real Debian hosts (podman containers reached over SSH)."""


def _progress_sandbox(status) -> Sandbox:
    """On a terminal a live status line shows every build line; in CI logs, one line per step."""
    if console.is_terminal:
        def show(line: str) -> None:
            status.update(f"[bold]sandbox[/] {line[:110]}")
        return Sandbox(progress=show, output=show)
    return Sandbox(progress=lambda line: console.print(f"sandbox: {line}"))


def _hosts_table(hosts) -> Table:
    table = Table("host", "arch", "state", "address")
    for host in hosts:
        table.add_row(host.name, host.arch, host.state, host.address or "-")
    return table


@sandbox.command("up")
@click.option("--hosts", "count", default=3, show_default=True, type=click.IntRange(0, 16),
              help="amd64 hosts (Debian 12)")
@click.option("--arm64", default=0, show_default=True, type=click.IntRange(0, 4),
              help="arm64 hosts, the Raspberry Pi OS stand-in (built under qemu on demand)")
def sandbox_up(count: int, arm64: int) -> None:
    """Build the images if missing, start the hosts, write inventories/sandbox."""
    with console.status("sandbox up") as status:
        box = _progress_sandbox(status)
        try:
            hosts = box.up(count=count, arm64=arm64)
        except SandboxError as err:
            raise click.ClickException(str(err)) from None
    console.print(_hosts_table(hosts))
    console.print(f"inventory: {box.inventory_dir}")


@sandbox.command("build")
@click.option("--arch", "arches", multiple=True, default=["amd64"], show_default=True,
              type=click.Choice(["amd64", "arm64"]))
def sandbox_build(arches) -> None:
    """Build the sandbox images only (molecule scenarios use them)."""
    with console.status("building images") as status:
        box = _progress_sandbox(status)
        try:
            box.check_tools()
            box.configure_podman()
            built = box.build_images(list(arches))
        except SandboxError as err:
            raise click.ClickException(str(err)) from None
    console.print("built: " + (", ".join(built) or "nothing (images present)"))


@sandbox.command("status")
def sandbox_status() -> None:
    """List the sandbox hosts and their addresses."""
    hosts = Sandbox().status()
    if not hosts:
        console.print("no sandbox hosts")
        return
    Console().print(_hosts_table(hosts))


@sandbox.command("down")
@click.option("--images", is_flag=True, help="also remove the built images")
def sandbox_down(images: bool) -> None:
    """Remove the hosts and the network (images stay cached unless --images)."""
    removed = Sandbox().down(images=images)
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


def _extra_vars(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict:
    extravars = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r}: expected KEY=VALUE")
        try:
            extravars[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as err:
            raise click.BadParameter(f"{item!r}: the value is not YAML ({err})") from None
    return extravars


def run_options(func):
    """Options every cluster command shares."""
    options = [
        click.option("-i", "--inventory", "inventory", multiple=True, type=click.Path(path_type=Path),
                     help="inventory file or folder (repeatable) [default: the content's inventories/sandbox]"),
        click.option("-v", "--verbose", "verbosity", count=True,
                     help="ansible verbosity (-v ... -vvvv); also shows ansible's own output"),
        click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path),
                     help="write the result as JSON to this file"),
        click.option("--junit", "junit_file", type=click.Path(dir_okay=False, path_type=Path),
                     help="write the result as JUnit XML to this file"),
        click.option("--artifacts-dir", type=click.Path(file_okay=False, path_type=Path),
                     envvar="HOROVOD_CLUSTER_ARTIFACTS",
                     help="where runs keep their artifacts [default: ~/.cache/horovod-cluster/runs]"),
        click.option("--keep", "keep_runs", default=DEFAULT_KEEP, show_default=True, type=click.IntRange(1),
                     help="artifact folders of past runs to keep"),
        click.option("--forks", type=click.IntRange(1), help="hosts ansible works on at once"),
        click.option("-e", "--extra-vars", "extra_vars", multiple=True, callback=_extra_vars, metavar="KEY=VALUE",
                     help="extra variable (value read as YAML), repeatable"),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _artifacts_dir(opts: dict) -> Path:
    return Path(opts["artifacts_dir"]) if opts.get("artifacts_dir") else default_artifacts_dir()


def _cluster(opts: dict, on_event=None) -> Cluster:
    inventory = list(opts["inventory"]) or [content_dir() / "inventories" / "sandbox"]
    return Cluster(inventory, artifacts_dir=opts["artifacts_dir"], forks=opts["forks"],
                   extravars=opts["extra_vars"], keep_runs=opts["keep_runs"], verbosity=opts["verbosity"],
                   on_event=on_event)


def _drive(opts: dict, playbook: str, action: Callable[[Cluster], Result]) -> None:
    """Run one action with live progress, render it, write the files, exit 0 or 1."""
    cluster = _cluster(opts)
    counts = TaskCounts(cluster.artifacts_dir / "task-counts.json")
    try:
        cluster.inventory_data()  # a broken inventory fails here, before any progress display
        with LiveProgress(console, playbook, counts, echo=opts["verbosity"] > 0) as live:
            cluster.on_event = live
            result = action(cluster)
    except (InventoryError, UsageError) as err:
        raise InputError(str(err)) from None
    counts.learn(result if isinstance(result, RolloutResult) else result.run)
    _finish(result, opts)


def _finish(result: Result, opts: dict) -> None:
    render(result, Console())
    for path, text in ((opts.get("json_file"), result.to_json), (opts.get("junit_file"), result.to_junit)):
        if path:
            Path(path).write_text(text())
            console.print(f"wrote {path}")
    sys.exit(0 if result.ok else 1)


@main.command()
@click.option("--limit", help="hosts or groups to plan for")
@click.option("--facts-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="plan over recorded facts (<host>.json from playbooks/record_facts.yml), no connection")
@run_options
def plan(limit: str | None, facts_dir: Path | None, **opts) -> None:
    """What each role will do on each host, and by which method (changes nothing)."""
    _drive(opts, "playbooks/plan.yml", lambda c: c.plan(limit=limit, facts_dir=facts_dir))


@main.command()
@click.option("--limit", help="only these hosts/groups (ansible pattern)")
@run_options
def wheelhouse(limit: str | None, **opts) -> None:
    """Fill the controller wheelhouse with the framework wheels each host needs, then list it.

    pip download runs on this machine with its own pip configuration; hosts are not changed.
    The wheelhouse is ~/.cache/horovod-cluster/wheelhouse (python_env_wheelhouse)."""
    _drive(opts, "playbooks/wheelhouse.yml", lambda c: c.wheelhouse(limit=limit))


def rollout_options(func):
    options = [
        click.option("--limit", help="only these hosts/groups (ansible pattern)"),
        click.option("--tags", help="only tasks with these tags (comma separated)"),
        click.option("--skip-tags", help="skip tasks with these tags"),
        click.option("--serial", callback=_serial, help="hosts per batch: a number or a percentage"),
        click.option("--max-fail-percentage", type=click.IntRange(0, 100),
                     help="stop a play when more than this percentage of a batch failed"),
        click.option("--check", "check_mode", is_flag=True, help="dry run (ansible --check)"),
        click.option("--diff", is_flag=True, help="show file differences (ansible --diff)"),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@main.command()
@rollout_options
@run_options
def rollout(limit, tags, skip_tags, serial, max_fail_percentage, check_mode, diff, **opts) -> None:
    """Provision the cluster (site.yml) with live per-host progress and a summary."""
    _drive(opts, "site.yml", lambda c: c.rollout(
        limit=limit, tags=tags, skip_tags=skip_tags, serial=serial,
        max_fail_percentage=max_fail_percentage, check=check_mode, diff=diff))


@main.command()
@run_options
def retry(**opts) -> None:
    """Re-run the last rollout on only the hosts that failed or were unreachable."""
    last = load_saved(_artifacts_dir(opts), LAST_ROLLOUT)
    if not opts["inventory"] and isinstance(last, RolloutResult):
        opts["inventory"] = [Path(p) for p in last.options.get("inventory", [])]  # the same cluster
    if isinstance(last, RolloutResult) and not last.failed_hosts:
        console.print("nothing to retry: the last rollout had no failed or unreachable host")
    _drive(opts, last.playbook if last else "site.yml", lambda c: c.retry_failed())


@main.command()
@click.option("--smoke/--no-smoke", default=True, show_default=True, help="run the cross-host smoke test")
@click.option("--bench", is_flag=True, help="also measure allreduce and link bandwidth")
@click.option("--limit", help="only these hosts/groups")
@run_options
def check(smoke: bool, bench: bool, limit: str | None, **opts) -> None:
    """Health, versions and cross-host consistency (exit 1 when anything is wrong)."""
    _drive(opts, "playbooks/check.yml", lambda c: c.check(smoke=smoke, bench=bench, limit=limit))


@main.command()
@click.option("--from", "source", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="a JSON file written by --json [default: the last run]")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="write JSON here")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, path_type=Path), help="write JUnit here")
@click.option("--artifacts-dir", type=click.Path(file_okay=False, path_type=Path), envvar="HOROVOD_CLUSTER_ARTIFACTS")
def report(source: Path | None, **opts) -> None:
    """Show the last run's summary again (and re-export it) without running anything."""
    path = source or _artifacts_dir(opts) / LAST_RUN
    if not path.is_file():
        raise InputError(f"no saved run at {path}: run plan, rollout or check first")
    try:
        result = from_json(path.read_text())
    except (ValueError, KeyError, TypeError) as err:
        raise InputError(f"{path} is not a saved horovod-cluster result: {err}") from None
    _finish(result, opts)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
