"""Issue 44: what a log (no terminal) shows of a run: each failure's message once, and one tally (the recap's)."""
from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from horovod_cluster.views.progress import PlainProgress, TaskCounts
from horovod_cluster.views.render import render
from horovod_cluster.results import PlanResult, RolloutResult
from horovod_cluster.outcome import RunOutcome

REFUSAL = "host b: horovod_make_jobs is the string 'many'; allowed: a whole number"


def event(kind: str, host: str = "", **data) -> dict:
    return {"event": kind, "event_data": {"host": host, "play": "Plan", **data}}


# b's first failure is rescued (preflight's block reports why), the second stops it: the recap counts one.
EVENTS = [
    {"event": "playbook_on_play_start", "event_data": {"play": "Plan"}},
    event("runner_on_ok", "a", task="decide", res={"changed": False}),
    event("runner_on_failed", "b", task="Refuse this host", res={"msg": f"preflight failed on b:\n- {REFUSAL}"}),
    event("runner_on_ok", "b", task="record", res={}),
    event("runner_on_failed", "b", task="Fail the host", res={"msg": f"preflight refuses b:\n- {REFUSAL}"}),
    event("runner_on_failed", "a", task="probe", ignore_errors=True, res={"msg": "ignored"}),
    {"event": "playbook_on_stats", "event_data": {}},
]
STATS = {"ok": {"a": 2, "b": 1}, "failures": {"b": 1}, "rescued": {"b": 1}, "ignored": {"a": 1}}


def _log(result_of=lambda run: run) -> str:
    """The plain progress of EVENTS, then the summary, as `horovod-cluster` writes them to a log."""
    out = io.StringIO()
    console = Console(file=out, width=1000)
    with PlainProgress(console, heartbeat=3600) as progress:
        for one in EVENTS:
            progress(one)
    run = RolloutResult.from_outcome(RunOutcome("playbooks/plan.yml", "failed", 2, Path("/nonexistent"), 0.0, 1.0,
                                                EVENTS, STATS))
    render(result_of(run), console)
    return out.getvalue()


def test_a_failure_message_is_printed_once():
    log = _log()
    assert log.count(REFUSAL) == 1, log
    assert "b  FAILED  Fail the host" in log and "b failed at task Fail the host (play Plan):" in log


def test_a_plan_refusal_is_printed_once():
    """The plan row of the refusing role points at the failure instead of repeating it."""
    plan = {"b": {"preflight": {"action": "fail", "method": "validate", "reason": REFUSAL}},
            "a": {"preflight": {"action": "none", "method": "validate", "reason": "all settings valid"}}}
    log = _log(lambda run: PlanResult(hosts=plan, run=run))
    assert log.count(REFUSAL) == 1, log
    assert "(the failure below)" in log and "all settings valid" in log


def test_one_tally_the_recap():
    """The per-play line counted b's rescued failure and a's ignored one as failed=1 each, against the recap's
    failed=1 for b and 0 for a: now only the summary counts."""
    log = _log()
    assert not re.search(r"\bfailed=\d", log), log
    assert "a  play Plan: 2 tasks" in log and "b  play Plan: 3 tasks" in log
    row = re.search(r"^\W+a\W+ok\W+(\d+)\W+(\d+)\W+(\d+)", log, re.M)
    assert row and row.groups() == ("2", "0", "0"), log


def test_task_counts_of_another_shape_are_forgotten_not_a_traceback(tmp_path):
    """Issue 45: the progress bar's remembered lengths (task-counts.json) read as a list or a list of plays."""
    path = tmp_path / "task-counts.json"
    for text, kept in (("[1, 2]", {}), ('{"site.yml": [1], "plan.yml": {"p": 3, "q": "x"}}', {"plan.yml": {"p": 3}}),
                       ('{"site.yml": {', {})):
        path.write_text(text)
        counts = TaskCounts(path)
        assert counts.data == kept and counts.get("site.yml", "p") is None
