"""Typed results built from runner event dicts (shaped like ansible-runner's), JSON and JUnit."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from horovod_cluster.cluster import UsageError, check_serial
from horovod_cluster.results import CheckReport, PlanResult, RolloutResult, from_json
from horovod_cluster.outcome import RunOutcome


def event(kind: str, host: str = "", **data) -> dict:
    return {"event": kind, "event_data": {"host": host, "play": "p", **data}}


def outcome(events, stats, rc=2) -> RunOutcome:
    return RunOutcome("site.yml", "failed", rc, Path("/nonexistent"), 10.0, 12.5, events, stats)


@pytest.fixture
def result() -> RolloutResult:
    events = [
        {"event": "playbook_on_play_start", "event_data": {"play": "p"}},
        event("runner_on_ok", "a", task="t1", duration=0.5, res={"changed": True}),
        event("runner_on_failed", "b", task="t1", duration=0.25, res={"msg": "boom"}),
        event("runner_on_failed", "a", task="t2", ignore_errors=True, res={"msg": "ignored"}),
        event("runner_on_unreachable", "c", task="t1", res={"msg": "no route"}),
    ]
    stats = {"ok": {"a": 2}, "changed": {"a": 1}, "failures": {"b": 1}, "dark": {"c": 1}, "ignored": {"a": 1}}
    return RolloutResult.from_outcome(outcome(events, stats))


def test_counts_and_failures(result):
    assert result.duration == 2.5 and not result.ok
    assert result.hosts["a"].status == "changed" and result.hosts["a"].failure is None
    assert result.hosts["a"].ignored == 1
    assert result.hosts["b"].failure.message == "boom"
    assert result.hosts["c"].failure.unreachable
    assert result.failed_hosts == ["b", "c"]


def test_a_rescued_failure_is_not_the_hosts_failure():
    # As the horovod role's compile stopped by horovod_build_timeout: the block's rescue reports why.
    events = [
        event("runner_on_failed", "a", task="Compile", res={"msg": "async task did not complete"}),
        event("runner_on_ok", "a", task="Keep the log"),
        event("runner_on_failed", "a", task="Report the failed build", res={"msg": "stopped by horovod_build_timeout"}),
        event("runner_on_failed", "b", task="Try", res={"msg": "rescued"}),
        event("runner_on_ok", "b", task="Fallback"),
    ]
    stats = {"ok": {"a": 1, "b": 1}, "failures": {"a": 1}, "rescued": {"a": 1, "b": 1}}
    rescued = RolloutResult.from_outcome(outcome(events, stats))
    assert rescued.hosts["a"].failure.task == "Report the failed build"
    assert rescued.hosts["b"].failure is None and rescued.hosts["b"].succeeded
    assert rescued.failed_hosts == ["a"]


def test_junit_is_valid_and_names_the_task(result):
    root = ET.fromstring(result.to_junit())
    suite = root.find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "1" and suite.get("errors") == "1"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["b"].find("failure").get("message") == "t1: boom"
    assert cases["c"].find("error") is not None and len(cases["a"]) == 0


def test_json_round_trip(result):
    again = from_json(result.to_json())
    assert again == result and again.to_json() == result.to_json()


def test_run_error_without_host_failure():
    bad = RolloutResult.from_outcome(outcome([], {}, rc=4))
    assert not bad.ok and "exited with 4" in bad.error
    assert ET.fromstring(bad.to_junit()).find("testsuite/testcase/error") is not None


def test_check_report_ok_rules(result):
    healthy = {"healthy": True, "problems": []}
    clean = RolloutResult.from_outcome(outcome([event("runner_on_ok", "a")], {"ok": {"a": 1}}, rc=0))
    assert CheckReport.from_stats({"hosts": {"a": healthy}, "findings": []}, clean).ok
    assert not CheckReport.from_stats({"hosts": {}}, clean).ok, "no host checked"
    sick = {"healthy": False, "problems": ["horovod not installed"]}
    report = CheckReport.from_stats({"hosts": {"a": sick}}, clean)
    assert not report.ok and report.unhealthy_hosts == ["a"]
    finding = {"key": "torch", "message": "hosts disagree", "values": {"a": "1", "b": "2"}}
    odd = CheckReport.from_stats({"hosts": {"a": healthy}, "findings": [finding]}, clean)
    assert not odd.ok
    failures = ET.fromstring(odd.to_junit()).findall(".//failure")
    assert [f.get("message") for f in failures] == ["hosts disagree"]
    assert from_json(odd.to_json()).to_json() == odd.to_json()


def test_check_report_warning_is_reported_but_not_a_failure():
    healthy = {"healthy": True, "problems": []}
    clean = RolloutResult.from_outcome(outcome([event("runner_on_ok", "a")], {"ok": {"a": 1}}, rc=0))
    warning = {"key": "torch", "severity": "warning", "message": "torch differs only across architectures",
               "values": {"a": "2.13.0+cpu", "pi": "2.5.1"}}
    report = CheckReport.from_stats({"hosts": {"a": healthy}, "findings": [warning]}, clean)
    assert report.ok and report.errors == [] and [f.key for f in report.warnings] == ["torch"]
    suite = ET.fromstring(report.to_junit())
    assert suite.findall(".//failure") == []
    assert "warning: torch differs" in suite.find(".//testcase[@name='torch']/system-out").text
    again = from_json(report.to_json())
    assert again.ok and again.findings[0].severity == "warning"


def test_plan_junit(result):
    plan = PlanResult({"a": {"cuda_toolkit": {"action": "skip", "method": "none", "reason": "no GPU"}}}, result)
    suites = ET.fromstring(plan.to_junit()).findall("testsuite")
    assert [s.get("name") for s in suites] == ["plan", "site.yml"]
    assert from_json(plan.to_json()).hosts == plan.hosts


@pytest.mark.parametrize("value", ["1", 3, "30%", "100%", "1,2,50%"])
def test_serial_accepts(value):
    assert check_serial(value)


@pytest.mark.parametrize("value", ["0", "-1", "abc", "101%", "0%", "1.5", ""])
def test_serial_refuses(value):
    with pytest.raises(UsageError):
        check_serial(value)


def test_serial_is_judged_by_the_settings_engine_preflight_runs():
    """One rule for `serial`: the package asks plugins/filter/hvc_settings.py, as preflight does for cluster_serial."""
    from horovod_cluster.content import settings_engine
    engine = settings_engine()
    for value in ["1", "30%", "1,2,50%", "0", "101%", "abc", "1.5"]:
        parts = value.split(",")
        try:
            check_serial(value)
            refused = False
        except UsageError as err:
            refused = True
            assert str(err) == f"bad serial {value!r}; allowed: {engine.SERIAL_FORM}"
        assert refused == bool(engine.serial_error(parts)), value


def test_smoke_per_controller():
    clean = RolloutResult.from_outcome(outcome([event("runner_on_ok", "a")], {"ok": {"a": 1}}, rc=0))
    hosts = {"a": {"healthy": True, "problems": []}}
    passed = {"gloo": {"ok": True, "world_size": 3}, "mpi": {"ok": True}}
    assert CheckReport.from_stats({"hosts": hosts, "smoke": passed}, clean).ok
    broken = {"gloo": {"ok": True}, "mpi": {"ok": False, "error": "timed out after 180 s", "command": "horovodrun"}}
    report = CheckReport.from_stats({"hosts": hosts, "smoke": broken}, clean)
    assert not report.ok
    failures = ET.fromstring(report.to_junit()).findall(".//testcase[@classname='check.smoke']/failure")
    assert [f.get("message") for f in failures] == ["timed out after 180 s"]
    skipped = CheckReport.from_stats({"hosts": hosts, "smoke": {"status": "skipped", "reason": "r"}}, clean)
    assert skipped.ok and ET.fromstring(skipped.to_junit()).find(".//skipped") is not None


def test_a_rollout_carries_its_closing_smoke_test():
    """RolloutResult.smoke: what check.yml published at the rollout's end, kept through JSON and shown."""
    from io import StringIO

    from rich.console import Console

    from horovod_cluster.views.render import render

    passed = {"gloo": {"ok": True, "size": 6, "seconds": 2.1, "ranks": [{"host": "a"}, {"host": "b"}]}}
    run = RolloutResult.from_outcome(outcome([event("runner_on_ok", "a")], {"ok": {"a": 1}}, rc=0), smoke=passed)
    assert from_json(run.to_json()).smoke == passed
    shown = StringIO()
    render(run, Console(file=shown, width=200))
    assert "smoke gloo: passed 6 ranks on a, b in 2.1 s" in shown.getvalue()
    skipped = RolloutResult.from_outcome(outcome([event("runner_on_ok", "a")], {"ok": {"a": 1}}, rc=0),
                                         smoke={"status": "skipped", "reason": "no task changed a host"})
    shown = StringIO()
    render(skipped, Console(file=shown, width=200))
    assert "smoke: skipped no task changed a host" in shown.getvalue()
    assert RolloutResult.from_outcome(outcome([], {}, rc=0)).smoke is None


def test_a_rollout_says_whether_the_cluster_was_settled():
    """RolloutResult.settled: settled.yml's verdict, kept through JSON; shown as taken, or why not per reason."""
    from io import StringIO

    from rich.console import Console

    from horovod_cluster.views.render import render

    def shown(settled):
        run = RolloutResult.from_outcome(outcome([event("runner_on_ok", "a")], {"ok": {"a": 1}}, rc=0),
                                         settled=settled)
        assert from_json(run.to_json()).settled == settled
        text = StringIO()
        render(run, Console(file=text, width=300))
        return text.getvalue()

    assert "settled: nothing changed since the last rollout, no role ran" in shown(
        {"settled": True, "hosts": {"a": "settled", "b": "settled"}})
    why = shown({"settled": False, "hosts": {"a": "settled", "b": "changed on the host: /opt/horovod",
                                             "c": "changed on the host: /opt/horovod"}})
    assert "settled: no, every role ran: settled (a); changed on the host: /opt/horovod (b, c)" in why
    assert "settled:" not in shown(None)
