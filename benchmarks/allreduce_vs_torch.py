#!/usr/bin/env python3
"""P5 of issue 50: the cluster's Horovod allreduce against torch.distributed's, on the same hosts, in one run.

    python benchmarks/allreduce_vs_torch.py [-i inventories/sandbox] [--json out.json]
        [--mpi-env NAME=VALUE ...] [SIZE ...]

On a rolled-out cluster, one rank per host (a hostfile of the rollout's hosts with one slot each), one after
the other: the check's own bench (roles/horovod_check/files/hvc_allreduce_bench.py) with Horovod's Gloo and
with its MPI controller, then roles/horovod_check/files/hvc_torch_allreduce_bench.py (torch.distributed, gloo backend, the same
sizes, warm-up, iterations and busbw formula) started by the same launcher. Prints each size's bus bandwidth
and the ratios Horovod / torch.distributed; the figures are the ratios at >= 16 MiB (the worst of those sizes)
and at 1 MiB. Default sizes: 4 KiB .. 256 MiB. `--mpi-env` adds a fourth run, Horovod's MPI controller with
those variables too (Open MPI's collective tuning, Horovod's cycle time).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from horovod_cluster import Cluster
from horovod_cluster.job import hostfile_slots, job_env

ROOT = Path(__file__).resolve().parents[1]
HOROVOD_BENCH = ROOT / "roles/horovod_check/files/hvc_allreduce_bench.py"
TORCH_BENCH = ROOT / "roles/horovod_check/files/hvc_torch_allreduce_bench.py"
SIZES = [2**k for k in range(12, 29, 2)]  # 4 KiB .. 256 MiB
LARGE = 16 << 20


def one_slot_per_host(cluster: Cluster, hosts: int | None = None) -> str:
    """The rollout's hostfile with one slot on each host (as on hosts with cores of their own); its first `hosts`."""
    world = cluster.stage(["true"])["hostfile_text"]
    names = [host for host, _ in hostfile_slots(world)]
    return "".join(name + " slots=1\n" for name in names[:hosts])


def measure(cluster: Cluster, hostfile: Path, controller: str, script: Path, sizes: list[int],
            env: dict[str, str] | None = None) -> dict:
    lines: list[str] = []
    result = cluster.run(["python", script.name, *map(str, sizes)], controller=controller, copy=[script],
                         hostfile=hostfile, env={"OMPI_MCA_mpi_yield_when_idle": "1", **(env or {})},
                         on_output=lines.append, timeout=1800)
    found = [line.split("HVC_RESULT ", 1)[1] for line in lines if "HVC_RESULT " in line]
    if result.rc != 0 or not found:
        sys.exit(f"{script.name} with {controller} failed (rc {result.rc}):\n" + "\n".join(lines[-30:]))
    return {row["bytes"]: row["busbw_GBps"] for row in json.loads(found[-1])["rows"]}


def ratios(horovod: dict, torch: dict) -> dict:
    large = [horovod[s] / torch[s] for s in horovod if s >= LARGE and torch.get(s)]
    return {"large_min": min(large) if large else None,
            "1MiB": horovod[1 << 20] / torch[1 << 20] if torch.get(1 << 20) and 1 << 20 in horovod else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default=str(ROOT / "inventories/sandbox"))
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--mpi-env", action="append", default=[], metavar="NAME=VALUE",
                        help="add a run of Horovod's MPI controller with these variables too")
    parser.add_argument("--hosts", type=int, help="the hostfile's first N hosts only (default: every host)")
    parser.add_argument("sizes", nargs="*", type=int, default=SIZES)
    args = parser.parse_args()
    variant = job_env(args.mpi_env)
    cluster = Cluster(args.inventory)
    with tempfile.TemporaryDirectory() as tmp:
        hostfile = Path(tmp) / "hostfile"
        hostfile.write_text(one_slot_per_host(cluster, args.hosts))
        hosts = len(hostfile.read_text().splitlines())
        busbw = {"horovod_gloo": measure(cluster, hostfile, "gloo", HOROVOD_BENCH, args.sizes),
                 "horovod_mpi": measure(cluster, hostfile, "mpi", HOROVOD_BENCH, args.sizes),
                 "torch_gloo": measure(cluster, hostfile, "gloo", TORCH_BENCH, args.sizes)}
        if variant:
            busbw["horovod_mpi_env"] = measure(cluster, hostfile, "mpi", HOROVOD_BENCH, args.sizes, variant)
    torch = busbw["torch_gloo"]
    print(f"{hosts} hosts, one rank each; busbw GB/s")
    print(f"{'bytes':>10} {'Horovod Gloo':>13} {'Horovod MPI':>12} {'torch gloo':>11} {'Gloo/torch':>11} {'MPI/torch':>10}")
    for size in args.sizes:
        g, m, t = busbw["horovod_gloo"][size], busbw["horovod_mpi"][size], torch[size]
        v = busbw.get("horovod_mpi_env", {}).get(size)
        extra = f" {v:>8.4f} {v / t:>5.2f}" if v is not None else ""
        print(f"{size:>10} {g:>13.4f} {m:>12.4f} {t:>11.4f} {g / t:>11.2f} {m / t:>10.2f}{extra}")
    if variant:
        print(f"(last two columns: Horovod MPI with {' '.join(args.mpi_env)}, and it / torch)")
    figures = {"gloo_over_torch": ratios(busbw["horovod_gloo"], torch),
               "mpi_over_torch": ratios(busbw["horovod_mpi"], torch)}
    if variant:
        figures["mpi_env_over_torch"] = ratios(busbw["horovod_mpi_env"], torch)
    for name, got in figures.items():
        print(f"P5 {name}: >= 16 MiB {got['large_min']}, 1 MiB {got['1MiB']}")
    if args.json:
        args.json.write_text(json.dumps({"hosts": hosts, "busbw_GBps": busbw, "ratios": figures, "mpi_env": variant},
                                        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
