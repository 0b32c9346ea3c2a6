"""The execution environment (issue 46): execution-environment.yml built with ansible-builder, then site.yml and the
check run in it with ansible-navigator (scripts/execution-environment.sh) against two fresh Debian 12 hosts of the
test's own sandbox; the check's Gloo and MPI smoke tests pass across both. The Horovod wheel comes from the shared
wheel cache when the main job filled it (else one host compiles it).

Slow tier (HVC_SLOW=1): an image build and fresh hosts, which the default run's time has no room for.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from own_sandbox import own_sandbox, slow_own_sandbox

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "execution-environment.sh"
MARKER = "/opt/horovod/venv/.horovod-platform-key.json"
SMOKE_TASK = "Publish the smoke test and bandwidth results"

pytestmark = slow_own_sandbox("an image build, 2 fresh hosts rolled out from it")


def navigator(root: Path, name: str, playbook: str, inventory: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """ansible-navigator run PLAYBOOK in the EE; (the process, navigator's artifact of the run)."""
    artifact = root / f"{name}.json"
    run = subprocess.run(["bash", str(SCRIPT), "run", playbook, "-i", str(inventory), "--pae", "true",
                          "--pas", str(artifact)], capture_output=True, text=True, timeout=3600, cwd=REPO)
    return run, json.loads(artifact.read_text()) if artifact.is_file() else {}


def task_results(artifact: dict, name: str) -> list[dict]:
    """The per-host results of the tasks called `name` in navigator's artifact."""
    return [task for play in artifact.get("plays", []) for task in play.get("tasks", []) if task.get("task") == name]


@pytest.fixture(scope="module")
def rolled_out(tmp_path_factory):
    """(hosts, the image build, site.yml's run and artifact, the check's run and artifact)."""
    root = tmp_path_factory.mktemp("ee")
    build = subprocess.run(["bash", str(SCRIPT), "build"], capture_output=True, text=True, timeout=3600, cwd=REPO)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    with own_sandbox(root, "hvc-ee", count=2) as (_, hosts):
        site = navigator(root, "site", "site.yml", root / "inventory")
        check = navigator(root, "check", "playbooks/check.yml", root / "inventory")
        yield [host.name for host in hosts], build, site, check


def test_the_image_is_the_definitions_with_the_ansible_core_it_names(rolled_out):
    _, build, _, _ = rolled_out
    image = build.stdout.strip().splitlines()[-1].removeprefix("execution environment: ")
    version = subprocess.run(["podman", "run", "--rm", "--entrypoint", "ansible", image, "--version"],
                             capture_output=True, text=True, check=True).stdout
    assert version.startswith("ansible [core 2.") and "python version = 3.13" in version, version


def test_site_yml_rolls_out_from_it(rolled_out):
    hosts, _, (site, artifact), _ = rolled_out
    assert site.returncode == 0, site.stdout[-4000:] + site.stderr[-2000:]
    assert artifact.get("status") == "successful", artifact.get("status")
    for host in hosts:
        marker = subprocess.run(["podman", "exec", host, "cat", MARKER], capture_output=True, text=True, check=True)
        assert json.loads(marker.stdout)["platform_key"].startswith("hvd0.28.1-debian12-x86_64-py3.11-"), marker


def test_the_check_passes_gloo_and_mpi_across_both_hosts(rolled_out):
    hosts, _, _, (check, artifact) = rolled_out
    assert check.returncode == 0, check.stdout[-4000:] + check.stderr[-2000:]
    published = task_results(artifact, SMOKE_TASK)
    assert published, [t.get("task") for p in artifact.get("plays", []) for t in p.get("tasks", [])]
    smoke = published[0]["res"]["ansible_stats"]["data"]["hvc_check"]["smoke"]
    for controller in ("gloo", "mpi"):
        assert smoke[controller]["ok"], smoke[controller]
        assert sorted({rank["host"] for rank in smoke[controller]["ranks"]}) == sorted(hosts), smoke[controller]
