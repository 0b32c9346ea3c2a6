"""Ordinary Horovod training code on the rolled-out sandbox: the object collectives of Horovod's own
PyTorch examples (hvd.broadcast_object, hvd.allgather_object, hvd.broadcast_optimizer_state) across
every slot of every host, with both controllers. They need numpy, which python_env installs as a
training package (python_env_training_packages); without it every rank fails with
"RuntimeError: Numpy is not available".
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
SCRIPT = ROOT / "tests" / "fixtures" / "sandbox" / "training_objects.py"
ON_HOST = "/opt/horovod-cluster/training_objects.py"
VENV = "/opt/horovod/venv/bin"
HOSTFILE = "/etc/horovod/hostfile"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


@pytest.mark.parametrize("controller", ["gloo", "mpi"])
def test_object_collectives_across_hosts(controller):
    hosts = Cluster(SANDBOX).hosts()
    for host in hosts:
        subprocess.run(["podman", "cp", str(SCRIPT), f"{host}:{ON_HOST}"], check=True)
    launcher = hosts[0]
    hostfile = subprocess.run(["podman", "exec", launcher, "cat", HOSTFILE],
                              capture_output=True, text=True, check=True).stdout
    slots = sum(int(n) for n in re.findall(r"slots=(\d+)", hostfile))
    # The sandbox's hosts share this machine's 2 cores: MPI ranks that poll while they wait starve the others
    # (the check sets the same, see roles/horovod_check/tasks/smoke.yml); on real hosts each rank has its core.
    run = subprocess.run(
        ["podman", "exec", "-e", "OMPI_ALLOW_RUN_AS_ROOT=1", "-e", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
         "-e", "OMPI_MCA_mpi_yield_when_idle=1", launcher,
         "timeout", "--kill-after=10", "180", f"{VENV}/horovodrun", f"--{controller}", "-np", str(slots),
         "--hostfile", HOSTFILE, f"{VENV}/python", ON_HOST],
        capture_output=True, text=True, timeout=240)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-4000:] + _processes(hosts)
    ranks = [json.loads(line) for line in re.findall(r"HVC_OBJECTS (\{.*\})", output)]
    assert sorted(r["rank"] for r in ranks) == list(range(slots)), output[-4000:]
    assert {r["host"] for r in ranks} == set(hosts)  # every host took part
    root = next(r for r in ranks if r["rank"] == 0)
    everyone = sorted((r["rank"], r["host"]) for r in ranks)
    for r in ranks:
        assert r["size"] == slots
        assert r["state"] == {"epoch": 7, "host": root["host"]}  # broadcast_object: rank 0's state
        assert sorted((x["rank"], x["host"]) for x in r["records"]) == everyone  # allgather_object
        assert r["lr"] == pytest.approx(0.1)  # broadcast_optimizer_state: rank 0's learning rate
        assert r["momentum_agrees"]  # and rank 0's momentum buffers


def _processes(hosts: list[str]) -> str:
    """Each host's processes, for a failed run's message: where a job that timed out was waiting."""
    return "".join(f"\n--- processes on {host}\n" + subprocess.run(
        ["podman", "exec", host, "ps", "-eo", "pid,ppid,stat,etime,time,args"], capture_output=True, text=True
    ).stdout for host in hosts)
