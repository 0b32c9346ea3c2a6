"""The horovod-cluster CLI: real runs through click's runner, one real subprocess, exit codes."""
from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from horovod_cluster.cli import main
from horovod_cluster.results import TaskFailure, from_json

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "api"


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """Invoke the CLI on the fixture content with a private artifacts folder."""
    monkeypatch.setenv("HOROVOD_CLUSTER_CONTENT", str(FIXTURES / "content"))
    monkeypatch.setenv("HOROVOD_CLUSTER_ARTIFACTS", str(tmp_path / "runs"))

    def invoke(*args: str):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    return invoke


def test_rollout_failures_exit_1_and_write_reports(cli, tmp_path):
    junit, report = tmp_path / "r.xml", tmp_path / "r.json"
    run = cli("rollout", "-i", str(FIXTURES / "inventory.yml"), "--junit", str(junit), "--json", str(report))
    assert run.exit_code == 1, run.output
    assert "fixture failure on local2" in run.output and "unreachable" in run.output
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"local1", "local2", "gone1"}
    assert cases["local2"].find("failure") is not None and cases["gone1"].find("error") is not None
    assert '"kind": "rollout"' in report.read_text()

    # report re-renders the saved run; retry runs only the two bad hosts
    again = cli("report", "--junit", str(tmp_path / "again.xml"))
    assert again.exit_code == 1 and "local2" in again.output
    assert ET.parse(tmp_path / "again.xml").getroot().find("testsuite") is not None
    retry = cli("retry", "--json", str(tmp_path / "retry.json"))
    assert retry.exit_code == 1
    assert "local1" not in retry.output.split("site.yml", 1)[1]


def test_rollout_ok_exits_0(cli):
    run = cli("rollout", "-i", str(FIXTURES / "local.yml"), "--serial", "1,50%", "--tags", "fixture_change", "-v")
    assert run.exit_code == 0, run.output
    assert "rollout: OK" in run.output
    # an extra var reaches the play: every host now fails the fixture's task
    failing = cli("rollout", "-i", str(FIXTURES / "local.yml"), "-e", "fixture_fail=true")
    assert failing.exit_code == 1 and "fixture failure on local1" in failing.output


def test_check_exits_1_while_horovod_is_missing(cli, tmp_path):
    run = cli("check", "-i", str(FIXTURES / "mixed.yml"), "--no-smoke", "--junit", str(tmp_path / "c.xml"),
              "--html", str(tmp_path / "c.html"))
    assert run.exit_code == 1, run.output
    assert "hosts disagree on torch" in run.output
    failures = ET.parse(tmp_path / "c.xml").getroot().findall(".//failure")
    assert any("torch" in (f.get("message") or "") for f in failures)
    page = (tmp_path / "c.html").read_text()
    assert f"wrote {tmp_path / 'c.html'}" in run.output.replace("\n", "")
    assert page.startswith("<!DOCTYPE html>") and "hosts disagree on torch" in page and "FAILED" in page


def test_report_writes_html_of_a_saved_check(cli, tmp_path):
    """--html FILE and --html - (the page alone on stdout); a saved rollout has no HTML report."""
    saved = Path(__file__).resolve().parent.parent / "fixtures" / "check" / "sandbox-check.json"
    run = cli("report", "--from", str(saved), "--html", str(tmp_path / "check.html"))
    assert run.exit_code == 0, run.output
    page = (tmp_path / "check.html").read_text()
    assert page.count("<circle") == 4 and "hvc-node3" in page
    stdout = CliRunner().invoke(main, ["report", "--from", str(saved), "--html", "-"])
    assert stdout.exit_code == 0 and stdout.stdout == page
    assert "check: OK" in stdout.stderr, "the summary went to stderr"
    rollout = tmp_path / "rollout.json"
    rollout.write_text(from_json(saved.read_text()).run.to_json())
    refused = cli("report", "--from", str(rollout), "--html", str(tmp_path / "r.html"))
    assert refused.exit_code == 2 and "--html is for check results" in refused.output
    assert not (tmp_path / "r.html").exists()


def test_report_prints_host_text_as_text(cli, tmp_path):
    """Issue 45: a host string "[/x]" in a saved result was a rich markup traceback in `report --from`, and an
    escape sequence a host reported reached the terminal. Both are shown as they are, as text."""
    saved = Path(__file__).resolve().parent.parent / "fixtures" / "check" / "sandbox-check.json"
    hostile = "node[/x][bold]\\u001b[31m"  # JSON text: the host name holds ESC [ 3 1 m
    (tmp_path / "check.json").write_text(saved.read_text().replace("hvc-node3", hostile))
    run = cli("report", "--from", str(tmp_path / "check.json"))
    assert run.exit_code == 0, run.output
    assert "node[/x][bold]\\x1b[31m" in run.output.replace("\n", "") and "\x1b" not in run.output
    rollout = from_json((tmp_path / "check.json").read_text()).run
    host = rollout.hosts["node[/x][bold]\x1b[31m"]
    host.failed, host.failure = 1, TaskFailure(task="[red]task[/x]", play="p[/]", message="msg [/x]\x1b[2J")
    (tmp_path / "rollout.json").write_text(rollout.to_json())
    failed = cli("report", "--from", str(tmp_path / "rollout.json"))
    assert "Traceback" not in failed.output and "\x1b" not in failed.output, failed.output
    assert "at task [red]task[/x] (play p[/])" in failed.output and "msg [/x]\\x1b[2J" in failed.output


@pytest.mark.parametrize("args, message", [
    (["-i", "/nonexistent/hosts.yml"], "inventory not found"),
    (["-i", "{broken}"], "does not parse"),
    (["-i", "{inventory}", "--limit", "nohost"], "--limit 'nohost' selects no host of the inventory"),
    (["-i", "{inventory}", "--limit", "local3"], "did you mean local2 or local1?"),
    (["-i", "{inventory}", "--serial", "many"], "bad serial"),
    (["-i", "{empty}"], "no hosts"),
])
def test_bad_input_exits_2(cli, tmp_path, args, message):
    broken = tmp_path / "broken.yml"
    broken.write_text("all: [broken\n  x: :\n")
    empty = tmp_path / "empty.yml"
    empty.write_text("all:\n  hosts: {}\n")
    args = [a.format(broken=broken, inventory=FIXTURES / "inventory.yml", empty=empty) for a in args]
    run = CliRunner().invoke(main, ["rollout", *args])
    assert run.exit_code == 2, run.output
    assert message in run.output and "Traceback" not in run.output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("value, message", [
    ("@{missing}", "cannot read"),
    ("@{listed}", "is list, not a mapping"),
    ("{{broken json", "does not parse as JSON or YAML"),
    ("[1, 2]", "is list, not a mapping"),
    ("a=1 b", "'b' has no ="),
    ("vars.yml", "'vars.yml' has no ="),
    ("./vars.yml", "is given as @./vars.yml"),
    ("a='unclosed", "No closing quotation"),
])
def test_bad_extra_vars_exit_2_before_anything_runs(cli, tmp_path, value, message):
    """Issue 44: a -e ansible-playbook would refuse printed two empty tables and exited 1; now one usage error
    naming the option, and no run folder."""
    (tmp_path / "listed.yml").write_text("- a\n- b\n")
    value = value.format(missing=tmp_path / "missing.yml", listed=tmp_path / "listed.yml")
    run = cli("plan", "-i", str(FIXTURES / "local.yml"), "-e", "ok=1", "--extra-vars", value)
    assert run.exit_code == 2, run.output
    assert "'-e' / '--extra-vars'" in run.output and message in run.output, run.output
    assert run.output.count(message) == 1 and "Traceback" not in run.output
    assert not (tmp_path / "runs").exists()


def test_extra_vars_ansible_takes_pass_unchanged(cli, tmp_path):
    """Every form ansible-playbook reads passes the check, and reaches ansible as given."""
    (tmp_path / "vars.yml").write_text("fixture_from_file: 1\n")
    (tmp_path / "vault.yml").write_text("$ANSIBLE_VAULT;1.1;AES256\n6162\n")
    from horovod_cluster.cluster import check_extra_vars
    for value in (f"@{tmp_path / 'vars.yml'}", f"@{tmp_path / 'vault.yml'}", '{"a": [1]}', "{a: !unsafe '{{x}}'}",
                  'a=1 b="two words"', "x={{ y | default(1) }}", ""):
        assert check_extra_vars(value) == value
    run = cli("rollout", "-i", str(FIXTURES / "local.yml"), "-e", f"@{tmp_path / 'vars.yml'}", "-e", "fixture_fail=true")
    assert run.exit_code == 1 and "fixture failure on local1" in run.output


@pytest.mark.parametrize("command", ["plan", "rollout", "retry", "check", "report"])
def test_two_outputs_on_stdout_are_a_usage_error(cli, tmp_path, command):
    """Issue 44: --json - --junit - wrote both documents to stdout, one after the other (neither parses)."""
    extra = ["--html", "-"] if command in ("check", "report") else []
    run = cli(command, "-i", str(FIXTURES / "local.yml"), "--json", "-", "--junit", "-", *extra)
    assert run.exit_code == 2, run.output
    assert "--json - and --junit -" in run.output and "one document per stream" in run.output
    assert run.output.count("one document per stream") == 1 and "<?xml" not in run.output
    assert not (tmp_path / "runs").exists()


def test_report_without_a_run_exits_2(cli):
    run = cli("report")
    assert run.exit_code == 2 and "no saved run" in run.output


def test_real_subprocess_from_another_folder(tmp_path):
    """The installed console script, run elsewhere, with a user inventory given by path."""
    exe = shutil.which("horovod-cluster")
    assert exe, "horovod-cluster is not installed in this environment"
    env = {**os.environ, "HOROVOD_CLUSTER_CONTENT": str(FIXTURES / "content"),
           "HOROVOD_CLUSTER_ARTIFACTS": str(tmp_path / "runs")}
    junit = tmp_path / "plan.xml"
    done = subprocess.run([exe, "plan", "-i", str(FIXTURES / "local.yml"), "--junit", str(junit)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "python_env" in done.stdout
    assert len(ET.parse(junit).getroot().findall("testsuite/testcase")) >= 2


@pytest.mark.parametrize("group", [[], ["sandbox"]], ids=["main", "sandbox"])
def test_help_lists_every_command_whole(group):
    """Issue 44: `--help` cut each command's line to 80 columns with "..."; now its first sentence, wrapped."""
    run = CliRunner().invoke(main, [*group, "--help"], terminal_width=80)
    assert run.exit_code == 0, run.output
    commands = " ".join(run.output.split("Commands:", 1)[1].split())
    assert "..." not in commands
    parent = main.commands[group[0]] if group else main
    for name, command in parent.commands.items():
        sentence = command.help.split(".", 1)[0].split("\n\n", 1)[0]
        assert f"{name} {' '.join(sentence.split())}." in commands, name


@pytest.mark.parametrize("text", ['{"kind": "rollout", "hosts": {', "not json", "[1, 2]",
                                  '{"kind": "check", "run": 5}'],
                         ids=["truncated", "not-json", "list", "wrong-shape"])
def test_corrupt_saved_run_exits_2(cli, tmp_path, text):
    """Issue 45: a truncated or foreign last-rollout.json was a traceback in `retry`, and a list in
    `report --from` too; now one line naming the file, exit 2."""
    (tmp_path / "runs").mkdir()
    for path in (tmp_path / "runs" / "last-rollout.json", tmp_path / "saved.json"):
        path.write_text(text)
    for args, path in ((["retry"], tmp_path / "runs" / "last-rollout.json"),
                       (["report", "--from", str(tmp_path / "saved.json")], tmp_path / "saved.json")):
        run = CliRunner().invoke(main, args)
        assert run.exit_code == 2, (args, run.output, run.exception)
        assert f"{path} is not a saved horovod-cluster result" in run.output.replace("\n", ""), run.output


def test_unwritable_report_exits_2(cli, tmp_path):
    """Issue 45: an OSError writing a report (no such folder, permission denied, a full disk) was a traceback;
    now one line naming the file, exit 2."""
    saved = Path(__file__).resolve().parent.parent / "fixtures" / "check" / "sandbox-check.json"
    target = tmp_path / "missing" / "r.json"
    run = CliRunner().invoke(main, ["report", "--from", str(saved), "--json", str(target)])
    assert run.exit_code == 2, (run.output, run.exception)
    assert f"{target}: No such file or directory" in run.output.replace("\n", ""), run.output
    assert "Traceback" not in run.output


@pytest.mark.parametrize("source", ["hostfile", "slurm"])
def test_run_refuses_a_bad_host_name_before_anything_runs(cli, tmp_path, monkeypatch, source):
    """Issue 45: --hostfile's and a Slurm allocation's names reached horovodrun unchecked."""
    (tmp_path / "hosts").write_text("local1 slots=1\n_x slots=1\n")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "local1,_x")
    monkeypatch.setenv("SLURM_TASKS_PER_NODE", "1(x2)")
    hostfile = ["--hostfile", str(tmp_path / "hosts")] if source == "hostfile" else []
    run = cli("run", "-i", str(FIXTURES / "local.yml"), *hostfile, "--", "python", "-c", "1")
    assert run.exit_code == 2, run.output
    assert "line 2: '_x' is not a host name or address" in run.output.replace("\n", ""), run.output


@pytest.mark.parametrize("args, message", [
    (["--min-np", "2"], "min_np and max_np are for elastic jobs (--elastic)"),
    (["--elastic", "--controller", "mpi"], "elastic: controller 'mpi': horovodrun's elastic mode runs with Gloo only"),
])
def test_run_refuses_elastic_options_it_cannot_honour_before_anything_runs(cli, args, message):
    run = cli("run", "-i", str(FIXTURES / "local.yml"), *args, "--", "python", "-c", "1")
    assert run.exit_code == 2, run.output
    assert message in run.output.replace("\n", " "), run.output
    assert "play:" not in run.output  # refused before the staging playbook
