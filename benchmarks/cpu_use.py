"""CPU seconds a rollout used, and by whom: each sandbox host (its container, as podman counts it) and the rest
of the machine, `controller` below: ansible-playbook, its workers and their ssh clients, this script, and the
kernel's own threads wherever they work for the hosts (memory reclaim, the network bridge). Run with nothing else
on the machine, as cluster_ratios.py asks.

The sandbox's hosts share the machine's cores, so a rollout that keeps them all busy cannot go faster by doing its
work in another order, only by doing less of it: `busy` (the CPU seconds over wall seconds times cores) says which
of the two a ratio is about, and `at_full_busy_s` is the rollout's wall time were the cores busy all the time.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path


def machine_busy_seconds(proc_stat: str) -> float:
    """Busy CPU seconds since boot over all CPUs, from /proc/stat's first line: user, nice, system, irq,
    softirq and steal (guest time is inside user already); idle and iowait are not busy."""
    fields = proc_stat.splitlines()[0].split()
    if fields[0] != "cpu":
        raise ValueError(f"not /proc/stat's summary line: {fields[:3]}")
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def parse_podman_cpu(text: str) -> dict[str, float]:
    """`podman stats --no-stream --format '{{.Name}} {{.CPUNano}}'`: each container's CPU seconds since it started."""
    return {name: int(nano) / 1e9 for name, nano in (line.split() for line in text.splitlines() if line.strip())}


def container_cpu_seconds(names: list[str]) -> dict[str, float]:
    out = subprocess.run(["podman", "stats", "--no-stream", "--format", "{{.Name}} {{.CPUNano}}", *names],
                         check=True, capture_output=True, text=True).stdout
    return parse_podman_cpu(out)


class CpuUse:
    """Start before a rollout, call done(wall seconds) after it."""

    def __init__(self, hosts: list[str]):
        self.hosts = hosts
        self.start = self._read()

    def _read(self) -> tuple[float, dict[str, float]]:
        return machine_busy_seconds(Path("/proc/stat").read_text()), container_cpu_seconds(self.hosts)

    def done(self, wall: float) -> dict:
        (machine_0, hosts_0), (machine_1, hosts_1) = self.start, self._read()
        hosts = {h: round(hosts_1[h] - hosts_0.get(h, 0.0), 1) for h in self.hosts}
        total = machine_1 - machine_0
        cores = os.cpu_count() or 1
        return {"wall_s": round(wall, 1), "cpu_s": round(total, 1), "hosts": hosts,
                "controller": round(total - sum(hosts.values()), 1), "cores": cores,
                "busy": round(total / (wall * cores), 3), "at_full_busy_s": round(total / cores, 1)}


def describe(label: str, use: dict) -> str:
    hosts = " + ".join(f"{s:.0f}" for s in use["hosts"].values())
    return (f"CPU of {label}: {use['cpu_s']:.0f} s in {use['wall_s']:.0f} s (hosts {hosts}, controller and the rest"
            f" {use['controller']:.0f}); the {use['cores']} cores {use['busy']:.0%} busy, {use['at_full_busy_s']:.0f} s"
            " were they busy throughout")
