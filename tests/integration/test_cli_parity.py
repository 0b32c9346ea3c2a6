"""ansible-playbook's flags on the CLI and the API, the plain output of a log (CI), and run records.

Fixture: tests/fixtures/cli/content/site.yml publishes (set_stats `echo`) per host what reached the
play: -e variables, ansible's magic variables for -C -D -f -t --skip-tags -l -v, and the play
context (-u -b -K --private-key) read by a tiny action plugin. tests/fixtures/cli/inventory.yml is
this machine three times (connection local) in groups cpu_nodes and gpu_nodes.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ansible.parsing.vault import VaultLib, VaultSecret
from click.testing import CliRunner

import horovod_cluster
from horovod_cluster import Cluster, UsageError
from horovod_cluster.cli import main
from horovod_cluster.ansible.runner import in_progress

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CONTENT = FIXTURES / "cli" / "content"
INVENTORY = FIXTURES / "cli" / "inventory.yml"
LOCAL = FIXTURES / "api" / "local.yml"  # local1, local2 in group cluster
FAIL_NODE2 = json.dumps({"echo_fail": "{{ inventory_hostname == 'hvc-node2' }}"})


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """Invoke the CLI on the fixture content, from tmp_path (relative paths), with private runs."""
    monkeypatch.setenv("HOROVOD_CLUSTER_CONTENT", str(CONTENT))
    monkeypatch.setenv("HOROVOD_CLUSTER_ARTIFACTS", str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, input: str | None = None):
        return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)
    return invoke


def published(artifacts: str | Path) -> dict:
    """The set_stats data of a run, from ansible-runner's saved events."""
    for path in Path(artifacts, "job_events").glob("*.json"):
        event = json.loads(path.read_text())
        if event["event"] == "playbook_on_stats":
            return event["event_data"]["artifact_data"]
    raise AssertionError(f"no playbook_on_stats event in {artifacts}")


def vaulted(path: Path, text: str, password: str) -> Path:
    path.write_bytes(VaultLib([("default", VaultSecret(password.encode()))]).encrypt(text.encode()))
    return path


def test_each_flag_reaches_the_play(cli, tmp_path):
    (tmp_path / "vars.yml").write_text("from_file: '007'\n")
    vaulted(tmp_path / "secret.yml", "secret: hush\n", "vault-pw")
    (tmp_path / "id_test").write_text("not a real key\n")
    run = cli("rollout", "-i", INVENTORY, "-l", "cpu_nodes[0]",
              "-e", "version=3.10", "-e", "a=1 b=2", "-e", '{"json_list": [1, "x"]}', "-e", "@vars.yml",
              "-e", "@secret.yml", "--ask-vault-pass", "-u", "bob", "-b", "-K", "--private-key", "id_test",
              "-t", "first", "-f", "3", "-vv", "-C", "-D", "--json", "-", input="become-pw\nvault-pw\n")
    assert run.exit_code == 0, run.output
    result = json.loads(run.stdout)  # --json -: the JSON alone on stdout, the table went to stderr
    echo = published(result["artifacts"])["echo"]
    assert list(echo) == ["hvc-node1"], "--limit 'cpu_nodes[0]' is the first host of the group"
    host = echo["hvc-node1"]
    assert host["vars"] == {"version": "3.10", "a": "1", "b": "2", "json_list": [1, "x"], "from_file": "007",
                            "secret": "hush"}
    assert host["context"] == {"remote_user": "bob", "become": True, "become_pass": "become-pw",
                               "private_key_file": str((tmp_path / "id_test").resolve())}
    assert (host["check_mode"], host["diff_mode"], host["forks"], host["verbosity"]) == (True, True, 3, 2)
    assert (host["run_tags"], host["ran"], host["limit"]) == (["first"], ["first"], "cpu_nodes[0]")
    # each -e reaches ansible-playbook as a file, in the order given: the text ones as files of the run's folder
    # (gone after the run), the @file ones as they are; the values above show ansible read them as its own -e
    command = json.loads(Path(result["artifacts"], "command").read_text())["command"]
    given = [command[i + 1] for i, arg in enumerate(command) if arg == "-e"]
    assert [Path(each).name for each in given] == ["extra-vars-0.json", "extra-vars-1.json", "extra-vars-2.json",
                                                   "vars.yml", "secret.yml"], command
    assert all(each.startswith("@") and not Path(each[1:]).name.startswith("extra-vars") or
               not Path(each[1:]).exists() for each in given)
    assert "a=1 b=2" not in json.dumps(command) and "json_list" not in json.dumps(command)
    assert "--ask-become-pass" in command and "--ask-vault-pass" in command
    assert "become-pw" not in json.dumps(command) and "vault-pw" not in json.dumps(command)
    # the answers stay in memory: ansible-runner writes no env/passwords (only the fixture echoes become_pass)
    assert not [p for p in (tmp_path / "runs").rglob("*") if p.is_file() and b"vault-pw" in p.read_bytes()]


def test_extra_vars_are_in_no_command_line_and_no_artifact(tmp_path):
    """Issue 45 item 7: `-e` values (an index URL with its token, a password) on ansible-playbook's command line are
    read by every user of the controller in `ps`, and kept in artifacts/<id>/command. They go as files of the run's
    folder, 0600, removed when the run ends; the play still gets them."""
    gate = tmp_path / "gate"
    run = _cli_process(tmp_path, "rollout", "-i", INVENTORY, "-l", "hvc-node1", "-e", f"echo_wait_for={gate}",
                       "-e", "version=tok-5ecret-kv", "-e", '{"secret": "json-5ecret"}', "--json", "-")
    try:
        deadline = time.monotonic() + 120
        while not _playbooks_naming(f"{tmp_path / 'runs'}/"):
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.2)
        seen = [p.parent.name for p in Path("/proc").glob("[0-9]*/cmdline")
                if b"5ecret" in _read(p) and b"pytest" not in _read(p)]
        assert not seen, f"processes with the values on their command line: {seen}"
        files = list((tmp_path / "runs").rglob("extra-vars-*.json"))
        assert len(files) == 3 and {oct(f.stat().st_mode & 0o777) for f in files} == {"0o600"}, files
    finally:
        gate.touch()
        out, log = run.communicate(timeout=300)
    assert run.returncode == 0, log
    result = json.loads(out)
    assert published(result["artifacts"])["echo"]["hvc-node1"]["vars"]["version"] == "tok-5ecret-kv"
    assert not list((tmp_path / "runs").rglob("extra-vars-*.json")), "the files outlive the run"
    # the echo play publishes the values it got (job events): every other file of the run is clean
    leaks = [str(p) for p in (tmp_path / "runs").rglob("*") if p.is_file() and "job_events" not in p.parts
             and b"5ecret" in p.read_bytes()]
    assert not leaks, leaks


def _read(cmdline: Path) -> bytes:
    with contextlib.suppress(OSError):
        return cmdline.read_bytes()
    return b""


def test_vault_file_skip_tags_and_patterns_from_the_api(tmp_path):
    vaulted(tmp_path / "secret.yml", "secret: hush\n", "vault-pw")
    (tmp_path / "pw").write_text("vault-pw\n")
    cluster = Cluster(INVENTORY, content_dir=CONTENT, artifacts_dir=tmp_path / "runs", become=True,
                      become_password="api-pw", vault_password_file=tmp_path / "pw",
                      extravars=[f"@{tmp_path / 'secret.yml'}", "version=3.10"])
    result = cluster.rollout(limit="gpu*:!nosuch", skip_tags="first")
    assert result.ok, result.to_json()
    host = published(result.artifacts)["echo"]["gpu-node1"]
    assert host["vars"]["secret"] == "hush" and host["vars"]["version"] == "3.10"
    assert (host["ran"], host["skip_tags"], host["play_hosts"]) == (["second"], ["first"], ["gpu-node1"])
    assert host["context"]["become_pass"] == "api-pw" and host["check_mode"] is False


def test_limit_is_resolved_by_ansible(tmp_path):
    cluster = Cluster(INVENTORY, content_dir=CONTENT, artifacts_dir=tmp_path)
    assert cluster.select("cpu_nodes[0]") == ["hvc-node1"]
    assert cluster.select("gpu*:!nosuch") == ["gpu-node1"]
    assert cluster.select("cluster:!cpu_nodes[1]") == ["gpu-node1", "hvc-node1"]
    assert cluster.select("~hvc-node[2-9]") == ["hvc-node2"]
    with pytest.raises(UsageError, match=r"did you mean hvc-node2\b"):
        cluster.select("hvc-nod2")
    with pytest.raises(UsageError, match=r"groups: all, cluster, cpu_nodes, gpu_nodes\)$"):
        cluster.select("nosuch")
    # localhost is a host where the inventory has it (ansible's implicit one is in no inventory)
    with_localhost = tmp_path / "hosts.yml"
    with_localhost.write_text("all:\n  hosts:\n    localhost:\n      ansible_connection: local\n")
    assert Cluster(with_localhost, content_dir=CONTENT, artifacts_dir=tmp_path).select("localhost") == ["localhost"]
    assert not list(tmp_path.glob("*/2*")), "nothing ran"


def test_unknown_host_exits_2_with_a_suggestion(cli):
    run = cli("rollout", "-i", INVENTORY, "--limit", "hvc-nod2")
    assert run.exit_code == 2
    assert "did you mean hvc-node2" in run.output and "groups: all, cluster, cpu_nodes, gpu_nodes" in run.output


def test_list_hosts_and_tags_are_ansibles_own(cli):
    run = cli("rollout", "-i", INVENTORY, "-l", "gpu_nodes", "--list-hosts", "--list-tags")
    assert run.exit_code == 0, run.output
    assert re.search(r"hosts \(1\):\s+gpu-node1\s", run.output)
    assert "TASK TAGS: [always, first, second]" in run.output


def _cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    src = str(Path(horovod_cluster.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
            "HOROVOD_CLUSTER_CONTENT": str(CONTENT), "HOROVOD_CLUSTER_ARTIFACTS": str(tmp_path / "runs"), **extra}


def _cli_process(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen:
    """The CLI in a real process whose stdout and stderr are pipes, as in CI."""
    return subprocess.Popen([sys.executable, "-m", "horovod_cluster.cli", *map(str, args)], cwd=tmp_path,
                            env=_cli_env(tmp_path, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _playbooks_naming(text: str) -> list[int]:
    """The ansible-playbook processes of this machine whose command line names `text` (a run's extra vars are
    files of its folder: `tmp_path / "runs"` names the runs of one test)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if text.encode() in cmdline.read_bytes() and b"ansible-playbook" in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
    return found


def test_sigterm_stops_the_play_too(tmp_path):
    """A CI runner cancels a job with SIGTERM: the rollout stops its ansible-playbook (which runs in a
    session of its own) before it exits, instead of leaving the play running against the hosts."""
    gate = tmp_path / "never-opened"
    run = _cli_process(tmp_path, "rollout", "-i", INVENTORY, "-l", "hvc-node1", "-e", f"echo_wait_for={gate}")
    deadline = time.monotonic() + 60
    while not _playbooks_naming(f"{tmp_path / 'runs'}/"):
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.2)
    time.sleep(1)  # into the waiting task
    run.send_signal(signal.SIGTERM)
    run.communicate(timeout=60)
    assert run.returncode != 0
    deadline = time.monotonic() + 10
    while _playbooks_naming(f"{tmp_path / 'runs'}/") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _playbooks_naming(f"{tmp_path / 'runs'}/"), "ansible-playbook still runs after the rollout was stopped"


def test_a_second_rollout_on_one_inventory_is_refused_while_the_first_runs(tmp_path):
    """Issue 45 item 10: two rollouts on one inventory would remove each other's build folder and fill the same
    wheel folders. The second is refused before it runs anything (even with its own artifacts folder); a dry run
    (-C) is not; once the first has ended the next one runs."""
    gate = tmp_path / "gate"
    first = _cli_process(tmp_path, "rollout", "-i", INVENTORY, "-l", "hvc-node1", "-e", f"echo_wait_for={gate}")
    try:
        deadline = time.monotonic() + 120
        while not _playbooks_naming(f"{tmp_path / 'runs'}/"):
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.2)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        second = _cli_process(elsewhere, "rollout", "-i", INVENTORY, "-l", "hvc-node1")
        _, log = second.communicate(timeout=120)
        assert second.returncode == 2, log
        assert f"another rollout on this inventory is running (pid {first.pid} since " in log, log
        assert not (elsewhere / "runs").exists() or not list((elsewhere / "runs").rglob("job_events")), "it ran"
        dry = _cli_process(elsewhere, "rollout", "-i", INVENTORY, "-l", "hvc-node1", "-C")
        assert dry.communicate(timeout=300)[1] and dry.returncode == 0
    finally:
        gate.touch()
        first.communicate(timeout=300)
    assert first.returncode == 0
    after = _cli_process(tmp_path, "rollout", "-i", INVENTORY, "-l", "hvc-node1")
    assert after.communicate(timeout=300) and after.returncode == 0


def test_log_output_outside_a_terminal(tmp_path):
    """Plain lines per play and host, each failure with its message, heartbeats, whole tables."""
    run = _cli_process(tmp_path, "rollout", "-i", INVENTORY, "-e", "echo_sleep=3", "-e", FAIL_NODE2, "--json", "-",
                       HOROVOD_CLUSTER_HEARTBEAT="1")
    stdout, log = run.communicate(timeout=300)
    assert run.returncode == 1, log
    assert json.loads(stdout)["hosts"]["hvc-node2"]["failure"]["message"] == "echo failure on hvc-node2"
    assert "play: Echo" in log
    assert "hvc-node2  FAILED  Fail where asked" in log
    assert log.count("echo failure on hvc-node2") == 1, "the message once, in the summary"
    for host in ("hvc-node1", "gpu-node1"):
        assert re.search(rf"^{host}  Sleep where asked  running [12]s$", log, re.M), log
        assert f"{host}  play Echo: 7 tasks" in log
    assert "hvc-node2  play Echo: 6 tasks" in log
    assert re.search(r"^\W+host\W+status\W+ok\W+changed\W+failed\W+unreachable\W+skipped\W+time\W+$", log, re.M)
    assert re.search(r"^\W+hvc-node2\W+failed\W+4\W+0\W+1\W+0\W+1\W+[0-9.]+s\W+$", log, re.M), log
    assert "…" not in log, "the table is whole"


def test_runs_are_recorded_per_inventory(cli):
    failing = cli("rollout", "-i", INVENTORY, "-e", FAIL_NODE2)
    assert failing.exit_code == 1, failing.output
    assert cli("rollout", "-i", LOCAL).exit_code == 0

    mine = cli("report", "-i", INVENTORY)  # the run on that inventory, not the last one
    assert mine.exit_code == 1 and "echo failure on hvc-node2" in mine.output
    last = cli("report")  # no -i: the last run on any inventory, as before
    assert last.exit_code == 0 and "local1" in last.output and "hvc-node2" not in last.output
    assert "nothing to retry" in cli("retry").output

    retried = cli("retry", "-i", INVENTORY, "--json", "-")
    assert retried.exit_code == 0, retried.output
    result = json.loads(retried.stdout)
    assert set(result["hosts"]) == {"hvc-node2"} and result["limit"] == "hvc-node2"


def test_a_run_in_progress_is_never_rotated_away(cli, tmp_path):
    runs = Cluster(INVENTORY, content_dir=CONTENT, artifacts_dir=tmp_path / "runs").runs_dir
    gate = tmp_path / "gate"  # the slow run waits for it: still running whatever the machine's load
    slow = _cli_process(tmp_path, "rollout", "-i", INVENTORY, "-l", "hvc-node1", "-e", f"echo_wait_for={gate}",
                        "--keep", "1")
    deadline = time.monotonic() + 60
    while not (busy := [p for p in runs.glob("2*") if in_progress(p)]):
        assert slow.poll() is None and time.monotonic() < deadline, slow.communicate()
        time.sleep(0.2)

    try:
        # a dry run: a second real rollout on this inventory is refused while the slow one runs
        quick = cli("rollout", "-i", INVENTORY, "-l", "hvc-node2", "--keep", "1", "-C")
        assert quick.exit_code == 0, quick.output
        assert slow.poll() is None, "the slow run ended before the gate opened"
        assert busy[0].is_dir(), "the quick run kept the slow one's folder"
    finally:
        gate.touch()
    out, err = slow.communicate(timeout=300)
    assert slow.returncode == 0, out + err
    assert list(busy[0].glob("artifacts/*/result.json")), "the slow run finished in its folder"

    assert cli("rollout", "-i", INVENTORY, "-l", "hvc-node2", "--keep", "1").exit_code == 0
    assert len(list(runs.glob("2*"))) == 1, "once finished, runs rotate as before"
