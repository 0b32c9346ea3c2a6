"""The Cluster API on real ansible runs against this machine (connection local) and a dead host.

Fixtures: tests/fixtures/api/content is a tiny content folder (site.yml that fails where asked,
plan.yml publishing hvc_plan like the real one, and a link to the real playbooks/check.yml).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from horovod_cluster import CheckReport, Cluster, InventoryError, PlanResult, RolloutResult, UsageError
from horovod_cluster.cluster import recorded_plan_forks
from horovod_cluster.ansible.events import TaskLog

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "api"
CONTENT = FIXTURES / "content"


def make(tmp: Path, inventory: str = "inventory.yml", **kwargs) -> Cluster:
    return Cluster(FIXTURES / inventory, content_dir=CONTENT, artifacts_dir=tmp, **kwargs)


@pytest.fixture(scope="module")
def rolled(tmp_path_factory) -> tuple[Cluster, RolloutResult, list[str]]:
    """One rollout over local1 (ok), local2 (a failing task) and gone1 (unreachable)."""
    progress: list[str] = []
    cluster = make(tmp_path_factory.mktemp("runs"), keep_runs=2,
                   on_event=lambda e: progress.append(e.get("event", "")))
    return cluster, cluster.rollout(), progress


def test_rollout_reports_each_host(rolled):
    _, result, _ = rolled
    assert not result.ok
    assert set(result.hosts) == {"local1", "local2", "gone1"}
    local1 = result.hosts["local1"]
    assert (local1.status, local1.changed, local1.failed, local1.failure) == ("changed", 1, 0, None)
    assert local1.duration > 0


def test_task_log_records_how_each_task_ended(tmp_path):
    tasks = TaskLog()
    make(tmp_path, on_event=tasks).rollout()
    assert tasks.hosts("Report a change") == ["local1", "local2"]
    assert tasks.hosts("Fail where asked", "failed") == ["local2"]
    assert tasks.last_ends("Fail where") == {"local1": "skipped", "local2": "failed"}
    assert tasks.last_ends("Say") == {"local1": "ok"}
    assert tasks.hosts("Report a change", "unreachable") == ["gone1"]
    assert set(tasks.seconds) >= {("local1", "Report a change"), ("local1", "Say done")}


def test_failed_task_and_its_message(rolled):
    _, result, _ = rolled
    local2 = result.hosts["local2"]
    assert local2.status == "failed" and local2.failed == 1
    assert local2.failure.task == "Fail where asked"
    assert local2.failure.message == "fixture failure on local2"
    assert local2.failure.play == "Fixture rollout"


def test_unreachable_host(rolled):
    _, result, _ = rolled
    gone = result.hosts["gone1"]
    assert gone.status == "unreachable" and gone.unreachable == 1
    assert gone.failure.unreachable and "127.0.0.2" in gone.failure.message
    assert result.failed_hosts == ["gone1", "local2"]


def test_artifacts_and_events(rolled):
    _, result, progress = rolled
    artifacts = Path(result.artifacts)
    assert (artifacts / "job_events").is_dir() and (artifacts / "result.json").is_file()
    assert "runner_on_start" in progress and "playbook_on_stats" in progress


def test_retry_targets_exactly_failed_hosts(rolled):
    cluster, _, _ = rolled
    retried = cluster.retry_failed()
    assert set(retried.hosts) == {"local2", "gone1"}
    assert retried.limit == "gone1,local2"
    # a second cluster object (another process) finds the last rollout in the artifacts folder
    again = Cluster(FIXTURES / "inventory.yml", content_dir=CONTENT,
                    artifacts_dir=cluster.artifacts_dir, keep_runs=2).retry_failed()
    assert set(again.hosts) == {"local2", "gone1"}
    runs = [p for p in cluster.runs_dir.iterdir() if p.is_dir()]
    assert len(runs) == 2, "run folders are rotated (keep_runs=2)"
    assert cluster.runs_dir.parent == cluster.artifacts_dir, "runs are kept per inventory"
    assert Path(again.artifacts).parent.parent in runs


def test_retry_with_nothing_failed(tmp_path):
    cluster = make(tmp_path, "local.yml")
    first = cluster.rollout(serial=1, max_fail_percentage=0, tags=["fixture_change"])
    assert first.ok and set(first.hosts) == {"local1", "local2"}
    assert first.hosts["local1"].changed == 1
    assert first.plays == ["Fixture rollout", "Fixture rollout"], "serial=1: one batch per host"
    nothing = cluster.retry_failed()
    assert nothing.ok and nothing.hosts == {}


def test_plan_reads_set_stats(tmp_path):
    plan = make(tmp_path).plan(limit="local1,local2")
    assert isinstance(plan, PlanResult) and plan.ok
    assert plan.hosts["local1"]["python_env"]["method"] == "venv"
    assert set(plan.hosts) == {"local1", "local2"}


def test_runs_keep_facts_in_memory_and_a_recorded_plan_runs_a_worker_per_core(tmp_path):
    """ansible-runner's default fact cache (a JSON file per host in the run's artifacts, written again on every
    set_fact) is not used. A plan over recorded facts reaches no host: it runs a worker per core and one more,
    unless forks are given; a run that reaches hosts keeps ansible's own forks."""
    facts = tmp_path / "facts"
    facts.mkdir()

    def command(result) -> tuple[list[str], dict[str, str]]:
        recorded = json.loads((Path(result.run.artifacts) / "command").read_text())
        assert not (Path(result.run.artifacts) / "fact_cache").exists()
        assert recorded["env"].get("ANSIBLE_CACHE_PLUGIN", "memory") == "memory", recorded["env"]
        return recorded["command"], recorded["env"]

    argv, _ = command(make(tmp_path / "recorded").plan(limit="local1", facts_dir=facts))
    assert argv[argv.index("--forks") + 1] == str(recorded_plan_forks()) == str(len(os.sched_getaffinity(0)) + 1)
    argv, _ = command(make(tmp_path / "given", forks=7).plan(limit="local1", facts_dir=facts))
    assert argv[argv.index("--forks") + 1] == "7"
    argv, _ = command(make(tmp_path / "live").plan(limit="local1"))
    assert "--forks" not in argv


def test_check_reports_versions_and_missing_horovod(tmp_path):
    report = make(tmp_path, "local.yml").check()
    assert isinstance(report, CheckReport)
    assert set(report.hosts) == {"local1", "local2"}
    host = report.hosts["local1"]
    assert host["versions"]["python"].count(".") == 2 and host["arch"]
    if host["versions"]["horovod"] is None:  # no horovod role yet: reported, not failed
        assert "horovod not installed" in host["problems"] and not report.ok
    assert report.run.ok and report.findings == []
    # The smoke test cannot start without horovod, and says why (roles/horovod_check).
    assert report.smoke["_preconditions"]["ok"] is False
    assert "horovod is not installed" in report.smoke["_preconditions"]["error"]
    assert report.bandwidth is None and not report.smoke_ok


def test_check_finding_names_the_odd_host(tmp_path):
    report = make(tmp_path, "mixed.yml").check(smoke=False)
    keys = {f.key: f for f in report.findings}
    assert "torch" in keys and keys["torch"].values["local2"] == "9.9.9"
    assert "local2=9.9.9" in keys["torch"].message
    assert report.smoke is None and not report.ok


def test_bad_input_is_refused_before_running(tmp_path):
    with pytest.raises(InventoryError, match="not found"):
        Cluster(tmp_path / "nope.yml", content_dir=CONTENT, artifacts_dir=tmp_path).rollout()
    broken = tmp_path / "broken.yml"
    broken.write_text("all: [broken\n  x: :\n")
    with pytest.raises(InventoryError, match="does not parse"):
        Cluster(broken, content_dir=CONTENT, artifacts_dir=tmp_path).rollout()
    cluster = make(tmp_path)
    with pytest.raises(UsageError, match="'nohost' selects no host"):
        cluster.rollout(limit="nohost")
    with pytest.raises(UsageError, match="serial"):
        cluster.rollout(serial="0")
    assert not [p for p in tmp_path.iterdir() if p.is_dir()], "nothing ran"


def test_no_secret_of_the_controller_is_kept_in_the_artifacts(tmp_path, monkeypatch):
    """Issue 45 item 7: ansible-runner records ansible-playbook's whole environment in artifacts/<id>/command,
    and the last runs' artifacts are kept: a CI token in the controller's environment stays out of them (its
    name is kept); the variables this package sets stay whole. The passwords are not in the options' repr."""
    monkeypatch.setenv("HVC_TEST_CI_TOKEN", "tok-5ecret-123")
    cluster = make(tmp_path, become_password="become-5ecret", vault_password="vault-5ecret")
    result = cluster.rollout(limit="local1")
    assert result.hosts["local1"].failed == 0, result.to_json()
    leaks = [str(p) for p in tmp_path.rglob("*") if p.is_file() and b"5ecret" in p.read_bytes()]
    assert not leaks, leaks
    recorded = json.loads((Path(result.artifacts) / "command").read_text())
    assert "HVC_TEST_CI_TOKEN" in recorded["env_inherited"] and "HVC_TEST_CI_TOKEN" not in recorded["env"]
    assert recorded["env"]["ANSIBLE_CONFIG"] == str(CONTENT / "ansible.cfg")
    assert "5ecret" not in repr(cluster.options) and "5ecret" not in repr(cluster)


def test_retry_takes_no_playbook_env_or_vars_from_the_saved_run(tmp_path):
    """Issue 45 item 14: the saved last-rollout.json is a file of the artifacts folder; whoever can write it must
    not choose what `retry` runs with the user's passwords: a playbook outside the content folder is refused,
    saved environment variables and extra vars other than a rollout's own are dropped."""
    cluster = make(tmp_path)
    first = cluster.rollout(limit="local1,local2", serial=1)
    assert first.failed_hosts == ["local2"], first.to_json()
    saved_path = cluster.runs_dir / "last-rollout.json"
    saved = json.loads(saved_path.read_text())
    evil = tmp_path / "evil.yml"
    evil.write_text("- hosts: all\n  tasks: [{ansible.builtin.file: {path: " + str(tmp_path / "pwned") + ", "
                    "state: touch}}]\n")
    saved["options"].update(envvars={"ANSIBLE_CALLBACK_PLUGINS": str(tmp_path)},
                            extravars={"cluster_serial": ["1", "50%"], "ansible_ssh_common_args": "-o ProxyCommand=x"})
    saved_path.write_text(json.dumps(saved))
    fresh = make(tmp_path)  # another process: only the saved file
    retried = fresh.retry_failed()
    assert set(retried.hosts) == {"local2"}
    command = json.loads((Path(retried.artifacts) / "command").read_text())["command"]
    assert "ProxyCommand" not in json.dumps(command) and retried.options["extravars"] == {
        "cluster_serial": ["1", "50%"]}
    assert "ANSIBLE_CALLBACK_PLUGINS" not in json.dumps(retried.options)
    saved["options"]["playbook"] = str(evil)
    saved_path.write_text(json.dumps(saved))
    with pytest.raises(UsageError, match="is not a playbook of the content folder"):
        make(tmp_path).retry_failed()
    saved["options"]["playbook"] = "../" * 12 + str(evil)
    saved_path.write_text(json.dumps(saved))
    with pytest.raises(UsageError, match="is not a playbook of the content folder"):
        make(tmp_path).retry_failed()
    assert not (tmp_path / "pwned").exists()
