"""site.yml and the check from a controller of today (issue 46): scripts/newest-controller.sh (Debian 13's Python
3.13, the newest ansible-core pip gives it) rolls out two fresh Debian 12 hosts of the test's own sandbox and checks
them; the check's Gloo and MPI smoke tests pass across both. The Horovod wheel comes from the shared wheel cache
when the main job filled it (else one host compiles it).

Slow tier (HVC_SLOW=1): fresh hosts and a second controller, which the default run's time has no room for.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from packaging.version import Version

from own_sandbox import own_sandbox, slow_own_sandbox

REPO = Path(__file__).resolve().parents[2]
MARKER = "/opt/horovod/venv/.horovod-platform-key.json"

pytestmark = slow_own_sandbox("2 fresh hosts, rolled out from a second controller")


def newest_controller(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(REPO / "scripts" / "newest-controller.sh"), *argv],
                          capture_output=True, text=True, timeout=3600)


@pytest.fixture(scope="module")
def rolled_out(tmp_path_factory):
    """(hosts, the controller's banner, rollout, check, the check's JSON report)."""
    root = tmp_path_factory.mktemp("newest")
    inventory = str(root / "inventory")
    with own_sandbox(root, "hvc-ctl", count=2) as (_, hosts):
        rollout = newest_controller("horovod-cluster", "rollout", "-i", inventory)
        check = newest_controller("horovod-cluster", "check", "-i", inventory, "--json", str(root / "check.json"))
        report = json.loads((root / "check.json").read_text()) if (root / "check.json").is_file() else {}
        banner = next((line for line in rollout.stdout.splitlines() if line.startswith("newest-controller:")), "")
        yield [host.name for host in hosts], banner, rollout, check, report


def test_the_controller_is_python_313_with_ansible_core_220_or_newer(rolled_out):
    _, banner, _, _, _ = rolled_out
    found = re.fullmatch(r"newest-controller: Python (\S+), ansible-core (\S+)", banner)
    assert found, banner
    assert Version(found[1]) >= Version("3.13") and Version(found[2]) >= Version("2.20"), banner


def test_site_yml_rolls_out_from_it(rolled_out):
    hosts, _, rollout, _, _ = rolled_out
    assert rollout.returncode == 0, rollout.stdout[-4000:] + rollout.stderr[-2000:]
    for host in hosts:
        marker = subprocess.run(["podman", "exec", host, "cat", MARKER], capture_output=True, text=True, check=True)
        assert json.loads(marker.stdout)["platform_key"].startswith("hvd0.28.1-debian12-x86_64-py3.11-"), marker


def test_the_check_passes_gloo_and_mpi_across_both_hosts(rolled_out):
    hosts, _, rollout, check, report = rolled_out
    assert rollout.returncode == 0
    assert check.returncode == 0 and report["ok"], check.stdout[-4000:] + check.stderr[-2000:]
    for controller in ("gloo", "mpi"):
        smoke = report["smoke"][controller]
        assert smoke["ok"] and sorted({rank["host"] for rank in smoke["ranks"]}) == sorted(hosts), smoke
