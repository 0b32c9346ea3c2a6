"""`horovod-cluster run` on the rolled-out sandbox (issue 17): the project's example training script
across every slot of the 3 hosts with both controllers (the loss goes down, every rank ends with the
same weights), a failing script's own exit code, Ctrl-C and --timeout leaving no process of the job on any
host, and refusals, before anything starts: a host not rolled out, Open MPI majors that differ, CUDA tensors
where a host has no NCCL.

The CLI runs as a real subprocess (its exit code and output are what a user sees).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from horovod_cluster import Cluster
from horovod_cluster.job import MPI_RULES
from training_output import assert_trained_everywhere

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
EXAMPLE = ROOT / "examples" / "train.py"
JOBS = "/root/.cache/horovod-cluster/jobs"  # the job folders of root, the sandbox's ssh user
# Up to 6 ranks importing torch on 2 cores: Gloo's 30 s rendezvous default is too short under load.
SLOW_START = ["--env", "HOROVOD_GLOO_TIMEOUT_SECONDS=180"]

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def cli(*args: str, timeout: int = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    exe = shutil.which("horovod-cluster")
    assert exe, "horovod-cluster is not installed in this environment"
    return subprocess.run([exe, "run", "-i", str(SANDBOX), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})


def on_host(host: str, script: str) -> str:
    return subprocess.run(["podman", "exec", host, "sh", "-c", script], capture_output=True, text=True,
                          check=True).stdout


def job_processes(host: str, job_id: str) -> int:
    """Processes on `host` whose environment carries the job's marker."""
    found = on_host(host, f"grep -lsx 'HVC_JOB_ID={job_id}' -z /proc/[0-9]*/environ || true")
    return len(found.split())


@pytest.mark.parametrize("controller", ["gloo", "mpi"])
def test_run_trains_across_every_host(controller, tmp_path):
    hosts = Cluster(SANDBOX).hosts()
    result_file = tmp_path / "job.json"
    run = cli("--controller", controller, "--copy", str(EXAMPLE), "--json", str(result_file), *SLOW_START,
              "--", "python", "train.py", "--epochs", "4")
    assert run.returncode == 0, run.stdout + run.stderr
    job = json.loads(result_file.read_text())
    assert job["rc"] == 0 and job["controller"] == controller and job["hosts"] == hosts
    assert_trained_everywhere(run.stdout, job, epochs=4)
    # The script ran from the job folder on every host (an MPI job's with the allreduce rules its ranks read).
    rules = [MPI_RULES.name] if controller == "mpi" else []
    for host in hosts:
        assert on_host(host, f"ls {job['workdir']}").split() == [*rules, "train.py"]


def test_a_failing_script_returns_its_exit_code():
    run = cli("--np", "2", *SLOW_START, "--", "python", "-c", "import sys; print('failing'); sys.exit(3)")
    assert run.returncode == 3, run.stdout + run.stderr  # horovodrun (Gloo) itself exits 1
    assert re.search(r"^\[[01]\]<stdout>:failing$", run.stdout, re.M)


# Slow tier: test_slurm_sandbox.py (also slow) runs a job in a real allocation, tests/unit/test_slurm.py reads them.
@pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                    reason="slow (a job in a pretended Slurm allocation, 2 min): set HVC_SLOW=1")
def test_inside_a_slurm_allocation_its_nodes_and_tasks_are_the_job():
    """As in an sbatch script: the allocation (Slurm's own variables) names 2 of the 3 hosts, one task
    each; the rollout's hostfile (2 slots on each of 3 hosts) must not be used."""
    allocation = {"SLURM_JOB_ID": "4242", "SLURM_JOB_NODELIST": "hvc-node[1-2]", "SLURM_TASKS_PER_NODE": "1(x2)"}
    run = cli(*SLOW_START, "--", "python", "-c",
              "import socket, horovod.torch as hvd; hvd.init(); print(hvd.rank(), hvd.size(), socket.gethostname())",
              env=allocation)
    assert run.returncode == 0, run.stdout + run.stderr
    ranks = re.findall(r"^\[(\d)\]<stdout>:(\d) (\d) (\S+)$", run.stdout, re.M)
    assert sorted((rank, size, host) for _, rank, size, host in ranks) == [
        ("0", "2", "hvc-node1"), ("1", "2", "hvc-node2")], run.stdout


# A closed terminal takes the same stop path as Ctrl-C (another signal), so its case runs in the slow tier.
@pytest.mark.parametrize("signum", [
    pytest.param(signal.SIGINT, id="ctrl-c"),
    pytest.param(signal.SIGHUP, id="terminal-closed", marks=pytest.mark.skipif(
        os.environ.get("HVC_SLOW") != "1", reason="slow (the Ctrl-C case's stop path again, 1 min): set HVC_SLOW=1")),
])
def test_ctrl_c_stops_every_rank_on_every_host(signum):
    """Ctrl-C, and a closed terminal (SIGHUP; issue 45 item 14: it left the ranks running)."""
    hosts = Cluster(SANDBOX).hosts()
    exe = shutil.which("horovod-cluster")
    proc = subprocess.Popen(
        [exe, "run", "-i", str(SANDBOX), *SLOW_START, "--", "python", "-c",
         "import time, horovod.torch as hvd; hvd.init(); print('ready', flush=True); time.sleep(900)"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    lines, job_id = [], None
    deadline = time.time() + 400
    while sum("<stdout>:ready" in line for line in lines) < 6 and time.time() < deadline:
        line = proc.stdout.readline()
        assert line, "the job ended before every rank was ready:\n" + "".join(lines)
        lines.append(line)
        job_id = job_id or (re.search(r"^job (\S+): \d+ ranks", line) or [None, None])[1]
    assert job_id, "".join(lines)
    running = {host: job_processes(host, job_id) for host in hosts}
    assert all(running.values()), running  # ranks on every host before the interrupt
    proc.send_signal(signum)
    rest, _ = proc.communicate(timeout=300)
    assert proc.returncode == 130, "".join(lines) + rest
    assert "interrupted" in rest
    assert {host: job_processes(host, job_id) for host in hosts} == dict.fromkeys(hosts, 0)
    assert not any(on_host(host, "pgrep -f 'time.sleep\\(900\\)' || true").split() for host in hosts)


@pytest.mark.parametrize("controller", ["gloo", "mpi"])
def test_the_jobs_variables_reach_every_rank_and_no_command_line(controller):
    """Issue 45 item 7: run --env values (an API key) were on the ssh command line to the launcher and, with Gloo, on
    each rank's ssh command line, which `ps` shows to every user of every host. Each rank reads them from a 0600 file
    of the job folder: while the job runs, no process's command line on any host or here holds the value."""
    hosts = Cluster(SANDBOX).hosts()
    secret = "s3cret-run-" + controller
    exe = shutil.which("horovod-cluster")
    proc = subprocess.Popen(
        [exe, "run", "-i", str(SANDBOX), "--controller", controller, *SLOW_START, "--env", f"HVC_TEST_TOKEN={secret}",
         "--", "python", "-c", "import os, time; ok = os.environ.get('HVC_TEST_TOKEN') == "
         f"'{secret[:6]}' + '{secret[6:]}'; " + RANK_RECORDS_WHAT_IT_READ + "print('ready', ok, flush=True); "
         "time.sleep(8)"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    lines = []
    while sum("<stdout>:ready" in line for line in lines) < 1:
        line = proc.stdout.readline()
        assert line, "the job ended before a rank was ready:\n" + "".join(lines)
        lines.append(line)
    # the value on grep's stdin: a command line that named it would find itself
    seen = {host: subprocess.run(["podman", "exec", "-i", host, "sh", "-c", "grep -ls -F -f - /proc/[0-9]*/cmdline"],
                                 input=secret + "\n", capture_output=True, text=True).stdout.split() for host in hosts}
    # (here, the CLI's own command line holds it: the test gave it there; Cluster.run(env=...) gives it in none)
    here = [p.parent.name for p in Path("/proc").glob("[0-9]*/cmdline")
            if secret.encode() in _read(p) and p.parent.name != str(proc.pid)]
    rest, _ = proc.communicate(timeout=300)
    out = "".join(lines) + rest
    assert proc.returncode == 0, out
    assert seen == dict.fromkeys(hosts, []) and not here, (seen, here)
    ready = {int(m[1]): m[2] for m in re.finditer(r"^\[(\d+)\]<stdout>: ?ready (\w+)", out, re.M)}
    assert set(ready.values()) == {"True"}, out  # every rank that spoke has the value
    # Every rank read it: the file each rank wrote in its job folder (2 slots per host, in order). Not its output
    # line: horovodrun's output of this short job lost one rank's line once in CI (Gloo) and a host's two (MPI).
    job_id = re.search(r"^job (\S+): 6 ranks", out, re.M)[1]
    assert {host: rank_records(host, job_id) for host in hosts} == {
        host: {2 * n: "True", 2 * n + 1: "True"} for n, host in enumerate(hosts)}, out
    for host in hosts:  # the file each rank read: the job's user's alone
        assert on_host(host, f"stat -c %a {JOBS}/*/.hvc-job-env | sort -u").split() == ["600"]


@pytest.mark.parametrize("controller, env, threads", [("gloo", [], "1"), ("mpi", [], "1"),
                                                      ("gloo", ["--env", "OMP_NUM_THREADS=2"], "2")])
def test_each_rank_computes_on_its_share_of_the_hosts_processors(controller, env, threads):
    """Two ranks on each 2-processor host: torch computes on one thread in each (OMP_NUM_THREADS is the processors
    over the host's ranks, as torchrun's 1 for several processes a node), not on two in each, which oversubscribes
    the host; a job that sets OMP_NUM_THREADS keeps its own."""
    hosts = Cluster(SANDBOX).hosts()
    run = cli("--controller", controller, *SLOW_START, *env, "--", "python", "-c",
              "import os, torch; ok = torch.get_num_threads(); " + RANK_RECORDS_WHAT_IT_READ)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    job_id = re.search(r"^job (\S+): 6 ranks", out, re.M)[1]
    assert {host: rank_records(host, job_id) for host in hosts} == {
        host: {2 * n: threads, 2 * n + 1: threads} for n, host in enumerate(hosts)}, out


@pytest.mark.parametrize("controller", ["gloo", "mpi"])
def test_each_ranks_lines_leave_it_in_one_write(controller):
    """A job's ranks write stdout and stderr a line at a time (the horovod role's .pth file), not a piece at a time as
    PYTHONUNBUFFERED alone leaves them: Open MPI 5 tags what it forwards by write, and a piece of one rank's
    print(a, b) landed inside another rank's line in a cold CI run. The environment's Python outside a job keeps
    Python's own buffering."""
    hosts = Cluster(SANDBOX).hosts()
    run = cli("--controller", controller, *SLOW_START, "--", "python", "-c",
              "import os, sys; ok = sys.stdout.line_buffering and sys.stderr.line_buffering "
              "and not sys.stdout.write_through; " + RANK_RECORDS_WHAT_IT_READ)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    job_id = re.search(r"^job (\S+): 6 ranks", out, re.M)[1]
    assert {host: rank_records(host, job_id) for host in hosts} == {
        host: {2 * n: "True", 2 * n + 1: "True"} for n, host in enumerate(hosts)}, out
    outside = on_host(hosts[0], "/opt/horovod/venv/bin/python -c 'import sys; print(sys.stdout.line_buffering)'")
    assert outside.split() == ["False"]


# Each rank's Open MPI settings for its collectives, as Open MPI reads them in the rank's own environment and folder.
TUNED_SETTINGS = ('ompi_info --param coll tuned --level 9 --parsable | grep -E '
                  '"coll_tuned_(use_dynamic_rules|dynamic_rules_filename):value:"; '
                  'sha256sum "${OMPI_MCA_coll_tuned_dynamic_rules_filename:-/dev/null}"')


def tuned_settings(out: str) -> dict[int, list[str]]:
    """{rank: [use_dynamic_rules, dynamic_rules_filename, the sha256 of that file in the rank's folder]}."""
    found: dict[int, dict[str, str]] = {}
    for rank, line in re.findall(r"^\[(\d+)\]<stdout>:(.*)$", out, re.M):
        setting = re.match(r"mca:coll:tuned:param:coll_tuned_(\w+):value:(.*)$", line)
        key, value = setting.groups() if setting else ("sha256", line.split()[0])
        found.setdefault(int(rank), {})[key] = value
    return {rank: [got.get("use_dynamic_rules"), got.get("dynamic_rules_filename"), got.get("sha256")]
            for rank, got in found.items()}


def test_every_rank_of_an_mpi_job_reads_the_clusters_allreduce_rules_unless_the_job_sets_its_own():
    """The project's rules for Open MPI's allreduce (src/horovod_cluster/openmpi-allreduce-rules.conf: the ring where
    Open MPI's own choice measured slower) reach every rank of every host, the same file for all, so that all
    ranks choose the same algorithm; a job that sets Open MPI's coll/tuned variables keeps its own."""
    digest = hashlib.sha256(MPI_RULES.read_bytes()).hexdigest()
    run = cli("--controller", "mpi", "--", "sh", "-c", TUNED_SETTINGS)
    assert run.returncode == 0, run.stdout + run.stderr
    assert tuned_settings(run.stdout) == {rank: ["true", MPI_RULES.name, digest] for rank in range(6)}, run.stdout
    own = cli("--controller", "mpi", "--env", "OMPI_MCA_coll_tuned_use_dynamic_rules=0", "--", "sh", "-c",
              TUNED_SETTINGS)
    assert own.returncode == 0, own.stdout + own.stderr
    empty = hashlib.sha256(b"").hexdigest()  # /dev/null's
    assert tuned_settings(own.stdout) == {rank: ["false", "", empty] for rank in range(6)}, own.stdout


# A rank's own record of what it read, in its job folder (its working directory with either controller): the
# file ready-<rank> holds `ok`.
RANK_RECORDS_WHAT_IT_READ = ("rank = os.environ.get('HOROVOD_RANK') or os.environ['OMPI_COMM_WORLD_RANK']; "
                             "open('ready-' + rank, 'w').write(str(ok)); ")


def rank_records(host: str, job_id: str) -> dict[int, str]:
    """{rank: what it recorded} from the job folder on `host`."""
    found = on_host(host, f"cd {JOBS}/{job_id} && grep -H . ready-* || true")
    return {int(m[1]): m[2] for m in re.finditer(r"^ready-(\d+):(\w+)$", found, re.M)}


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_a_timeout_stops_every_rank_on_every_host(tmp_path):
    """--timeout (issue 45 item 14: run had none): the ranks still running then are stopped on every host, exit 124."""
    hosts = Cluster(SANDBOX).hosts()
    run = cli("--timeout", "45", "--json", str(tmp_path / "job.json"), "--", "python", "-c",
              "import time; print('ready', flush=True); time.sleep(900)")
    out = run.stdout + run.stderr
    assert run.returncode == 124, out
    job = json.loads((tmp_path / "job.json").read_text())
    assert job["timed_out"] and not job["interrupted"] and job["rc"] == 124, job
    assert sum("<stdout>:ready" in line for line in run.stdout.splitlines()) == job["np"], out  # every rank started
    assert "ran longer than --timeout 45 s; processes stopped per host" in " ".join(out.split()), out
    assert {host: job_processes(host, job["job_id"]) for host in hosts} == dict.fromkeys(hosts, 0)
    assert not any(on_host(host, "pgrep -f 'time.sleep\\(900\\)' || true").split() for host in hosts)


def test_open_mpi_majors_that_differ_refuse_an_mpi_job_but_not_a_gloo_job():
    """Open MPI 4 and 5 do not run one job, and a Gloo job does not use Open MPI (issue 51): with hvc-node3's
    mpirun answering as Open MPI 5 (a stand-in first on its PATH), an MPI job is refused before anything starts,
    naming the hosts and the way out, a Gloo job runs on every host, and the check's job groups say so."""
    fake = "/usr/local/bin/mpirun"  # says 5.0.7 when asked its version, else is Debian's mpirun
    script = '#!/bin/sh\ncase "$1" in --version) echo "mpirun (Open MPI) 5.0.7";; *) exec /usr/bin/mpirun "$@";; esac\n'
    on_host("hvc-node3", f"printf '%s' '{script}' > {fake} && chmod 755 {fake}")
    try:
        assert on_host("hvc-node3", "mpirun --version").strip() == "mpirun (Open MPI) 5.0.7"
        mpi = cli("--controller", "mpi", "--", "python", "-c", "print('started')")
        gloo = cli("--controller", "gloo", *SLOW_START, "--", "python", "-c",
                   "import socket, horovod.torch as hvd; hvd.init(); print(hvd.size(), socket.gethostname())")
        report = Cluster(SANDBOX).check(smoke=True)
        # the refusal's way out: one job group
        group = cli("--controller", "mpi", "--limit", "hvc-node1,hvc-node2", "--", "python", "-c",
                    "import socket, horovod.torch as hvd; hvd.init(); print(hvd.size(), socket.gethostname())")
    finally:
        on_host("hvc-node3", f"rm -f {fake}")
    refusal = " ".join(mpi.stderr.split())
    assert mpi.returncode == 2, mpi.stdout + mpi.stderr
    assert "hosts disagree on mpi_major: hvc-node1=4, hvc-node2=4, hvc-node3=5" in refusal, refusal
    assert "a Gloo job can span them (--controller gloo), an MPI job cannot" in refusal, refusal
    assert "or run on one job group: --limit hvc-node1,hvc-node2 or --limit hvc-node3" in refusal, refusal
    assert "started" not in mpi.stdout
    assert gloo.returncode == 0, gloo.stdout + gloo.stderr
    ranks = re.findall(r"^\[\d\]<stdout>:(\d) (\S+)$", gloo.stdout, re.M)
    assert {size for size, _ in ranks} == {"6"} and len(ranks) == 6, gloo.stdout
    assert {host for _, host in ranks} == {"hvc-node1", "hvc-node2", "hvc-node3"}, gloo.stdout
    assert group.returncode == 0, group.stdout + group.stderr
    assert sorted(re.findall(r"^\[\d\]<stdout>:(\d \S+)$", group.stdout, re.M)) == [
        "4 hvc-node1", "4 hvc-node1", "4 hvc-node2", "4 hvc-node2"], group.stdout
    # The check's job groups say the same: one Gloo group, two MPI groups, and why; its MPI smoke test runs once
    # per group, each from the group's first host over the group's slots, and Gloo's across every host.
    groups = report.job_groups
    assert [(g["controller"], g["hosts"]) for g in groups["groups"]] == [
        ("gloo", ["hvc-node1", "hvc-node2", "hvc-node3"]), ("mpi", ["hvc-node1", "hvc-node2"]), ("mpi", ["hvc-node3"])]
    assert groups["reasons"] == {"mpi": "Open MPI majors differ (hvc-node1=4, hvc-node2=4, hvc-node3=5)"}
    smoke = {name: (result["ok"], result.get("size"), sorted({rank["host"] for rank in result.get("ranks", [])}))
             for name, result in report.smoke.items()}
    assert smoke == {"gloo": (True, 6, ["hvc-node1", "hvc-node2", "hvc-node3"]),
                     "mpi (hvc-node1, hvc-node2)": (True, 4, ["hvc-node1", "hvc-node2"]),
                     "mpi (hvc-node3)": (True, 2, ["hvc-node3"])}, report.to_json()


def test_a_cuda_job_is_refused_where_a_host_has_no_nccl():
    """--tensors cuda (the script puts its tensors on the GPU, issue 51): no sandbox host has NCCL, and Horovod
    refuses a collective across devices, so nothing starts; the refusal names the hosts and CPU tensors."""
    run = cli("--tensors", "cuda", "--", "python", "-c", "print('started')")
    refusal = " ".join(run.stderr.split())
    assert run.returncode == 2, run.stdout + run.stderr
    assert "CUDA tensors need NCCL on every rank and hvc-node1, hvc-node2, hvc-node3 have none" in refusal, refusal
    assert refusal.count("run on CPU tensors (--tensors cpu)") == 1 and "started" not in run.stdout


def test_refused_when_a_host_is_not_rolled_out(tmp_path):
    """The same hosts, but hvc-node2's check looks at a python without Horovod: nothing may start."""
    inventory = tmp_path / "inventory"
    shutil.copytree(SANDBOX, inventory)
    (inventory / "host_vars").mkdir(exist_ok=True)
    (inventory / "host_vars" / "hvc-node2.yml").write_text("cluster_check_python: /usr/bin/python3\n")
    before = {host: on_host(host, f"ls {JOBS} 2>/dev/null || true") for host in ("hvc-node1", "hvc-node2")}
    exe = shutil.which("horovod-cluster")
    run = subprocess.run([exe, "run", "-i", str(inventory), "--copy", str(EXAMPLE), "--", "python", "train.py"],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert run.returncode == 2, run.stdout + run.stderr
    assert re.search(r"hvc-node2: not ready for a job: horovod not installed", run.stderr), run.stderr
    assert "horovod-cluster rollout" in run.stderr
    assert {host: on_host(host, f"ls {JOBS} 2>/dev/null || true") for host in before} == before
