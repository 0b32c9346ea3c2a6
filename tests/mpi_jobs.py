"""What the sandbox tests that start an MPI job by hand share: `horovodrun --mpi` from a host, one rank per host."""
from __future__ import annotations

import json
import subprocess

ENV = "/opt/horovod/venv"
# One allreduce across every rank: each prints its rank, the world size and the sum of rank + 1.
ALLREDUCE = ("import torch, horovod.torch as hvd; hvd.init(); "
             "s = hvd.allreduce(torch.tensor([hvd.rank() + 1.0]), op=hvd.Sum); "
             "print('SUM', hvd.rank(), hvd.size(), s.item(), flush=True)")


def on_host(host: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", "exec", host, *argv], check=check, capture_output=True, text=True,
                          timeout=600)


def marker(host: str) -> dict:
    """The Horovod role's marker on the host: its platform key, mpi_prefix and what check-build verified."""
    return json.loads(on_host(host, "cat", f"{ENV}/.horovod-platform-key.json").stdout)


def horovodrun_mpi(hosts: list[str], mpi_prefix: str) -> subprocess.CompletedProcess:
    """`horovodrun --mpi` from the first host, one rank per host (the interface named: no NIC discovery), the
    allreduce above; mpirun from `mpi_prefix` (and --prefix for the remote daemons) where it is not the distro's."""
    prefix = [f"--mpi-args=--prefix {mpi_prefix}"] if mpi_prefix else []
    path = f"{mpi_prefix}/bin:/usr/local/bin:/usr/bin:/bin" if mpi_prefix else "/usr/local/bin:/usr/bin:/bin"
    return on_host(hosts[0], "env", f"PATH={path}", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                   f"{ENV}/bin/horovodrun", "--mpi", "-np", str(len(hosts)), "-H", ",".join(f"{h}:1" for h in hosts),
                   "--network-interface", "eth0", "--start-timeout", "120", *prefix,
                   f"{ENV}/bin/python", "-c", ALLREDUCE, check=False)


def allreduce_sums(job: subprocess.CompletedProcess) -> list[list[str]]:
    """[rank, size, sum] of each rank's SUM line, sorted."""
    return sorted(line.split()[-3:] for line in job.stdout.splitlines() if "SUM" in line)
