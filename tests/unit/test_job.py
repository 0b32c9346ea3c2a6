"""horovod_cluster.job: horovodrun's output read back into whole rank lines (on output recorded from
the sandbox: tests/fixtures/horovodrun), the failed rank's exit code, rank placement, and the command
lines that reach the launcher (quoted, never re-parsed)."""
from __future__ import annotations

import base64
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from horovod_cluster.job import (ENV_FILE, HOST_NAME, MPI_RULES, RANK_THREADS, JobRefused, JobTimeout, RankLines,
                                 check_hostfile, elastic_world, hostfile_slots, job_env, job_request, launch_argv,
                                 only_hosts, placement, remote_command, stream, with_mpi_rules)

KEEPALIVE = ["-o", "ServerAliveInterval=30", "-o", "ServerAliveCountMax=4"]

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "horovodrun"
SANDBOX_HOSTFILE = "# written by the hostfile role\nhvc-node1 slots=2\nhvc-node2 slots=2\nhvc-node3 slots=2\n"


def read_back(name: str) -> tuple[list[str], RankLines]:
    lines = RankLines()
    out = [line for raw in (FIXTURES / name).read_text().splitlines() for line in lines.feed(raw)]
    return out + lines.flush(), lines


def test_open_mpi_chunks_become_whole_lines_with_their_rank():
    # Recorded: examples/train.py, 6 ranks, MPI; an unbuffered print arrives as two tagged chunks,
    # "[1,1]<stdout>:rank 1 ...[1,0]<stdout>:epoch 1 ..." on one line, rank 1's newline later.
    raw = (FIXTURES / "mpi_train_6ranks.txt").read_text()
    assert re.search(r"\]<stdout>:[^\n]+\[1,\d\]<stdout>:", raw), "the recording lost its interleaving"
    out, _ = read_back("mpi_train_6ranks.txt")
    ends = [m.groups() for m in map(re.compile(r"^\[(\d)\]<stdout>:rank (\d) of 6 weights \w+$").match, out) if m]
    assert sorted(ends) == [(str(r), str(r)) for r in range(6)]
    assert [line for line in out if "epoch" in line] == ["[0]<stdout>:epoch 0 loss 2.267216",
                                                          "[0]<stdout>:epoch 1 loss 0.832621"]
    assert not any(re.search(r".\[\d+(,\d+)?\]<std(out|err)>:", line) for line in out)


def test_gloo_failure_gives_the_rank_exit_code():
    # Recorded: `sys.exit(3)` on 2 ranks with Gloo: horovodrun raises and exits 1.
    out, lines = read_back("gloo_exit3_2ranks.txt")
    assert "[0]<stdout>:bye" in out and "Exit code: 3" in out
    assert lines.exit_code(1) == 3
    assert lines.exit_code(0) == 0 and lines.exit_code(2) == 2  # only horovodrun's own 1 is replaced


def test_a_killed_rank_exits_like_a_shell_says():
    lines = RankLines()
    lines.feed("Exit code: -9")
    assert lines.exit_code(1) == 137


@pytest.mark.parametrize("np, expected", [
    (None, (6, "hvc-node1:2,hvc-node2:2,hvc-node3:2")),
    (3, (3, "hvc-node1:2,hvc-node2:1")),
    (1, (1, "hvc-node1:1")),
])
def test_placement_takes_only_the_slots_asked_for(np, expected):
    assert placement(SANDBOX_HOSTFILE, np) == expected


def test_placement_refuses_more_ranks_than_slots():
    with pytest.raises(JobRefused, match="np 7: the hostfile has 6 slots"):
        placement(SANDBOX_HOSTFILE, 7)


def test_a_limit_keeps_only_its_hosts():
    assert only_hosts(SANDBOX_HOSTFILE, ["hvc-node2", "hvc-node3"]) == "hvc-node2 slots=2\nhvc-node3 slots=2\n"
    with pytest.raises(JobRefused, match="names none of the job's hosts"):
        placement(only_hosts(SANDBOX_HOSTFILE, ["elsewhere"]), None)


def test_hostfile_slots_reads_what_horovodrun_reads():
    assert hostfile_slots("a slots=4\n  b\n# c slots=9\n\nd slots = 2\n") == [("a", 4), ("b", 1), ("d", 2)]


JOB = {"id": "20261124-010203-ab12cd34", "launcher": "hvc-node1", "controller": "gloo", "np": 2,
       "placement": "hvc-node1:2", "horovodrun": "/opt/horovod/venv/bin/horovodrun", "bin": "/opt/horovod/venv/bin",
       "ssh_dir": "/opt/horovod/libexec/strict-ssh", "workdir": "/root/.cache/horovod-cluster/jobs/x", "env": {"HVC_JOB_ID": "override", "NCCL_DEBUG": "INFO"},
       "connection": {"type": "ssh", "host": "10.89.0.20", "port": 2222, "user": "root", "private_key": "/k",
                      "ssh_args": "-o UserKnownHostsFile=/kh -o StrictHostKeyChecking=yes "}}


def test_the_remote_command_quotes_every_value():
    hostile = ["python", "train.py", "--name", "x; touch /tmp/pwned", "$(id)"]
    words = shlex.split(remote_command(JOB, hostile))
    assert words[:3] == ["cd", JOB["workdir"], "&&"]
    # ssh_mesh's ssh (host key checking kept on) before the environment's bin, for horovodrun's Gloo launcher
    assert words[3] == "PATH=/opt/horovod/libexec/strict-ssh:/opt/horovod/venv/bin:$PATH"
    assert words[-len(hostile):] == hostile
    # each rank reads the user's variables from the job folder's file, then runs the command
    assert words[-len(hostile) - 9:-len(hostile)] == [
        "--gloo", "-np", "2", "-H", "hvc-node1:2", "/bin/sh", "-c", f'. "$0" && {RANK_THREADS} && exec "$@"',
        f"{JOB['workdir']}/{ENV_FILE}"]
    assert "HVC_JOB_ID=20261124-010203-ab12cd34" in words and "HVC_JOB_ID=override" not in words  # marker wins


def test_the_users_variables_reach_no_command_line():
    """Issue 45 item 7: horovodrun's Gloo launcher puts its whole environment on each rank's ssh command line (and the
    controller's ssh to the launcher carries this line): the values of run --env are in neither, only in the 0600
    file run.yml writes into the job folder, whose values travel base64 (no Ansible template reads them)."""
    secret = {**JOB, "env": {"WANDB_API_KEY": "s3cret-{{ x }}"}}
    line = remote_command(secret, ["python", "train.py"])
    assert "s3cret" not in line and "WANDB_API_KEY" not in line and f"{ENV_FILE}" in line
    request = job_request("id1", "gloo", None, None, [], None, env={"WANDB_API_KEY": "s3cret-{{ x }}"})
    assert request["env"] == {"WANDB_API_KEY": base64.b64encode(b"s3cret-{{ x }}").decode()}
    # no variables: no file to read, only the rank's share of the processors
    assert shlex.split(remote_command({**JOB, "env": {}}, ["python", "t.py"]))[-7:] == [
        "hvc-node1:2", "/bin/sh", "-c", f'{RANK_THREADS} && exec "$@"', "hvc-rank", "python", "t.py"]


@pytest.mark.parametrize("env, threads", [
    ({}, os.cpu_count()),
    ({"HOROVOD_LOCAL_SIZE": "2"}, max(1, os.cpu_count() // 2)),  # horovodrun's ranks on this host
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": str(4 * os.cpu_count())}, 1),  # mpirun's; never 0
    ({"HOROVOD_LOCAL_SIZE": "2", "OMP_NUM_THREADS": "3"}, 3),  # the job's own value (run --env) wins
])
def test_each_rank_takes_its_share_of_the_hosts_processors(env, threads):
    """What a rank's shell does before the command, run here: OMP_NUM_THREADS (which torch's thread count follows)
    is the processors over the host's ranks, unless the job sets it."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OMP_NUM_THREADS", "HOROVOD_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE")}
    rank = ["/bin/sh", "-c", f'{RANK_THREADS} && exec "$@"', "hvc-rank", "sh", "-c", 'echo "$OMP_NUM_THREADS"']
    shown = subprocess.run(rank, env={**clean, **env}, capture_output=True, text=True, check=True)
    assert shown.stdout.split() == [str(threads)]


def test_an_mpi_job_runs_the_open_mpi_horovod_was_built_against():
    """Horovod built against PyPI's Open MPI (the marker's mpi_prefix): its bin on PATH after the environment's, and
    mpirun told to start that Open MPI on every host (--prefix); a Gloo job takes no MPI arguments."""
    job = {**JOB, "controller": "mpi", "mpi_prefix": "/opt/horovod/openmpi", "env": {}}
    words = shlex.split(remote_command(job, ["python", "train.py"]))
    assert words[3] == "PATH=/opt/horovod/libexec/strict-ssh:/opt/horovod/venv/bin:/opt/horovod/openmpi/bin:$PATH"
    start = words.index("--mpi")
    assert words[start:start + 6] == ["--mpi", "-np", "2", "-H", "hvc-node1:2",
                                      "--mpi-args=--prefix /opt/horovod/openmpi"]
    assert not any(w.startswith("--mpi-args") for w in shlex.split(remote_command({**job, "controller": "gloo"},
                                                                                   ["python", "train.py"])))


def test_an_elastic_job_starts_with_every_slot_and_goes_on_with_one():
    assert elastic_world(SANDBOX_HOSTFILE, None, None, None) == (
        6, {"min_np": 1, "max_np": 6, "hosts": ["hvc-node1:2", "hvc-node2:2", "hvc-node3:2"]})
    assert elastic_world(SANDBOX_HOSTFILE, 4, 2, 5)[0] == 4


@pytest.mark.parametrize("np, min_np, max_np, message", [
    (None, None, 7, r"max_np 7: the hostfile has 6 slots"),
    (3, 4, None, r"expected 1 <= min_np <= np <= max_np, got min_np 4, np 3, max_np 6"),
    (6, None, 5, r"got min_np 1, np 6, max_np 5"),
])
def test_elastic_ranks_out_of_order_are_refused(np, min_np, max_np, message):
    with pytest.raises(JobRefused, match=message):
        elastic_world(SANDBOX_HOSTFILE, np, min_np, max_np)


def test_an_elastic_job_refuses_a_host_horovodrun_would_misread():
    # horovodrun splits each discovered line at ':' (host:slots): an IPv6 address would be read as host "fd00"
    with pytest.raises(JobRefused, match=r"elastic: fd00::5: .*host:slots"):
        elastic_world("hvc-node1 slots=1\nfd00::5 slots=1\n", None, None, None)


def test_an_elastic_command_line_names_the_discovery_script_with_the_job_hosts():
    job = {**JOB, "np": 3, "discover_hosts": "/opt/horovod/libexec/discover-hosts", "env": {},
           "elastic": {"min_np": 2, "max_np": 3, "hosts": ["hvc-node1:1", "hvc-node2:1", "hvc-node3:1"]}}
    words = shlex.split(remote_command(job, ["python", "train_elastic.py"]))
    start = words.index("/opt/horovod/venv/bin/horovodrun")
    assert words[start:] == [
        "/opt/horovod/venv/bin/horovodrun", "--gloo", "-np", "3", "--min-np", "2", "--max-np", "3",
        "--host-discovery-script", "/opt/horovod/libexec/discover-hosts --state "
        "/root/.cache/horovod-cluster/jobs/x/.discover-hosts.json hvc-node1:1 hvc-node2:1 hvc-node3:1",
        "--blacklist-cooldown-range", "10", "300", "/bin/sh", "-c", f'{RANK_THREADS} && exec "$@"', "hvc-rank",
        "python", "train_elastic.py"]
    assert "-H" not in words  # the discovery script, not a fixed host list, names the hosts


def test_launch_over_ssh_uses_the_inventory_connection():
    argv = launch_argv(JOB, "REMOTE")
    assert argv == ["ssh", "-o", "BatchMode=yes", "-p", "2222", "-i", "/k", "-l", "root",
                    "-o", "UserKnownHostsFile=/kh", "-o", "StrictHostKeyChecking=yes", *KEEPALIVE,
                    "--", "10.89.0.20", "REMOTE"]
    # the inventory's own keepalive comes first, so it wins (ssh keeps an option's first value)
    job = {**JOB, "connection": {**JOB["connection"], "ssh_args": "-o ServerAliveInterval=5"}}
    argv = launch_argv(job, "REMOTE")
    assert argv.index("ServerAliveInterval=5") < argv.index("ServerAliveInterval=30")


def test_launch_falls_back_to_the_cli_user_and_key():
    job = {**JOB, "connection": {"type": "ssh", "host": "h"}}
    assert launch_argv(job, "R", user="alice", private_key="/a") == [
        "ssh", "-o", "BatchMode=yes", "-i", "/a", "-l", "alice", *KEEPALIVE, "--", "h", "R"]


def test_a_timeout_ends_the_launch_and_says_so(tmp_path):
    """The launch process (here a local one that prints a rank line, then waits) is ended when the timeout
    comes; the caller then stops the job on every host (Cluster.launch)."""
    pid_file = tmp_path / "pid"
    lines: list[str] = []
    with pytest.raises(JobTimeout, match="longer than its timeout of 1 s"):
        stream(["sh", "-c", f"echo $$ > {pid_file}; echo '[0]<stdout>:started'; exec sleep 60"], lines.append, 1)
    assert lines == ["[0]<stdout>:started"]
    assert not Path(f"/proc/{pid_file.read_text().strip()}").exists(), "the launch process was ended"
    assert stream(["sh", "-c", "echo '[0]<stdout>:done'"], lines.append, 30) == 0, "a job within its time"


def test_launch_locally_and_refuse_other_connections():
    assert launch_argv({**JOB, "connection": {"type": "local"}}, "R") == ["/bin/sh", "-c", "R"]
    with pytest.raises(JobRefused, match="ansible_connection=winrm"):
        launch_argv({**JOB, "connection": {"type": "winrm", "host": "h"}}, "R")


@pytest.mark.parametrize("env, message", [
    (["1BAD=x"], "'1BAD' is not a variable name"),
    (["A B=x"], "'A B' is not a variable name"),
    ({"X;Y": "1"}, "'X;Y' is not a variable name"),
    ({"X\n": "1"}, "'X\\n' is not a variable name"),  # a trailing newline (`$` let it through)
])
def test_bad_variable_names_are_refused(env, message):
    with pytest.raises(JobRefused, match=re.escape(message)):
        job_env(env)


def test_variables_from_the_cli_and_the_api():
    assert job_env(["A=1", "B=x=y", "C="]) == {"A": "1", "B": "x=y", "C": ""}
    assert job_env({"A": 1}) == {"A": "1"}


@pytest.mark.parametrize("args, message", [
    (dict(controller="nccl"), "controller 'nccl': expected one of gloo, mpi"),
    (dict(np=0), "np 0: expected a positive number of ranks"),
    (dict(copy=["/nonexistent/train.py"]), "no such file or folder on this machine: /nonexistent/train.py"),
    (dict(controller="mpi", env={"HOROVOD_CPU_OPERATIONS": "Gloo"}),
     "env HOROVOD_CPU_OPERATIONS=gloo with controller 'mpi': Horovod's Gloo operations need controller 'gloo'"),
])
def test_bad_requests_are_refused_before_anything_runs(args, message):
    request = dict(job_id="j", controller="gloo", np=None, workdir=None, copy=[], hostfile=None) | args
    with pytest.raises(JobRefused, match=re.escape(message)):
        job_request(**request)


def test_gloo_operations_are_refused_only_under_mpirun():
    base = dict(job_id="j", np=None, workdir=None, copy=[], hostfile=None)
    assert job_request(controller="gloo", env={"HOROVOD_CPU_OPERATIONS": "gloo"}, **base)["env"]
    assert job_request(controller="mpi", env={"HOROVOD_CPU_OPERATIONS": "mpi"}, **base)["env"]


def test_an_mpi_job_carries_the_allreduce_rules_and_a_gloo_job_does_not():
    copy, env = with_mpi_rules("mpi", ["train.py"], {"OTHER": "1"})
    assert copy == ["train.py", MPI_RULES] and MPI_RULES.is_file()
    assert env == {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                   "OMPI_MCA_coll_tuned_dynamic_rules_filename": "openmpi-allreduce-rules.conf", "OTHER": "1"}
    assert with_mpi_rules("gloo", ["train.py"], {"OTHER": "1"}) == (["train.py"], {"OTHER": "1"})


@pytest.mark.parametrize("own", [{"OMPI_MCA_coll_tuned_use_dynamic_rules": "0"},
                                 {"OMPI_MCA_coll_tuned_allreduce_algorithm": "6"}])
def test_a_job_that_tunes_open_mpi_itself_keeps_its_own_choice(own):
    assert with_mpi_rules("mpi", [], {**own, "OTHER": "1"}) == ([], {**own, "OTHER": "1"})


def _rules(path):
    """The classic coll/tuned rules file as Open MPI reads it: numbers, `#` to the end of a line ignored."""
    numbers = iter(int(word) for line in path.read_text().splitlines() for word in line.split("#")[0].split())
    collectives = {}
    for _ in range(next(numbers)):
        collective, sizes = next(numbers), {}
        for _ in range(next(numbers)):
            ranks = next(numbers)
            sizes[ranks] = [tuple(next(numbers) for _ in range(4)) for _ in range(next(numbers))]
        collectives[collective] = sizes
    assert next(numbers, None) is None, "numbers left after the last rule"
    return collectives


def test_the_allreduce_rules_take_the_ring_from_256_kib_where_the_ranks_are_not_a_power_of_two():
    rules = _rules(MPI_RULES)
    assert list(rules) == [2]  # MPI_Allreduce only
    sizes = rules[2]
    assert list(sizes) == sorted(sizes) and min(sizes) == 2

    def algorithm(ranks, size):  # Open MPI's lookup: the largest listed size <= each
        entry = sizes[max(r for r in sizes if r <= ranks)]
        return [alg for start, alg, _, _ in entry if start <= size][-1]

    for ranks in range(2, 130):
        power_of_two = ranks & (ranks - 1) == 0
        for size in (4096, (256 << 10) - 1, 256 << 10, 16 << 20):
            ring = not power_of_two and ranks < 64 and size >= 256 << 10
            assert algorithm(ranks, size) == (4 if ring else 0), (ranks, size)


@pytest.mark.parametrize("text, message", [
    ("a slots=2\n-oProxyCommand=x slots=1\n", "line 2: '-oProxyCommand=x' is not a host name or address"),
    ("a;touch${IFS}x slots=1\n", "line 1: 'a;touch${IFS}x' is not a host name"),
    ("# hosts\n\na slots=0\n", "line 3: 'slots=0': expected slots=N, N a positive whole number"),
    ("a slots=-1\n", "line 1: 'slots=-1': expected slots=N"),
    ("a slots=2 $(id)\n", "line 1: 'slots=2 $(id)': expected slots=N"),
    ("a slots=two\n", "line 1: 'slots=two': expected slots=N"),
])
def test_a_bad_hostfile_line_is_refused_naming_it(text, message):
    """Issue 45: --hostfile and Slurm's names reached horovodrun's ssh lines unchecked."""
    with pytest.raises(JobRefused, match=re.escape(f"hosts.txt {message}")):
        check_hostfile(text, "hosts.txt")


def test_good_hostfiles_pass_and_the_form_is_ssh_mesh_s():
    check_hostfile(SANDBOX_HOSTFILE + "10.0.0.7 slots = 4\nfe80::1\nnode-3.lab # rack 2\n", "hosts.txt")
    role = yaml.safe_load((REPO / "roles" / "ssh_mesh" / "vars" / "main.yml").read_text())
    assert HOST_NAME.pattern == role["__ssh_mesh_name_re"]
