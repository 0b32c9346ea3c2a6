"""A real Slurm on the rolled-out sandbox (issue 48): playbooks/slurm.yml makes the 3 hosts a Slurm cluster
(Debian's Slurm 22.05: slurmctld on hvc-node1, slurmd and munge on each, the cluster's one munge key, one
partition), and a second run changes nothing. A login host, a container of the sandbox's image on its network
with slurm-client, munge with the cluster's key and this checkout's horovod-cluster, then runs
`salloc -N 3 --ntasks-per-node 1 horovod-cluster run ...` (3 ranks, one per node: the allocation's, where the
rollout's hostfile gives 6) and `sbatch --wait` of examples/train.sbatch on 2 nodes with 2 tasks each (the
hpc_modules modulefile and horovodrun alone: 4 ranks on the 2 nodes Slurm chose).

Slow tier (HVC_SLOW=1): about 2 min (the packages on 3 hosts, Lmod, two short trainings).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_run import run_playbook
from horovod_cluster.sandbox import NETWORK, node_image
from training_output import assert_trained_everywhere

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
HOSTS = ["hvc-node1", "hvc-node2", "hvc-node3"]
LOGIN = "hvc-slurm-login"
SHARED = "/srv/hvc-slurm"  # the same folder on every node, as a shared file system would be

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
    pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                       reason="slow (Slurm and Lmod on 3 hosts, a login host, two trainings, 2 min): set HVC_SLOW=1"),
]


def podman(*args: str, check: bool = True, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check, timeout=timeout)


def on_login(script: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """`script` in a login shell of the login host, from this checkout."""
    return podman("exec", "-w", str(ROOT), LOGIN, "bash", "-lc", script, check=False, timeout=timeout)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """slurm.yml twice (the second changes nothing) with a key file of this test; modules.yml with Lmod."""
    key = tmp_path_factory.mktemp("slurm") / "munge.key"
    extra = {"slurm_munge_key_file": str(key)}
    first = run_playbook("slurm.yml", SANDBOX, extra_vars=extra)
    assert first.rc == 0, "\n".join(first.failure_messages(h) for h in HOSTS) + first.stderr[-2000:]
    second = run_playbook("slurm.yml", SANDBOX, extra_vars=extra)
    modules = run_playbook("modules.yml", SANDBOX, extra_vars={"hpc_modules_install_lmod": True})
    assert modules.rc == 0, "\n".join(modules.failure_messages(h) for h in HOSTS)
    return first, second, key


@pytest.fixture(scope="module")
def login(slurm):
    """The login host: this checkout and its virtual environment's Python mounted at the same paths, the
    sandbox's SSH key (read-only), slurm-client and munge from Debian with the cluster's key and slurm.conf."""
    _, _, key = slurm
    ssh_dir = Path(yaml.safe_load((SANDBOX / "hosts.yml").read_text())["all"]["vars"]
                   ["ansible_ssh_private_key_file"]).parent
    podman("rm", "-f", LOGIN, check=False)
    podman("run", "-d", "--name", LOGIN, "--hostname", LOGIN, "--network", NETWORK,
           "-v", f"{sys.base_prefix}:{sys.base_prefix}:ro", "-v", f"{ROOT}:{ROOT}", "-v", f"{ssh_dir}:{ssh_dir}:ro",
           node_image("amd64"))
    try:
        setup = on_login("export DEBIAN_FRONTEND=noninteractive; pkgs='slurm-client munge';"
                         " apt-get install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1 ||"
                         " { apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs >/dev/null; }")
        assert setup.returncode == 0, setup.stdout + setup.stderr
        conf = key.parent / "slurm.conf"
        podman("cp", "hvc-node1:/etc/slurm/slurm.conf", str(conf))
        podman("cp", str(conf), f"{LOGIN}:/etc/slurm/slurm.conf")
        podman("cp", str(key), f"{LOGIN}:/etc/munge/munge.key")
        started = on_login("chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key"
                           " && systemctl restart munge && sinfo --noheader --Node --format '%N %t'")
        assert started.returncode == 0, started.stdout + started.stderr
        yield started.stdout
    finally:
        podman("rm", "-f", LOGIN, check=False)


def test_the_playbook_makes_a_slurm_cluster_and_a_second_run_changes_nothing(slurm):
    first, second, key = slurm
    assert set(first.stats) == set(HOSTS) and first.changed() > 0
    assert second.rc == 0 and second.changed() == 0, second.stats
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_size == 1024
    for host in HOSTS:
        shown = podman("exec", host, "stat", "-c", "%U %a %s", "/etc/munge/munge.key").stdout.split()
        assert shown == ["munge", "400", "1024"], (host, shown)
        services = ["munge", "slurmd"] + (["slurmctld"] if host == "hvc-node1" else [])
        active = podman("exec", host, "systemctl", "is-active", *services, check=False).stdout.split()
        assert active == ["active"] * len(services), (host, active)
    assert podman("exec", "hvc-node2", "systemctl", "is-enabled", "slurmctld", check=False).stdout.strip() != "enabled"
    # the nodes by their own hostnames and CPUs, all idle in the one partition
    nodes = podman("exec", "hvc-node1", "sinfo", "--noheader", "--Node", "--format", "%N %c %P %t").stdout.split("\n")
    cpus = podman("exec", "hvc-node1", "nproc").stdout.strip()
    assert sorted(filter(None, nodes)) == [f"{h} {cpus} horovod* idle" for h in HOSTS], nodes


def test_a_key_that_is_not_the_clusters_is_refused(slurm):
    """A credential of another munge key (a second munged on hvc-node2, its own socket) does not decode with the
    node's munged: the cluster's key is what admits a host; one of the node's own decodes."""
    own = podman("exec", "hvc-node2", "bash", "-c", "munge -n | unmunge", check=False)
    assert own.returncode == 0 and "Success (0)" in own.stdout, own.stdout + own.stderr
    foreign = podman("exec", "hvc-node2", "bash", "-c",
                     "d=$(mktemp -d) && chown munge: $d && chmod 711 $d && head -c 1024 /dev/urandom > $d/k"
                     " && chown munge: $d/k && chmod 400 $d/k && runuser -u munge -- /usr/sbin/munged --key-file $d/k"
                     " --socket $d/sock --pid-file $d/pid --log-file $d/log --seed-file $d/seed"
                     " && munge -S $d/sock -n > $d/cred && unmunge < $d/cred; rc=$?; kill $(cat $d/pid); rm -rf $d;"
                     " exit $rc", check=False)
    assert foreign.returncode != 0 and "Invalid credential" in foreign.stderr, foreign.stdout + foreign.stderr


def test_run_inside_salloc_uses_the_allocations_hosts_and_slots(login):
    assert sorted(login.split("\n")) == sorted(["", *(f"{h} idle" for h in HOSTS)]), login
    run = on_login("salloc --nodes 3 --ntasks-per-node 1 .venv/bin/horovod-cluster run -i inventories/sandbox"
                   " --copy examples/train.py --json /tmp/job.json -- python train.py --epochs 3 2>&1;"
                   " echo rc=$?; cat /tmp/job.json")
    out = run.stdout
    print(out)
    assert "salloc: Granted job allocation" in out and "rc=0" in out, out + run.stderr
    job = yaml.safe_load(out[out.index("rc=0") + 4:])
    assert job["np"] == 3 and sorted(job["hosts"]) == HOSTS, job  # the rollout's hostfile gives 6
    assert_trained_everywhere(out, job, 3)
    assert "salloc: Relinquishing job allocation" in out


def test_sbatch_runs_horovodrun_with_the_modulefile_on_the_allocated_nodes(login):
    for host in HOSTS:  # a fresh folder: Slurm's job ids start again with a new controller state
        podman("exec", host, "bash", "-c", f"rm -rf {SHARED} && mkdir -p {SHARED}")
        podman("cp", str(ROOT / "examples" / "train.py"), f"{host}:{SHARED}/train.py")
    podman("cp", str(ROOT / "examples" / "train.sbatch"), f"{LOGIN}:/tmp/train.sbatch")
    submitted = on_login(f"sbatch --wait --parsable --chdir {SHARED} /tmp/train.sbatch --epochs 3")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    job_id = submitted.stdout.strip().split(";")[0]
    # the output file is on the node the batch script ran on (the allocation's first)
    outputs = {host: podman("exec", host, "cat", f"{SHARED}/horovod-train-{job_id}.out", check=False)
               for host in HOSTS}
    found = {host: out.stdout for host, out in outputs.items() if out.returncode == 0}
    assert len(found) == 1, outputs
    text = next(iter(found.values()))
    print(text)
    ranks = re.search(r"^job \d+: 4 ranks on (\S+)$", text, re.M)
    assert ranks, text
    hosts = [entry.split(":")[0] for entry in ranks.group(1).split(",")]
    assert len(hosts) == 2 and set(hosts) < set(HOSTS) and all(e.endswith(":2") for e in ranks.group(1).split(","))
    assert next(iter(found)) == hosts[0]
    assert_trained_everywhere(text, {"np": 4, "hosts": hosts}, 3)
    accounting = on_login(f"scontrol show job {job_id}")
    assert "JobState=COMPLETED" in accounting.stdout and "ExitCode=0:0" in accounting.stdout, accounting.stdout
