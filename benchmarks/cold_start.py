#!/usr/bin/env python3
"""P1c of issue 50: the README's main job on a fresh machine / the Horovod compile alone on one host of it.

    python benchmarks/cold_start.py [--wipe] [--clone DIR] [--json FILE]

Runs `scripts/sandbox-run.sh` (setup, sandbox up, rollout, check --bench) from a fresh clone of this checkout's
HEAD, with a new venv (HVC_VENV) and a runs folder of its own (HOROVOD_CLUSTER_ARTIFACTS), then reads the
compile's seconds from the rollout's events. Prints each stage's seconds, the compile's, P1c (target <= 2.0) and
the rollout's slowest tasks: what a first rollout spends besides the compile.

--wipe first removes what a fresh machine lacks, as scripts/ci-cold.sh does: every podman container, network and
image, ~/.cache/horovod-cluster (images, wheels, wheelhouse, runs) and pip's cache. DESTRUCTIVE for this
machine's podman state. The system packages setup.sh installs with apt stay (their install is not part of P1c).
Without --wipe the sandbox is taken down first (fresh hosts) but images and caches stay: the JSON says which.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMPILE = "Horovod | Compile with pip wheel"
CACHE = Path(os.environ.get("HOROVOD_CLUSTER_CACHE", Path.home() / ".cache" / "horovod-cluster"))
TARGET = 2.0
STAGE_LINE = re.compile(r"^=== stage (\S+): ok in (\d+) s$", re.M)


def stage_seconds(output: str) -> dict[str, int]:
    """scripts/stage.sh's `=== stage NAME: ok in N s` lines, in order."""
    return {name: int(seconds) for name, seconds in STAGE_LINE.findall(output)}


def task_rows(events: list[dict]) -> list[list]:
    """[seconds, host, playbook, role, task] of every task that ended ok or failed, slowest first."""
    ends = (e["event_data"] for e in events if e.get("event") in ("runner_on_ok", "runner_on_failed"))
    rows = [[round(d.get("duration", 0.0), 1), d.get("host", ""), Path(d.get("playbook", "")).name,
             d.get("role", ""), d.get("task", "")] for d in ends]
    return sorted(rows, key=lambda row: -row[0])


def read_events(runs: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(runs.rglob("job_events/*.json"))]


def ratios(stages: dict[str, int], tasks: list[list]) -> dict:
    """P1c, and where the rest goes on the host that compiled (the others wait for its wheel): each role's
    task seconds there, by playbook (site.yml is the rollout, check.yml the check)."""
    compiles = [(s, host) for s, host, _, _, task in tasks if task == COMPILE]
    if not compiles:
        raise SystemExit(f"no '{COMPILE}' task ran: the main job was not cold (a cached wheel was installed)")
    compile_s, builder = max(compiles)
    roles: dict[str, float] = {}
    for s, host, playbook, role, _ in tasks:
        if host == builder:
            key = f"{playbook} {role or '(play)'}"
            roles[key] = round(roles.get(key, 0.0) + s, 1)
    total = sum(stages.values())
    return {"main_job_s": total, "compile_s": compile_s, "p1c": round(total / compile_s, 3),
            "outside_compile_s": round(total - compile_s, 1), "compiled_on": sorted({h for _, h in compiles}),
            "max_for_target_s": round(TARGET * compile_s, 1),
            "builder_roles_s": dict(sorted(roles.items(), key=lambda kv: -kv[1]))}


def wipe() -> None:
    podman = ["podman"]
    if shutil.which("podman"):
        for _ in range(2):  # a dead conmon needs a second rm
            ids = subprocess.run([*podman, "ps", "-aq"], capture_output=True, text=True).stdout.split()
            if ids:
                subprocess.run([*podman, "rm", "-f", "-t", "1", *ids], capture_output=True)
        nets = subprocess.run([*podman, "network", "ls", "--format", "{{.Name}}"], capture_output=True,
                              text=True).stdout.split()
        for net in (n for n in nets if n != "podman"):
            subprocess.run([*podman, "network", "rm", "-f", net], capture_output=True)
        images = subprocess.run([*podman, "images", "-q"], capture_output=True, text=True).stdout.split()
        if images:
            subprocess.run([*podman, "rmi", "-f", *images], capture_output=True)
    shutil.rmtree(CACHE, ignore_errors=True)
    shutil.rmtree(Path.home() / ".cache" / "pip", ignore_errors=True)


def what_is_warm() -> dict[str, bool]:
    images = shutil.which("podman") and subprocess.run(["podman", "images", "-q"], capture_output=True,
                                                       text=True).stdout.strip()
    return {"images": bool(images), "wheels": any(CACHE.glob("wheels/*/horovod-*.whl")),
            "wheelhouse": any(CACHE.glob("wheelhouse/*.whl")), "pip_cache": (Path.home() / ".cache" / "pip").exists()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wipe", action="store_true", help="remove podman's images and containers and the caches "
                        "first (DESTRUCTIVE): the fresh machine P1c is about")
    parser.add_argument("--clone", type=Path, help="where to clone HEAD [default: a new temporary folder]")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    if args.wipe:
        wipe()
    elif shutil.which("horovod-cluster"):
        subprocess.run(["horovod-cluster", "sandbox", "down"], check=True, cwd=REPO)
    warm = what_is_warm()
    work = Path(tempfile.mkdtemp(prefix="hvc-cold-"))
    clone = args.clone or work / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    head = subprocess.run(["git", "-C", str(clone), "log", "--oneline", "-1"], capture_output=True,
                          text=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(HVC_VENV=str(work / "venv"), HOROVOD_CLUSTER_ARTIFACTS=str(work / "runs"), HVC_REPORTS=str(work))
    print(f"cold start of {head}; warm before it: {warm}", flush=True)
    start = time.monotonic()
    run = subprocess.run(["bash", "scripts/sandbox-run.sh"], cwd=clone, env=env, capture_output=True, text=True)
    wall = round(time.monotonic() - start, 1)
    (work / "sandbox-run.log").write_text(run.stdout + run.stderr)
    if run.returncode:
        print(run.stdout[-4000:], run.stderr[-4000:], sep="\n")
        return f"scripts/sandbox-run.sh failed (exit {run.returncode}); log: {work / 'sandbox-run.log'}"
    stages = stage_seconds(run.stdout)
    tasks = task_rows(read_events(work / "runs"))
    figures = {"commit": head, "warm_before": warm, "wall_s": wall, "stages_s": stages, **ratios(stages, tasks),
               "tasks": tasks}
    print("stages: " + ", ".join(f"{name} {s} s" for name, s in stages.items()) + f" (wall {wall} s)")
    print(f"P1c main job / one compile: {figures['p1c']} ({figures['main_job_s']} s / {figures['compile_s']} s, "
          f"compiled on {', '.join(figures['compiled_on'])}); target <= {TARGET}: the job within "
          f"{figures['max_for_target_s']} s" + ("" if not any(warm.values()) else " (NOT cold: see warm_before)"))
    print(f"on {figures['compiled_on'][0]}, task seconds by role: "
          + ", ".join(f"{key} {s:.0f}" for key, s in figures["builder_roles_s"].items() if s >= 1))
    print("slowest tasks: " + "; ".join(f"{s:.0f} s {h} {t}" for s, h, _, _, t in tasks[:12]))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
