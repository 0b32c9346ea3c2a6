"""Today's machines in the default run (issue 46): two fresh Debian 13 hosts (`sandbox up --debian13 2`, whose
group debian13 gets Debian's python3-torch: Python 3.13 has no CPU torch wheel reachable here), rolled out with
site.yml and checked from a controller of today, scripts/newest-controller.sh (Debian 13's Python 3.13, the newest
ansible-core pip gives it). Horovod 0.28.1 compiles once with GCC 14 (the compatibility matrix's gcc13_headers and
flatbuffers_span fixes) against Open MPI 5.0.7, into a wheel cache of this module's own, so the GCC 14 build is
proven every run; the check's Gloo and MPI smoke tests then pass across both hosts.

About 10 min here (the compile about 200 s of it); scripts/test.sh runs it in the molecule lane, the shorter one.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.version import Version

from horovod_cluster.ansible.events import TaskLog
from own_sandbox import own_sandbox

REPO = Path(__file__).resolve().parents[2]
MARKER = "/opt/horovod/venv/.horovod-platform-key.json"
COMPILE = "Horovod | Compile with pip wheel"

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("podman") is None, reason="needs podman (scripts/setup.sh)")]


def newest_controller(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(REPO / "scripts" / "newest-controller.sh"), *argv],
                          capture_output=True, text=True, timeout=3600)


def run_events(runs: Path) -> list[dict]:
    """A run's events, read back from ansible-runner's event files in its artifacts folder, in order."""
    events = [json.loads(path.read_text()) for path in runs.rglob("job_events/*.json")]
    return sorted(events, key=lambda event: event.get("counter", 0))


@pytest.fixture(scope="module")
def today(tmp_path_factory):
    """(hosts, the controller's banner, rollout, its events, check, the check's JSON report, wheel cache)."""
    root = tmp_path_factory.mktemp("today")
    inventory, wheels = str(root / "inventory"), root / "wheels"
    with own_sandbox(root, "hvc-d13", count=0, debian13=2) as (_, hosts):
        rollout = newest_controller("horovod-cluster", "rollout", "-i", inventory, "--artifacts-dir",
                                    str(root / "runs"), "-e", f"horovod_artifacts_dir={wheels}",
                                    "--json", str(root / "rollout.json"))
        check = newest_controller("horovod-cluster", "check", "-i", inventory, "--artifacts-dir",
                                  str(root / "check-runs"), "--json", str(root / "check.json"))
        report = json.loads((root / "check.json").read_text()) if (root / "check.json").is_file() else {}
        banner = next((line for line in rollout.stdout.splitlines() if line.startswith("newest-controller:")), "")
        if (root / "rollout.json").is_file():
            print(f"\nrollout {json.loads((root / 'rollout.json').read_text())['duration']:.0f} s")
        yield [host.name for host in hosts], banner, rollout, run_events(root / "runs"), check, report, wheels


def on_host(host: str, *argv: str) -> str:
    return subprocess.run(["podman", "exec", host, *argv], check=True, capture_output=True, text=True).stdout


def test_the_controller_is_python_313_with_ansible_core_220_or_newer(today):
    _, banner, _, _, _, _, _ = today
    found = re.fullmatch(r"newest-controller: Python (\S+), ansible-core (\S+)", banner)
    assert found, banner
    assert Version(found[1]) >= Version("3.13") and Version(found[2]) >= Version("2.20"), banner
    print(f"\n{banner}")


def test_site_yml_builds_horovod_once_with_gcc14_on_debian13(today):
    hosts, _, rollout, events, _, _, wheels = today
    assert rollout.returncode == 0, rollout.stdout[-4000:] + rollout.stderr[-2000:]
    for host in hosts:
        assert "VERSION_ID=\"13\"" in on_host(host, "cat", "/etc/os-release")
        key = json.loads(on_host(host, "cat", MARKER))["platform_key"]
        assert key.startswith("hvd0.28.1-debian13-x86_64-py3.13-pytorch2.6.0_debian-cpu-"), key
        assert "-mpi5-" in key, key
        assert on_host(host, "gcc", "-dumpversion").startswith("14")
    tasks = TaskLog()
    for event in events:
        tasks(event)
    assert len(tasks.hosts(COMPILE)) == 1, tasks.ended  # one compile, the other host installs its wheel
    assert len(list(wheels.glob("*/horovod-*.whl"))) == 1
    compiled = next(event["event_data"] for event in events
                    if event["event"] == "runner_on_ok" and event["event_data"]["task"] == COMPILE)
    print(f"\ncompiled on {compiled['host']} in {compiled['duration']:.0f} s")


def test_the_venv_sees_debians_torch_and_mpi_5(today):
    hosts, _, rollout, _, _, _, _ = today
    assert rollout.returncode == 0
    for host in hosts:
        probe = on_host(host, "/opt/horovod/venv/bin/python", "-c",
                        "import sys, torch, horovod.torch as hvd; print(sys.version_info[:2], torch.__version__,"
                        " torch.__file__, hvd.mpi_built(), hvd.gloo_built())")
        assert probe.split() == ["(3,", "13)", "2.6.0+debian", "/usr/lib/python3/dist-packages/torch/__init__.py",
                                 "True", "True"], probe
        mpi = on_host(host, "mpirun", "--version").splitlines()[0]
        assert "Open MPI) 5.0" in mpi
        print(f"\n{host}: Python {on_host(host, '/opt/horovod/venv/bin/python', '-V').split()[1]},"
              f" torch {probe.split()[2]}, {mpi}")


def test_the_check_passes_gloo_and_mpi_across_the_debian13_hosts(today):
    hosts, _, rollout, _, check, report, _ = today
    assert rollout.returncode == 0
    assert check.returncode == 0 and report["ok"], check.stdout[-4000:] + check.stderr[-2000:]
    for controller in ("gloo", "mpi"):
        smoke = report["smoke"][controller]
        assert smoke["ok"] and sorted({rank["host"] for rank in smoke["ranks"]}) == sorted(hosts), smoke


# 3 ranks (not a power of two) and 1 MiB of float32 a rank: the case the project's allreduce rules give the ring.
# A plain print of several pieces: Open MPI 5 tags its forwarded output by write, and before ranks wrote a line at a
# time (the horovod role's .pth file) an unbuffered print's pieces ran into another rank's line
# ("[0]<stdout>: sumsum 0 6.0 6.0" in a cold CI run).
RING_ALLREDUCE = ("import horovod.torch as hvd, torch; hvd.init(); t = torch.full((1 << 18,), hvd.rank() + 1.0); "
                  "hvd.allreduce_(t, op=hvd.Sum, name='ring'); print('sum', hvd.rank(), t.min().item(), t.max().item())")


def test_an_mpi_job_on_open_mpi_5_sums_right_by_the_allreduce_rules(today):
    """`run --controller mpi` gives every rank src/horovod_cluster/openmpi-allreduce-rules.conf (the classic format)
    on Open MPI 5.0 as on 4.1, and the 3 ranks across both hosts sum right by them. (Open MPI's release builds say
    nothing about reading the file; the sandbox's run tests show each rank's Open MPI takes it.)"""
    hosts, _, rollout, _, _, _, wheels = today
    assert rollout.returncode == 0
    inventory = wheels.parent / "inventory"  # the fixture's folder
    job = newest_controller("horovod-cluster", "run", "-i", str(inventory), "--controller", "mpi", "--np", "3",
                            "--", "python", "-c", RING_ALLREDUCE)
    out = job.stdout + job.stderr
    assert job.returncode == 0, out[-4000:]
    sums = sorted(re.findall(r"^\[\d+\]<stdout>: ?sum (\d) (\S+) (\S+)$", out, re.M))  # Open MPI 5: ": "
    assert sums == [(str(rank), "6.0", "6.0") for rank in range(3)], out[-4000:]
    assert re.search(r"^job \S+: 3 ranks \(mpi\) from ", out, re.M), out[-4000:]
