"""The `horovod-cluster` command. Exit codes: 0 ok, 1 a host or check failed, 2 usage error."""
from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table

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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
