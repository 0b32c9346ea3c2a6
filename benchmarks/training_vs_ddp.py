#!/usr/bin/env python3
"""P7 of issue 50: training throughput of the cluster's Horovod against torch's DistributedDataParallel, on the
same hosts, in one run.

    python benchmarks/training_vs_ddp.py [-i inventories/sandbox] [--rounds 3] [--json out.json] [--all-slots]
        [--hosts N] [--env NAME=VALUE ...] [--horovod-env NAME=VALUE ...] [-- bench args]

On a rolled-out cluster, one rank per host (as allreduce_vs_torch.py), benchmarks/train_step_bench.py with
Horovod's DistributedOptimizer over Gloo, over MPI, and with DDP (gloo backend), all started by the same
launcher, one after the other, `--rounds` times in turn. Prints samples per second per rank, the best of the
rounds and every round's; the figure P7 is Horovod (Gloo) / DDP, the median over the rounds of each round's ratio
(the two measured side by side; one round alone moves with whatever else shares the hosts' cores).
`--hosts N` runs on the hostfile's first N hosts only (one rank each). `--all-slots` runs every slot of the
cluster's hostfile instead (several ranks a host, as `horovod-cluster run` does by default). `--env` sets
variables for every run (OMP_NUM_THREADS=1: one compute thread a rank).
`--horovod-env` adds a fourth run, Horovod over Gloo with those variables too (HOROVOD_CYCLE_TIME,
HOROVOD_FUSION_THRESHOLD, OMP_NUM_THREADS, ...), in the same rounds: a setting side by side with the defaults.
Each run's line also gives rank 0's milliseconds a step in forward, backward and the optimizer's step (medians of
the rounds). Bench args reach every run: `-- --groups N` is Horovod's DistributedOptimizer groups (DDP ignores it).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from allreduce_vs_torch import at_least, one_slot_per_host, paired_median
from horovod_cluster import Cluster
from horovod_cluster.job import job_env

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks/train_step_bench.py"
# train_step_bench imports its launcher variables from the check's torch.distributed bench
HELPER = ROOT / "roles/horovod_check/files/hvc_torch_allreduce_bench.py"
PHASES = ("forward_ms", "backward_ms", "optimizer_step_ms")  # medians over the rounds, printed beside each run
RUNS = {"horovod_gloo": ("gloo", "horovod"), "horovod_mpi": ("mpi", "horovod"), "ddp_gloo": ("gloo", "ddp")}


def measure(cluster: Cluster, hostfile: Path | None, controller: str, framework: str, extra: list[str],
            env: dict[str, str]) -> dict:
    lines: list[str] = []
    result = cluster.run(["python", BENCH.name, "--framework", framework, *extra], controller=controller,
                         copy=[BENCH, HELPER], hostfile=hostfile, env={"OMPI_MCA_mpi_yield_when_idle": "1", **env},
                         on_output=lines.append, timeout=1800)
    found = [line.split("HVC_RESULT ", 1)[1] for line in lines if "HVC_RESULT " in line]
    if result.rc != 0 or not found:
        sys.exit(f"{framework} with {controller} failed (rc {result.rc}):\n" + "\n".join(lines[-30:]))
    return json.loads(found[-1])


def paired_ratio(runs: dict[str, list[dict]], name: str) -> tuple[float, list[float]]:
    """The median over the rounds of `name` / DDP in the same round, and every round's ratio."""
    return paired_median(*([r["samples_per_s_per_rank"] for r in runs[key]] for key in (name, "ddp_gloo")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default=str(ROOT / "inventories/sandbox"))
    parser.add_argument("--rounds", type=at_least(1), default=3)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--all-slots", action="store_true",
                        help="every slot of the cluster's hostfile (several ranks a host), not one rank a host")
    parser.add_argument("--hosts", type=at_least(2),
                        help="one rank on each of the hostfile's first N hosts only (default: every host)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="set for every run (repeatable)")
    parser.add_argument("--horovod-env", action="append", default=[], metavar="NAME=VALUE",
                        help="a fourth run, horovod_gloo_env: Horovod over Gloo with these variables (repeatable)")
    parser.add_argument("bench_args", nargs="*", help="passed to train_step_bench.py (--batch, --width, ...)")
    args = parser.parse_args()
    if args.all_slots and args.hosts:
        parser.error("--hosts N: one rank on each of N hosts; --all-slots runs every slot of every host")
    cluster = Cluster(args.inventory)
    common = job_env(args.env)
    variant = job_env(args.horovod_env)
    plan = {name: (*how, common) for name, how in RUNS.items()}
    if variant:
        plan["horovod_gloo_env"] = ("gloo", "horovod", {**common, **variant})
    runs: dict[str, list[dict]] = {name: [] for name in plan}
    with tempfile.TemporaryDirectory() as tmp:
        hostfile = None if args.all_slots else Path(tmp) / "hostfile"
        if hostfile:
            hostfile.write_text(one_slot_per_host(cluster, args.hosts))
        for _ in range(args.rounds):
            for name, (controller, framework, env) in plan.items():
                runs[name].append(measure(cluster, hostfile, controller, framework, args.bench_args, env))
    best = {name: max(r["samples_per_s_per_rank"] for r in found) for name, found in runs.items()}
    first = runs["ddp_gloo"][0]
    print(f"{first['size']} ranks, {'every slot' if args.all_slots else 'one a host'}; an MLP of {first['params']}"
          f" parameters, batch {first['batch']} a rank, {first['steps']} timed steps; samples/s per rank"
          f" (best of {args.rounds}; every round)")
    for name, found in runs.items():
        phases = [statistics.median(r[key] for r in found) for key in PHASES]
        print(f"{name:>13} {best[name]:>9.1f}   " + " ".join(f"{r['samples_per_s_per_rank']:.1f}" for r in found)
              + "   rank 0's forward/backward/step ms " + "/".join(f"{ms:.1f}" for ms in phases))
    names = {"P7_gloo": "horovod_gloo", "mpi_over_ddp": "horovod_mpi", "gloo_env_over_ddp": "horovod_gloo_env"}
    figures, per_round = {}, {}
    for figure, name in names.items():
        if name in runs:
            figures[figure], per_round[figure] = paired_ratio(runs, name)
            print(f"{figure} ({name} / DDP): {figures[figure]:.2f}, median of the rounds "
                  + " ".join(f"{r:.2f}" for r in per_round[figure])
                  + f"; best / best {best[name] / best['ddp_gloo']:.2f}")
    if variant:
        print(f"(horovod_gloo_env: {' '.join(args.horovod_env)})")
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "best": best, "ratios": figures, "ratios_per_round": per_round,
                                         "env": common, "horovod_env": variant}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
