#!/usr/bin/env python3
"""The DESIGN §6 targets, measured as ratios in one run on a private sandbox of fresh hosts.

    python benchmarks/cluster_ratios.py [--hosts 4] [--warm-wheels] [--compare-sharing] [--plan-scaleout]
                                        [--json out.json]

1. rollout of N fresh hosts / rollout of 1 fresh host          target <= 1.3  (build once, distribute)
2. no-op re-run / first run of site.yml (N hosts)               target <= 0.05
   (the no-op re-run finds the cluster settled; the seconds also show it with the fast path off)
3. `Cluster.rollout` / plain `ansible-playbook`, same no-op     target <= 1.05
   (the fastest of 5 runs each, the two alternating)
4. check of N hosts / check of 1 host (smoke test included)     target <= 1.5
5. allreduce bus bandwidth / iperf3 link bandwidth (N hosts)    target >= 0.5
   (the best size of 4 KiB .. 256 MiB; also against the link bandwidth while every link of the ring
   carries a stream at once, which is what an allreduce asks of this machine)
6. with --compare-sharing (cold wheels only): first rollout of N fresh hosts that share one compile /
   first rollout of N fresh hosts that each compile (horovod_share_wheels: false, the way the seeds
   and every other Horovod playbook do it)                     target <= 0.45
7. with --plan-scaleout: `Cluster.plan` over 200 recorded-fact hosts / over 10 (plan_scaleout.py's
   measurement, run after the sandbox is removed so that its hosts take no CPU from it)
                                                               target <= 20 (linear)

Each first rollout starts from fresh containers and, unless --warm-wheels, an empty wheel cache of
its own, so the 1-host and the N-host rollout each compile Horovod exactly once. The sandbox
(prefix hvc-bench, network hvc-bench) is removed at the end; the main sandbox is not touched.
Every benchmark host has one slot (hostfile_slots: 1): the smoke test and the allreduce run one rank per
host, as on hosts with cores of their own. The sandbox's hosts share this machine's cores, and a rank per
core on every host would measure how N times the ranks share them, not how the check scales with hosts.
Wall times on a shared 2-core machine: the ratios, not the seconds, are the result.
Each first rollout also reports its CPU seconds, each host's and the controller's, and how busy they kept
the machine's cores (cpu_use.py): what order cannot change and only less work can.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from horovod_cluster import Cluster
from horovod_cluster.content import content_dir
from horovod_cluster.ansible.events import TaskLog
from horovod_cluster.sandbox import Sandbox
from cpu_use import CpuUse, describe  # this folder's: who used the cores during each first rollout
from plan_scaleout import bracketed_plans  # this folder's: P6, "scale-out on paper"

PLAN_SMALL, PLAN_LARGE = 10, 200  # --plan-scaleout's sizes, the issue's
TARGETS = {  # name: (comparison, bound)
    "rollout_n_over_1": ("<=", 1.3),
    "noop_over_first": ("<=", 0.05),
    "runner_over_ansible_playbook": ("<=", 1.05),
    "check_n_over_1": ("<=", 1.5),
    "busbw_over_link": (">=", 0.5),
    "shared_over_every_host_compiling": ("<=", 0.45),
    "plan_large_over_small": ("<=", PLAN_LARGE / PLAN_SMALL),
}


def timed(fn):
    start = time.monotonic()
    result = fn()
    return result, time.monotonic() - start


# The allreduce table up to 256 MiB, the sizes the network target names.
BENCH_SIZES = [4096, 65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20]


def bring_up(box: Sandbox, inventory: Path, count: int) -> None:
    """Fresh hosts, and the sandbox's group_vars next to the inventory the sandbox writes; one slot per host."""
    box.down()
    box.up(count=count)
    shutil.copytree(content_dir() / "inventories" / "sandbox" / "group_vars", inventory / "group_vars",
                    dirs_exist_ok=True)
    (inventory / "group_vars" / "all" / "benchmark.yml").write_text(
        "---\n# cluster_ratios.py: one rank per host (the hosts share this machine's cores).\nhostfile_slots: 1\n")


def ring_link_gbps(hosts: list[str], seconds: int = 5) -> float:
    """iperf3 from each host to the next one around the ring, all at once: the slowest stream (GB/s).

    The bandwidth one link of the ring has while the others carry traffic too, as during a ring allreduce.
    The hosts are this sandbox's containers (podman exec); iperf3 came with the rollout."""
    servers = [subprocess.Popen(["podman", "exec", h, "timeout", str(seconds + 20), "iperf3", "--server",
                                 "--one-off", "--port", "5400"], stdout=subprocess.DEVNULL) for h in hosts]
    time.sleep(1)
    clients = [subprocess.Popen(["podman", "exec", h, "iperf3", "--client", hosts[(i + 1) % len(hosts)], "--port",
                                 "5400", "--time", str(seconds), "--json"], stdout=subprocess.PIPE, text=True)
               for i, h in enumerate(hosts)]
    rates = [json.loads(c.communicate()[0])["end"]["sum_received"]["bits_per_second"] / 8e9 for c in clients]
    for server in servers:
        server.wait()
    return min(rates)


COMPILE = "Horovod | Compile with pip wheel"
NOOP_RUNS = 5  # no-op rollouts by each runner (P3)


def cluster(inventory: Path, work: Path, wheels: Path | None, **extravars) -> Cluster:
    if wheels:
        extravars["horovod_artifacts_dir"] = str(wheels)
    return Cluster(inventory, artifacts_dir=work / "runs", extravars=extravars)


def first_rollout(hosts: Cluster, what: str, compiled_on: dict[str, list[str]], slowest: dict[str, list],
                  label: str, cpu: dict[str, dict]) -> float:
    """The rollout's seconds; the hosts the Horovod compile ran on go to compiled_on[label] (the evidence),
    its ten slowest tasks (seconds, host, task) to slowest[label] and its CPU seconds by host and controller
    to cpu[label] (where the time went)."""
    hosts.on_event = tasks = TaskLog()
    use = CpuUse(hosts.hosts())
    try:
        _, seconds = timed(lambda: must(hosts.rollout(), what))
    finally:
        hosts.on_event = None
    cpu[label] = use.done(seconds)
    compiled_on[label] = tasks.hosts(COMPILE)
    slowest[label] = sorted(((s, h, t) for (h, t), s in tasks.seconds.items()), reverse=True)[:10]
    # printed now too: a run cut short later (the bandwidth step is the longest) still says where the time went
    print(describe(label, cpu[label]), flush=True)
    print(f"slowest tasks of {label}: " + "; ".join(f"{s:.0f} s {h} {t}" for s, h, t in slowest[label][:5]), flush=True)
    return seconds


def settled(result):
    """A no-op rollout of the benchmark must have found the cluster settled (site.yml's fast path)."""
    if not (result.settled or {}).get("settled"):
        sys.exit(f"the no-op rollout was not settled: {json.dumps(result.settled)}")
    return result


def must(result, what: str):
    if not result.ok:
        sys.exit(f"{what} failed: {result.to_json()[:3000]}")
    return result


def measure(count: int, warm_wheels: bool, work: Path, compare_sharing: bool = False) -> dict:
    inventory = work / "inventory"
    box = Sandbox(prefix="hvc-bench", network="hvc-bench", inventory_dir=inventory, state_dir=work / "state")
    times: dict[str, float] = {}
    compiled_on: dict[str, list[str]] = {}
    slowest: dict[str, list] = {}
    cpu: dict[str, dict] = {}
    try:
        for n in (1, count):
            bring_up(box, inventory, n)
            wheels = None if warm_wheels else work / f"wheels-{n}"
            hosts = cluster(inventory, work, wheels)
            times[f"first_{n}"] = first_rollout(hosts, f"first rollout of {n}", compiled_on, slowest, f"first_{n}",
                                                  cpu)
            _, times[f"check_{n}"] = timed(lambda: must(hosts.check(smoke=True), f"check of {n}"))
            print(f"{n} host(s): first rollout {times[f'first_{n}']:.0f} s, check {times[f'check_{n}']:.0f} s",
                  flush=True)
        # No-op runs on the N hosts, alternating the two runners; the fastest run of each. A settled no-op takes
        # ~4 s, and run to run they vary by ~0.3 s, as much as ansible-runner adds (its event callback, the pty
        # it reads ansible-playbook's output through): two runs each could give 1.00 or 1.10 for the same code.
        env = {**os.environ, "ANSIBLE_CONFIG": str(content_dir() / "ansible.cfg")}
        # this interpreter's own ansible-playbook (a venv's, also when the venv is not activated)
        playbook = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or "ansible-playbook"
        plain_cmd = [playbook, str(content_dir() / "site.yml"), "-i", str(inventory)]
        if not warm_wheels:
            plain_cmd += ["-e", f"horovod_artifacts_dir={work / f'wheels-{count}'}"]
        runner, plain = [], []
        for _ in range(NOOP_RUNS):
            runner.append(timed(lambda: settled(must(hosts.rollout(), "no-op rollout")))[1])
            plain.append(timed(lambda: subprocess.run(plain_cmd, env=env, cwd=content_dir(), check=True,
                                                      stdout=subprocess.DEVNULL))[1])
        times["noop_runner"], times["noop_plain"] = min(runner), min(plain)
        noop_runs = {"runner": [round(t, 2) for t in runner], "ansible_playbook": [round(t, 2) for t in plain]}
        print(f"no-op of {count}: Cluster.rollout {noop_runs['runner']} s, ansible-playbook "
              f"{noop_runs['ansible_playbook']} s; P2 {times['noop_runner'] / times[f'first_{count}']:.3f}, "
              f"P3 {times['noop_runner'] / times['noop_plain']:.3f}", flush=True)
        # For comparison (no target): the same no-op with the fast path off, every role proving it has nothing to do.
        full = cluster(inventory, work, None if warm_wheels else work / f"wheels-{count}",
                       cluster_rollout_fast_path=False)
        _, times["noop_fast_path_off"] = timed(lambda: must(full.rollout(), "no-op rollout, fast path off"))
        sized = cluster(inventory, work, None, horovod_check_bench_sizes=BENCH_SIZES)
        bench = must(sized.check(smoke=False, bench=True), "bandwidth check")
        link = bench.bandwidth or {}
        rows = (link.get("allreduce") or {}).get("rows") or []
        best = max(rows, key=lambda row: row["busbw_GBps"], default=None)
        ring = ring_link_gbps(sized.hosts())
        if compare_sharing:
            # The same N fresh hosts and an empty wheel cache again, but every host compiles.
            bring_up(box, inventory, count)
            every = cluster(inventory, work, work / "wheels-every", horovod_share_wheels=False)
            label = f"first_{count}_every_host_compiling"
            times[label] = first_rollout(every, f"first rollout of {count}, every host compiling", compiled_on, slowest,
                                         label, cpu)
    finally:
        box.down()
    return {
        "hosts": count, "seconds": {k: round(v, 1) for k, v in times.items()},
        "noop_runs": noop_runs, "compiled_on": compiled_on, "slowest_tasks": slowest, "cpu": cpu,
        "network": {"allreduce": rows, "best": best, "link_GBps": (link.get("link") or {}).get("GBps"),
                    "ring_link_GBps": ring,
                    "best_busbw_over_ring_link": best["busbw_GBps"] / ring if best and ring else None},
        "ratios": {
            "rollout_n_over_1": times[f"first_{count}"] / times["first_1"],
            "noop_over_first": times["noop_runner"] / times[f"first_{count}"],
            "runner_over_ansible_playbook": times["noop_runner"] / times["noop_plain"],
            "check_n_over_1": times[f"check_{count}"] / times["check_1"],
            "busbw_over_link": link.get("busbw_over_link"),  # the check's: the best size's busbw / one link
            **({"shared_over_every_host_compiling":
                times[f"first_{count}"] / times[f"first_{count}_every_host_compiling"]} if compare_sharing else {}),
        },
    }


def p1_split(figures: dict) -> str | None:
    """P1 as (c + o) / (C + o'): each rollout's compile (the slowest host's compile task: the other hosts wait
    for it) and what it spends outside it, and the o below which the shared rollout would meet P1's target."""
    count, seconds, slowest = figures["hosts"], figures["seconds"], figures["slowest_tasks"]
    every = f"first_{count}_every_host_compiling"
    if every not in seconds:
        return None
    parts = {}
    for label in (f"first_{count}", every):
        compile_s = max((s for s, _, task in slowest[label] if task == COMPILE), default=0.0)
        parts[label] = (compile_s, seconds[label] - compile_s)
    (c, o), (c_every, o_every) = parts[f"first_{count}"], parts[every]
    bound = TARGETS["shared_over_every_host_compiling"][1]
    # (c + o) / (c_every + o + (o_every - o)) <= bound, solved for o with the rollouts' difference kept
    most = (bound * (c_every + o_every - o) - c) / (1 - bound)
    return (f"P1 split: sharing, compile {c:.0f} s + outside it {o:.0f} s; every host compiling, compile {c_every:.0f} s"
            f" + outside it {o_every:.0f} s; P1 <= {bound} would need the shared rollout's outside under {most:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=4, help="N, the larger cluster (default 4)")
    parser.add_argument("--warm-wheels", action="store_true",
                        help="use the machine's Horovod wheel cache (no compile) instead of an empty one per rollout")
    parser.add_argument("--compare-sharing", action="store_true",
                        help="also roll out N fresh hosts that each compile (cold wheels only; N more compiles)")
    parser.add_argument("--plan-scaleout", action="store_true",
                        help=f"also plan {PLAN_LARGE} and {PLAN_SMALL} recorded-fact hosts (plan_scaleout.py), "
                             "after the sandbox is removed")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.compare_sharing and args.warm_wheels:
        parser.error("--compare-sharing compares compiles: it needs cold wheels (leave out --warm-wheels)")
    with tempfile.TemporaryDirectory(prefix="hvc-bench-") as tmp:
        figures = measure(args.hosts, args.warm_wheels, Path(tmp), args.compare_sharing)
        if args.plan_scaleout:
            small, large = bracketed_plans(PLAN_SMALL, PLAN_LARGE, Path(tmp) / "plans", forks=None)
            figures["plan_scaleout"] = {"small": small, "large": large}
            figures["seconds"].update({f"plan_{PLAN_SMALL}": small["seconds"], f"plan_{PLAN_LARGE}": large["seconds"]})
            figures["ratios"]["plan_large_over_small"] = large["seconds"] / small["seconds"]
    figures["warm_wheels"] = args.warm_wheels
    print(f"\n{'ratio':32} {'measured':>9} {'target':>8}  verdict")
    for name, value in figures["ratios"].items():
        op, bound = TARGETS[name]
        met = value is not None and (value <= bound if op == "<=" else value >= bound)
        shown = "n/a" if value is None else f"{value:.3f}"
        print(f"{name:32} {shown:>9} {op + ' ' + str(bound):>8}  {'met' if met else 'NOT met'}")
    print("seconds:", json.dumps(figures["seconds"]))
    net = figures["network"]
    print("allreduce busbw GB/s by size: " + ", ".join(f"{r['bytes']} B {r['busbw_GBps']:.3f}" for r in net["allreduce"])
          + f"; iperf3 one link {net['link_GBps']}, each link of the ring at once {net['ring_link_GBps']:.3f}"
          + f"; best busbw / ring link {net['best_busbw_over_ring_link']}")
    runs = figures["noop_runs"]
    print(f"no-op runs (s), Cluster.rollout: {runs['runner']}; ansible-playbook: {runs['ansible_playbook']}; "
          f"the runner adds {min(runs['runner']) - min(runs['ansible_playbook']):+.2f} s (fastest runs)")
    print("Horovod compiled on:", json.dumps(figures["compiled_on"]))
    if split := p1_split(figures):
        print(split)
    for label, use in figures["cpu"].items():
        print(describe(label, use))
    for label, tasks in figures["slowest_tasks"].items():
        print(f"slowest tasks of {label}: " + "; ".join(f"{s:.0f} s {h} {t}" for s, h, t in tasks[:5]))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
