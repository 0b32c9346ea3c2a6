#!/usr/bin/env python3
"""DESIGN §6 "scale-out on paper": `Cluster.plan` over many recorded-fact hosts / over few.

    python benchmarks/plan_scaleout.py [--small 10] [--large 200] [--json out.json] [--compare-gc-freeze]

plan over LARGE hosts / plan over SMALL hosts (wall time)        target <= 20 (for 200 / 10)
--compare-gc-freeze: both plans again without the hvc_gc_freeze callback (ansible.cfg enables it), and
the ratios with / without it at each size.

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
import sys
import tempfile
import time
from pathlib import Path

import yaml

from horovod_cluster import Cluster

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


# The project's ansible.cfg callbacks less hvc_gc_freeze (the environment overrides ansible.cfg).
WITHOUT_GC_FREEZE = {"ANSIBLE_CALLBACKS_ENABLED": "hvc.horovod_cluster.hvc_changes"}


def timed_plan(count: int, work: Path, forks: int | None, env: dict[str, str] | None = None) -> dict:
    inventory, facts = paper_cluster(count, work / f"n{count}-{len(env or {})}")
    cluster = Cluster(inventory, artifacts_dir=work / "runs", forks=forks)
    saved = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    try:
        start = time.monotonic()
        result = cluster.plan(facts_dir=facts)
        seconds = time.monotonic() - start
    finally:
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
    label = " without hvc_gc_freeze" if env else ""
    print(f"{count:4d} hosts{label}: {seconds:7.1f} s  ({seconds / count:.2f} s per host)", flush=True)
    return {"hosts": count, "seconds": round(seconds, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=10, help="hosts of the small plan (default 10)")
    parser.add_argument("--large", type=int, default=200, help="hosts of the large plan (default 200)")
    parser.add_argument("--forks", type=int, help="ansible forks (default: ansible.cfg's, 10)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--compare-gc-freeze", action="store_true",
                        help="also plan both sizes without the hvc_gc_freeze callback")
    args = parser.parse_args()
    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="hvc-plan-bench-") as tmp:
        small = timed_plan(args.small, Path(tmp), args.forks)
        large = timed_plan(args.large, Path(tmp), args.forks)
        if args.compare_gc_freeze:
            for name, size, frozen in (("small", args.small, small), ("large", args.large, large)):
                unfrozen = timed_plan(size, Path(tmp), args.forks, WITHOUT_GC_FREEZE)
                ratio = frozen["seconds"] / unfrozen["seconds"]
                print(f"plan over {size} hosts, with / without hvc_gc_freeze: {ratio:.3f} "
                      f"({frozen['seconds']} s / {unfrozen['seconds']} s)", flush=True)
                figures[f"{name}_without_gc_freeze"] = {**unfrozen, "ratio_with_to_without": round(ratio, 3)}
    ratio = large["seconds"] / small["seconds"]
    # 20 for 200 / 10 hosts: at most linear in the hosts, whatever sizes are asked for.
    target = args.large / args.small
    verdict = "met" if ratio <= target else "NOT met"
    print(f"plan over {args.large} / over {args.small} hosts: {ratio:.2f} "
          f"({large['seconds']} s / {small['seconds']} s), target <= {target:g}: {verdict}")
    figures.update(small=small, large=large, ratio=round(ratio, 3), target=target, met=ratio <= target,
                   forks=args.forks)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
