#!/usr/bin/env python3
"""P5 of issue 50: the cluster's Horovod allreduce against torch.distributed's, on the same hosts, in one run.

    python benchmarks/allreduce_vs_torch.py [-i inventories/sandbox] [--rounds 3] [--json out.json]
        [--hosts N] [--gloo-env NAME=VALUE ...] [--mpi-env NAME=VALUE ...] [SIZE ...]

On a rolled-out cluster, one rank per host (a hostfile of the rollout's hosts with one slot each), one after
the other: the check's own bench (roles/horovod_check/files/hvc_allreduce_bench.py) with Horovod's Gloo and
with its MPI controller, then roles/horovod_check/files/hvc_torch_allreduce_bench.py (torch.distributed, gloo
backend, the same sizes, warm-up, iterations and busbw formula) started by the same launcher; `--rounds` times
in turn. Each round gives its ratios Horovod / torch.distributed side by side; the figures are the median over
the rounds of each round's ratio at >= 16 MiB (the worst of those sizes) and at 1 MiB (one round alone moves
with whatever else shares the hosts' cores). Prints each size's median bus bandwidth and ratio, and every
round's figures. Default sizes: 4 KiB .. 256 MiB. `--gloo-env` / `--mpi-env` add a run of that controller with
those variables too (Horovod's cycle time, Open MPI's collective tuning), in the same rounds.
"""
from __future__ import annotations

import argparse
import json
import statistics
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
MIB = 1 << 20


def at_least(low: int):
    """An argparse type: an integer >= `low`, refused by name otherwise."""
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: expected an integer >= {low}")
        return value
    return parse


def paired_median(variant: list[float], reference: list[float]) -> tuple[float, list[float]]:
    """The median over the rounds of variant / reference measured in the same round, and each round's ratio."""
    each = [got / ref for got, ref in zip(variant, reference)]
    return statistics.median(each), each


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
    """One round's figures: the worst ratio at >= 16 MiB and the ratio at 1 MiB (None where not measured)."""
    large = [horovod[s] / torch[s] for s in horovod if s >= LARGE and torch.get(s)]
    return {"large_min": min(large) if large else None,
            "1MiB": horovod[MIB] / torch[MIB] if torch.get(MIB) and MIB in horovod else None}


def median_of(values: list) -> float | None:
    found = [v for v in values if v is not None]
    return statistics.median(found) if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default=str(ROOT / "inventories/sandbox"))
    parser.add_argument("--rounds", type=at_least(1), default=3, help="the runs in turn, this many times (default 3)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--gloo-env", action="append", default=[], metavar="NAME=VALUE",
                        help="add a run of Horovod's Gloo controller with these variables too")
    parser.add_argument("--mpi-env", action="append", default=[], metavar="NAME=VALUE",
                        help="add a run of Horovod's MPI controller with these variables too")
    parser.add_argument("--hosts", type=at_least(2), help="the hostfile's first N hosts only (default: every host)")
    parser.add_argument("sizes", nargs="*", type=int, default=SIZES)
    args = parser.parse_args()
    # name: (controller, bench, variables); torch.distributed last, as before rounds
    plan = {"horovod_gloo": ("gloo", HOROVOD_BENCH, {}), "horovod_mpi": ("mpi", HOROVOD_BENCH, {}),
            "torch_gloo": ("gloo", TORCH_BENCH, {})}
    variants = {"horovod_gloo_env": ("gloo", args.gloo_env), "horovod_mpi_env": ("mpi", args.mpi_env)}
    for name, (controller, given) in variants.items():
        if given:
            plan[name] = (controller, HOROVOD_BENCH, job_env(given))
    cluster = Cluster(args.inventory)
    rounds: list[dict[str, dict]] = []
    with tempfile.TemporaryDirectory() as tmp:
        hostfile = Path(tmp) / "hostfile"
        hostfile.write_text(one_slot_per_host(cluster, args.hosts))
        hosts = len(hostfile.read_text().splitlines())
        for _ in range(args.rounds):
            rounds.append({name: measure(cluster, hostfile, controller, bench, args.sizes, env)
                           for name, (controller, bench, env) in plan.items()})
    horovod = [name for name in plan if name != "torch_gloo"]
    per_round = [{name: ratios(got[name], got["torch_gloo"]) for name in horovod} for got in rounds]
    busbw = {name: {size: statistics.median(got[name][size] for got in rounds) for size in args.sizes}
             for name in plan}
    size_ratio = {name: {size: paired_median([got[name][size] for got in rounds],
                                             [got["torch_gloo"][size] for got in rounds])[0]
                         for size in args.sizes} for name in horovod}
    figures = {name: {key: median_of([r[name][key] for r in per_round]) for key in ("large_min", "1MiB")}
               for name in horovod}
    print(f"{hosts} hosts, one rank each; busbw GB/s, the median of {args.rounds} rounds; "
          "each ratio the median of the rounds' own")
    print(f"{'bytes':>10} " + " ".join(f"{name:>16} {'/torch':>6}" if name in horovod else f"{name:>16}"
                                       for name in plan))
    for size in args.sizes:
        print(f"{size:>10} " + " ".join(f"{busbw[name][size]:>16.4f} {size_ratio[name][size]:>6.2f}"
                                        if name in horovod else f"{busbw[name][size]:>16.4f}" for name in plan))
    for name, (_, _, env) in plan.items():
        if env:
            print(f"({name}: {' '.join(f'{k}={v}' for k, v in env.items())})")
    for name in horovod:
        got = figures[name]
        every = ", ".join(f"{r[name]['large_min']:.2f}/{r[name]['1MiB']:.2f}" for r in per_round
                          if r[name]["large_min"] is not None and r[name]["1MiB"] is not None)
        shown = {key: "-" if value is None else f"{value:.2f}" for key, value in got.items()}
        print(f"P5 {name} / torch: >= 16 MiB {shown['large_min']}, 1 MiB {shown['1MiB']}"
              f" (each round's, >= 16 MiB/1 MiB: {every})")
    if args.json:
        args.json.write_text(json.dumps({"hosts": hosts, "rounds": rounds, "busbw_GBps": busbw,
                                         "ratios": figures, "ratios_per_round": per_round,
                                         "env": {name: env for name, (_, _, env) in plan.items() if env}},
                                        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
