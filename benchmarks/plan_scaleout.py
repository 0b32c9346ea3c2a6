#!/usr/bin/env python3
"""DESIGN §6 "scale-out on paper": `Cluster.plan` over many recorded-fact hosts / over few.

    python benchmarks/plan_scaleout.py [--small 10] [--large 200] [--json out.json] [--compare-gc-freeze]
                                       [--fork-cost] [--ansible-floor]

plan over LARGE hosts / plan over SMALL hosts (wall time)        target <= 20 (for 200 / 10)
The small plan runs before and after the large one; the ratio divides by their mean (bracketed_plans).
--compare-gc-freeze: both plans again with the opt-in hvc_gc_freeze callback, and the ratios with / without
it at each size.
--fork-cost: what the controller's forks cost at each size. Under ansible-core's linear strategy (plan.yml
names none) ansible-playbook's process forks one worker per host and task, and a fork (with the worker's exit)
costs more the more memory that process holds, which grows with the hosts. The script samples that
process's memory during each plan, counts the host-tasks (each one a fork), then times fork + exit + wait in
a process of the same (mean) size, and prints the forks' share of each plan: the part of the large plan's
time per host above the small one's that they explain.
--ansible-floor: the same two sizes with a bare play instead of the plan (the recorded facts, then
FLOOR_TASKS tasks that each set one fact), run by ansible-playbook with the same forks and ansible.cfg:
how ansible-core itself scales on this machine, the floor under any plan's ratio.

The hosts exist only on paper: copies of the fixture hosts of tests/fixtures/plan/hosts.yml (Ubuntu
GPU servers, a Mac, two Raspberry Pis, a Debian CPU node), each with its group and group vars, named
<fixture>-<n>, with the fixture's recorded facts (tests/fixtures/facts/<fixture>.json) as theirs.
The plan runs every role's decide step through the package's runner (what `horovod-cluster plan
--facts-dir` does) and reaches no host: their ssh is a program that does not exist. Nothing here
needs the sandbox or the network. Wall times on a shared machine: the ratio is the result.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

from horovod_cluster import Cluster
from horovod_cluster.cluster import recorded_plan_forks

REPO = Path(__file__).resolve().parents[1]
FIXTURE_INVENTORY = REPO / "tests" / "fixtures" / "plan" / "hosts.yml"
FIXTURE_FACTS = REPO / "tests" / "fixtures" / "facts"
# Fixture hosts preflight refuses by design (32-bit Pi OS: PyTorch has no armv7l wheels); a refused
# host stops its plan early, which would make the large plan look cheaper than it is.
REFUSED_BY_DESIGN = {"pi4-32"}


def groups_with_hosts(node: dict, found: list[dict] | None = None) -> list[dict]:
    """The inventory groups that list hosts, in file order (depth first)."""
    found = [] if found is None else found
    if node.get("hosts"):
        found.append(node)
    for child in (node.get("children") or {}).values():
        groups_with_hosts(child or {}, found)
    return found


def paper_cluster(count: int, folder: Path) -> tuple[Path, Path]:
    """An inventory of `count` hosts (round robin over the fixture hosts) and its facts folder."""
    inventory = yaml.safe_load(FIXTURE_INVENTORY.read_text())
    inventory["all"]["vars"].pop("cluster_facts_dir", None)  # passed as facts_dir instead
    groups = groups_with_hosts(inventory["all"])
    slots = [(group, name, hostvars) for group in groups for name, hostvars in group["hosts"].items()
             if name not in REFUSED_BY_DESIGN]
    for group in groups:
        group["hosts"] = {}
    facts = folder / "facts"
    facts.mkdir(parents=True)
    for n, (group, name, hostvars) in zip(range(count), itertools.cycle(slots)):
        host = f"{name}-{n:03d}"
        group["hosts"][host] = {**(hostvars or {}), "ansible_host": f"{host}.invalid"}
        shutil.copyfile(FIXTURE_FACTS / f"{name}.json", facts / f"{host}.json")
    for group in groups:
        group["hosts"] = group["hosts"] or None  # an empty group stays valid YAML for ansible
    path = folder / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    return path, facts


# The project's ansible.cfg callbacks and the opt-in hvc_gc_freeze (the environment overrides ansible.cfg).
WITH_GC_FREEZE = {"ANSIBLE_CALLBACKS_ENABLED": "hvc.horovod_cluster.hvc_changes,hvc.horovod_cluster.hvc_gc_freeze"}


def playbook_rss_mb() -> float | None:
    """Resident memory (MB) of the running ansible-playbook main process (the oldest one; its workers
    are forks with the same command line), None when none runs."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
            if b"ansible-playbook" not in cmdline or b"plan.yml" not in cmdline:
                continue
            status = Path(entry.path, "status").read_text()
            started = int(Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[19])
        except (OSError, ValueError, IndexError):
            continue
        rss = [line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")]
        if rss:
            found.append((started, int(rss[0]) / 1024))
    return min(found)[1] if found else None


class MemorySampler(threading.Thread):
    """Samples playbook_rss_mb() once a second while a plan runs."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(1.0):
            rss = playbook_rss_mb()
            if rss is not None:
                self.samples.append(rss)


# Run in a fresh interpreter (this script's own process holds the plans' results): grow to the size with
# small objects, as a controller does, freeze the collector as hvc_gc_freeze does, then fork and wait.
_FORK_PROBE = """
import gc, os, sys, time
def rss_mb():
    status = open("/proc/self/status").read()
    return int(next(l.split()[1] for l in status.splitlines() if l.startswith("VmRSS:"))) / 1024
ballast = []
while rss_mb() < float(sys.argv[1]):
    ballast.extend({"key": "x" * 64 + str(i)} for i in range(10000))
gc.freeze()
rounds = int(sys.argv[2])
start = time.perf_counter()
for _ in range(rounds):
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
print((time.perf_counter() - start) / rounds * 1000)
"""


def fork_ms(rss_mb: float, rounds: int = 300) -> float:
    """Milliseconds for fork + exit + wait in a process that holds about `rss_mb` MB."""
    probe = subprocess.run([sys.executable, "-c", _FORK_PROBE, str(rss_mb), str(rounds)],
                           capture_output=True, text=True, check=True)
    return float(probe.stdout)


def host_tasks(artifacts: Path) -> int:
    """Host-task pairs of a run (its runner_on_start events); ansible's linear forks a worker for each."""
    events = (json.loads(path.read_text()) for path in (artifacts / "job_events").glob("*.json"))
    return sum(1 for event in events if event.get("event") == "runner_on_start")


def timed_plan(count: int, work: Path, forks: int | None, env: dict[str, str] | None = None,
               sample_memory: bool = False, again: bool = False) -> dict:
    folder = f"n{count}-{len(env or {})}{'-again' if again else ''}"
    inventory, facts = paper_cluster(count, work / folder)
    cluster = Cluster(inventory, artifacts_dir=work / "runs", forks=forks)
    saved = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    sampler = MemorySampler() if sample_memory else None
    try:
        if sampler:
            sampler.start()
        start = time.monotonic()
        result = cluster.plan(facts_dir=facts)
        seconds = time.monotonic() - start
    finally:
        if sampler:
            sampler.done.set()
            sampler.join()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    planned = [host for host, roles in result.hosts.items() if roles]
    refused = sorted(host for host, roles in result.hosts.items()
                     if any(isinstance(p, dict) and p.get("action") == "fail" for p in roles.values()))
    if not result.ok or len(planned) != count:
        sys.exit(f"plan of {count} hosts failed ({len(planned)} planned, refused: {refused[:5]}):\n"
                 f"{result.run.error or result.to_json()[:3000]}")
    label = " with hvc_gc_freeze" if env else ""
    print(f"{count:4d} hosts{label}: {seconds:7.1f} s  ({seconds / count:.2f} s per host)", flush=True)
    figures = {"hosts": count, "seconds": round(seconds, 2)}
    if sampler and sampler.samples:
        tasks = host_tasks(Path(result.run.artifacts))
        # forked_host_tasks (now equal to host_tasks) stays in the JSON so it reads like earlier runs' files
        figures.update(rss_mean_mb=round(sum(sampler.samples) / len(sampler.samples), 1),
                       rss_max_mb=round(max(sampler.samples), 1), host_tasks=tasks, forked_host_tasks=tasks)
    return figures


def bracketed_plans(small_count: int, large_count: int, work: Path, forks: int | None,
                    sample_memory: bool = False) -> tuple[dict, dict]:
    """The small plan before and after the large one, and the large one.

    A shared 2-core machine's speed drifts by 15 % from one minute to the next (the same 10-host plan took
    27.6 s, 31.9 s and 33.6 s in a row), and a 30-second plan is one sample of it where the large plan
    averages ten minutes; the mean of a small plan on each side of the large one is measured at the large
    plan's speed. The small figures keep both runs ("runs_seconds") and their mean as "seconds"."""
    first = timed_plan(small_count, work, forks, sample_memory=sample_memory)
    large = timed_plan(large_count, work, forks, sample_memory=sample_memory)
    after = timed_plan(small_count, work, forks, again=True)
    runs = [first["seconds"], after["seconds"]]
    small = {**first, "seconds": round(sum(runs) / len(runs), 2), "runs_seconds": runs}
    print(f"{small_count:4d} hosts, before and after: {runs[0]} s and {runs[1]} s, mean {small['seconds']} s",
          flush=True)
    return small, large


def fork_share(small: dict, large: dict) -> dict:
    """Times fork + exit + wait at each plan's mean controller memory; prints the forks' share."""
    for plan in (small, large):
        plan["fork_ms"] = round(fork_ms(plan["rss_mean_mb"]), 2)
        plan["fork_seconds"] = round(plan["host_tasks"] * plan["fork_ms"] / 1000, 1)
        print(f"{plan['hosts']:4d} hosts: ansible-playbook {plan['rss_mean_mb']:.0f} MB on average "
              f"({plan['rss_max_mb']:.0f} MB at most), {plan['host_tasks']} host-tasks (a fork each), "
              f"fork + exit + wait at that size {plan['fork_ms']:.2f} ms: {plan['fork_seconds']:.1f} s "
              f"of {plan['seconds']} s", flush=True)
    per_host = [plan["seconds"] / plan["hosts"] for plan in (small, large)]
    fork_per_host = [plan["fork_seconds"] / plan["hosts"] for plan in (small, large)]
    per_host_growth, fork_growth = per_host[1] - per_host[0], fork_per_host[1] - fork_per_host[0]
    print(f"per host: {per_host[0]:.3f} s at {small['hosts']} hosts, {per_host[1]:.3f} s at {large['hosts']} "
          f"({per_host_growth:+.3f} s); of which forks {fork_per_host[0]:.3f} s and {fork_per_host[1]:.3f} s "
          f"({fork_growth:+.3f} s)", flush=True)
    return {"per_host_growth_s": round(per_host_growth, 3), "fork_per_host_growth_s": round(fork_growth, 3)}


FLOOR_TASKS = 40


def floor_seconds(count: int, work: Path, forks: int | None, label: str) -> float:
    """Wall seconds of the bare play over `count` paper hosts (see --ansible-floor)."""
    folder = work / f"floor-{count}-{label}"
    inventory, facts = paper_cluster(count, folder)
    tasks = [{"name": "Load the recorded facts", "hvc.horovod_cluster.hvc_recorded_facts": {"dir": str(facts)}}]
    tasks += [{"name": f"Set fact {n}", "ansible.builtin.set_fact": {f"floor_{n}": "{{ inventory_hostname }}"}}
              for n in range(FLOOR_TASKS)]
    play = folder / "floor.yml"
    play.write_text(yaml.safe_dump([{"name": "Floor", "hosts": "all", "gather_facts": False, "tasks": tasks}],
                                   sort_keys=False))
    argv = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory),
            "--forks", str(forks or recorded_plan_forks()), str(play)]
    start = time.monotonic()
    # REPO's ansible.cfg: the same collection path and callbacks as the plan
    subprocess.run(argv, cwd=REPO, env={**os.environ, "ANSIBLE_CACHE_PLUGIN": "memory"}, check=True,
                   stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    print(f"{count:4d} hosts, bare play ({FLOOR_TASKS + 1} tasks): {seconds:7.1f} s", flush=True)
    return round(seconds, 2)


def ansible_floor(small_count: int, large_count: int, work: Path, forks: int | None) -> dict:
    """The bare play's large / small ratio (the small one before and after the large one)."""
    before = floor_seconds(small_count, work, forks, "before")
    large = floor_seconds(large_count, work, forks, "large")
    after = floor_seconds(small_count, work, forks, "after")
    ratio = large / ((before + after) / 2)
    print(f"bare play over {large_count} / over {small_count} hosts: {ratio:.2f} "
          f"({large} s / {before} s and {after} s)", flush=True)
    return {"tasks": FLOOR_TASKS + 1, "small_runs_seconds": [before, after], "large_seconds": large,
            "ratio": round(ratio, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=10, help="hosts of the small plan (default 10)")
    parser.add_argument("--large", type=int, default=200, help="hosts of the large plan (default 200)")
    parser.add_argument("--forks", type=int,
                        help="ansible forks (default: a plan over recorded facts' own, the cores + 1)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--compare-gc-freeze", action="store_true",
                        help="also plan both sizes with the opt-in hvc_gc_freeze callback")
    parser.add_argument("--fork-cost", action="store_true",
                        help="also sample the controller's memory and time its forks at that size")
    parser.add_argument("--ansible-floor", action="store_true",
                        help="also time a bare play (one fact a task) at both sizes: ansible-core's own ratio")
    args = parser.parse_args()
    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="hvc-plan-bench-") as tmp:
        small, large = bracketed_plans(args.small, args.large, Path(tmp), args.forks, sample_memory=args.fork_cost)
        if args.fork_cost:
            figures["fork_cost"] = fork_share(small, large)
        if args.ansible_floor:
            figures["ansible_floor"] = ansible_floor(args.small, args.large, Path(tmp), args.forks)
        if args.compare_gc_freeze:
            for name, size, unfrozen in (("small", args.small, small), ("large", args.large, large)):
                frozen = timed_plan(size, Path(tmp), args.forks, WITH_GC_FREEZE)
                ratio = frozen["seconds"] / unfrozen["seconds"]
                print(f"plan over {size} hosts, with / without hvc_gc_freeze: {ratio:.3f} "
                      f"({frozen['seconds']} s / {unfrozen['seconds']} s)", flush=True)
                figures[f"{name}_with_gc_freeze"] = {**frozen, "ratio_with_to_without": round(ratio, 3)}
    ratio = large["seconds"] / small["seconds"]
    # 20 for 200 / 10 hosts: at most linear in the hosts, whatever sizes are asked for.
    target = args.large / args.small
    verdict = "met" if ratio <= target else "NOT met"
    print(f"plan over {args.large} / over {args.small} hosts: {ratio:.2f} "
          f"({large['seconds']} s / {small['seconds']} s), target <= {target:g}: {verdict}")
    figures.update(small=small, large=large, ratio=round(ratio, 3), target=target, met=ratio <= target,
                   forks=args.forks or f"default: {recorded_plan_forks()} (cores + 1)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
