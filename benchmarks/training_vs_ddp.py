#!/usr/bin/env python3
"""P7 of issue 50: training throughput of the cluster's Horovod against torch's DistributedDataParallel, on the
same hosts, in one run.

    python benchmarks/training_vs_ddp.py [-i inventories/sandbox] [--rounds 3] [--json out.json] [-- bench args]

On a rolled-out cluster, one rank per host (as allreduce_vs_torch.py), benchmarks/train_step_bench.py with
Horovod's DistributedOptimizer over Gloo, over MPI, and with DDP (gloo backend), all started by the same
launcher, one after the other, `--rounds` times in turn (the best of each counts: the hosts are shared with
whatever else runs). Prints samples per second per rank; the figure P7 is Horovod (Gloo) / DDP.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from allreduce_vs_torch import one_slot_per_host
from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks/train_step_bench.py"
# train_step_bench imports its launcher variables from the check's torch.distributed bench
HELPER = ROOT / "roles/horovod_check/files/hvc_torch_allreduce_bench.py"
RUNS = {"horovod_gloo": ("gloo", "horovod"), "horovod_mpi": ("mpi", "horovod"), "ddp_gloo": ("gloo", "ddp")}


def measure(cluster: Cluster, hostfile: Path, controller: str, framework: str, extra: list[str]) -> dict:
    lines: list[str] = []
    result = cluster.run(["python", BENCH.name, "--framework", framework, *extra], controller=controller,
                         copy=[BENCH, HELPER], hostfile=hostfile, env={"OMPI_MCA_mpi_yield_when_idle": "1"},
                         on_output=lines.append, timeout=1800)
    found = [line.split("HVC_RESULT ", 1)[1] for line in lines if "HVC_RESULT " in line]
    if result.rc != 0 or not found:
        sys.exit(f"{framework} with {controller} failed (rc {result.rc}):\n" + "\n".join(lines[-30:]))
    return json.loads(found[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default=str(ROOT / "inventories/sandbox"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("bench_args", nargs="*", help="passed to train_step_bench.py (--batch, --width, ...)")
    args = parser.parse_args()
    cluster = Cluster(args.inventory)
    runs: dict[str, list[dict]] = {name: [] for name in RUNS}
    with tempfile.TemporaryDirectory() as tmp:
        hostfile = Path(tmp) / "hostfile"
        hostfile.write_text(one_slot_per_host(cluster))
        for _ in range(args.rounds):
            for name, (controller, framework) in RUNS.items():
                runs[name].append(measure(cluster, hostfile, controller, framework, args.bench_args))
    best = {name: max(r["samples_per_s_per_rank"] for r in found) for name, found in runs.items()}
    first = runs["ddp_gloo"][0]
    print(f"{first['size']} hosts, one rank each; an MLP of {first['params']} parameters, batch {first['batch']} a"
          f" rank, {first['steps']} timed steps; samples/s per rank (best of {args.rounds}; every round)")
    for name, found in runs.items():
        print(f"{name:>13} {best[name]:>9.1f}   " + " ".join(f"{r['samples_per_s_per_rank']:.1f}" for r in found))
    figures = {"P7_gloo": best["horovod_gloo"] / best["ddp_gloo"],
               "mpi_over_ddp": best["horovod_mpi"] / best["ddp_gloo"]}
    print(f"P7 Horovod Gloo / DDP: {figures['P7_gloo']:.2f}; Horovod MPI / DDP: {figures['mpi_over_ddp']:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "best": best, "ratios": figures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
