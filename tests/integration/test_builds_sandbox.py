"""Who compiles Horovod, under serial batches and when the builder fails (issue 13), on the real
site.yml. Slow tier (HVC_SLOW=1, about 13 min: a serial rollout of fresh hosts and two compiles on
2 cores).

The tests bring up a second sandbox of their own (hosts hvc-slow1..3 on their own podman network,
their own SSH key and inventory), fresh from the image, and give Horovod an empty wheel cache of
their own (`horovod_artifacts_dir`), so the rollout must compile; the shared sandbox is not touched.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from horovod_cluster import Cluster
from horovod_cluster.ansible.events import TaskLog
from own_sandbox import own_sandbox, slow_own_sandbox

ROOT = Path(__file__).resolve().parents[2]
VENV = "/opt/horovod/venv"
COMPILE = "Horovod | Compile with pip wheel"
INSTALL = "Horovod | Install the wheel into the environment"

pytestmark = slow_own_sandbox("about 13 min, two compiles")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A fresh 3-host sandbox of this module's own: (inventory folder, wheel cache, runs folder)."""
    root = tmp_path_factory.mktemp("slow-sandbox")
    with own_sandbox(root, "hvc-slow", count=3):
        yield root / "inventory", root / "wheels", root / "runs"


def strip_horovod(hosts: list[str]) -> None:
    for host in hosts:
        subprocess.run(["podman", "exec", host, "sh", "-c",
                        f"{VENV}/bin/python -m pip uninstall -q -y horovod && rm -f {VENV}/.horovod-platform-key.json"],
                       check=True, capture_output=True)


def wheels(folder: Path) -> list[Path]:
    return sorted(folder.glob("*/horovod-*.whl"))


def test_serial_batches_compile_once_per_platform_key(fresh):
    inventory, wheel_cache, runs = fresh
    tasks = TaskLog()
    cluster = Cluster(inventory, artifacts_dir=runs, on_event=tasks,
                      extravars={"horovod_artifacts_dir": str(wheel_cache)})
    hosts = cluster.hosts()
    result = cluster.rollout(serial=1)
    assert result.ok, result.to_json()
    assert result.plays.count("Horovod") == len(hosts), "serial=1: one batch per host"
    # The first batch's host compiled; the later batches installed its wheel from the controller.
    assert tasks.hosts(COMPILE) == hosts[:1], tasks.ended
    assert tasks.hosts(INSTALL) == hosts, tasks.ended
    assert len(wheels(wheel_cache)) == 1
    report = cluster.check(smoke=True)
    assert report.ok, report.to_json()


def test_a_failed_builder_is_named_and_retry_compiles_once(fresh):
    """After the serial rollout: the builder and one consumer lose Horovod, the wheel cache is
    emptied, and the builder's compile is stopped after 15 s (horovod_build_timeout)."""
    inventory, wheel_cache, runs = fresh
    hosts = Cluster(inventory).hosts()
    builder, consumer, keeper = hosts
    shutil.rmtree(wheel_cache)
    (inventory / "host_vars").mkdir(exist_ok=True)
    too_short = inventory / "host_vars" / f"{builder}.yml"
    too_short.write_text("horovod_build_timeout: 15\n")
    strip_horovod([builder, consumer])  # the third host keeps its Horovod: nothing to do there
    options = dict(artifacts_dir=runs, extravars={"horovod_artifacts_dir": str(wheel_cache)})

    failed = Cluster(inventory, **options).rollout()
    assert not failed.ok and failed.failed_hosts == [builder, consumer], failed.to_json()
    assert "horovod_build_timeout" in failed.hosts[builder].failure.message
    assert f"did the builder {builder} fail?" in failed.hosts[consumer].failure.message
    assert failed.hosts[keeper].succeeded, failed.to_json()  # the other host finished site.yml
    assert wheels(wheel_cache) == []

    too_short.unlink()
    tasks = TaskLog()
    retried = Cluster(inventory, on_event=tasks, **options).retry_failed()
    assert retried.ok and sorted(retried.hosts) == [builder, consumer], retried.to_json()
    assert tasks.hosts(COMPILE) == [builder], tasks.ended
    assert tasks.hosts(INSTALL) == [builder, consumer], tasks.ended
    assert len(wheels(wheel_cache)) == 1
    report = Cluster(inventory, **options).check(smoke=True)
    assert report.ok, report.to_json()
