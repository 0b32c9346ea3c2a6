"""What the tests that bring up a sandbox of their own share: the hosts.

Such a test (fresh hosts for a compile, an arm64 host, a host without root) must not touch the
session's shared sandbox: its hosts get their own prefix, podman network, SSH key and inventory,
and are removed afterwards, also when bringing them up fails half-way.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from horovod_cluster.sandbox import Host, Sandbox


def slow_own_sandbox(why: str) -> list:
    """The pytestmark of a slow-tier test whose hosts are its own: `why` says what makes it slow."""
    return [pytest.mark.sandbox,
            pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1", reason=f"slow ({why}): set HVC_SLOW=1"),
            pytest.mark.skipif(shutil.which("podman") is None, reason="needs podman (scripts/setup.sh)")]


@contextmanager
def own_sandbox(root: Path, prefix: str, count: int, arm64: int = 0, debian13: int = 0, debian13_arm64: int = 0,
                inventory: str = "inventory") -> Iterator[tuple[Sandbox, list[Host]]]:
    """Fresh hosts <prefix>1.. (amd64), <prefix>-arm64-1.., <prefix>-debian13-1.. and <prefix>-debian13-arm64-1..
    on network <prefix>; their inventory is written to root/<inventory>. Yields the sandbox and its hosts; removes
    both at the end."""
    sandbox = Sandbox(prefix=prefix, network=prefix, inventory_dir=root / inventory, state_dir=root / "state")
    sandbox.down()  # a run killed earlier may have left them
    try:
        yield sandbox, sandbox.up(count=count, arm64=arm64, debian13=debian13, debian13_arm64=debian13_arm64)
    finally:
        sandbox.down()
