"""benchmarks/cold_start.py's P1c, over a real run: `--wipe` at d9fd766 on this 2-core machine with nothing cached
(tests/fixtures/benchmarks/cold_start-d9fd766.json, the figures docs/benchmarks.md quotes)."""
from __future__ import annotations

import json
import sys

import pytest

from conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import cold_start  # noqa: E402

RUN = json.loads((FIXTURES / "benchmarks" / "cold_start-d9fd766.json").read_text())
# scripts/sandbox-run.sh's stage lines of that run, as printed
STAGE_LINES = """=== stage setup: bash scripts/setup.sh
=== stage setup: ok in 61 s
=== stage sandbox-up: horovod-cluster sandbox up --hosts 3
=== stage sandbox-up: ok in 86 s
=== stage rollout: horovod-cluster rollout -i inventories/sandbox --junit /tmp/hvc-cold-2dc2uzg9/hvc-rollout.xml
=== stage rollout: ok in 623 s
=== stage check: horovod-cluster check -i inventories/sandbox --bench --json /tmp/hvc-cold-2dc2uzg9/hvc-check.json
=== stage check: ok in 62 s
=== stage times
"""


def test_the_stages_are_read_from_the_main_jobs_output():
    assert cold_start.stage_seconds(STAGE_LINES) == {"setup": 61, "sandbox-up": 86, "rollout": 623, "check": 62}


def test_p1c_is_the_main_job_over_the_one_compile():
    figures = cold_start.ratios(RUN["stages_s"], RUN["tasks"])
    assert figures["main_job_s"] == 832
    assert figures["compile_s"] == 266.4
    assert figures["compiled_on"] == ["hvc-node1"]  # one compile: the other two hosts installed its wheel
    assert figures["p1c"] == round(832 / 266.4, 3) == 3.123
    assert figures["max_for_target_s"] == 532.8


def test_the_builders_roles_say_where_the_rest_goes():
    roles = cold_start.ratios(RUN["stages_s"], RUN["tasks"])["builder_roles_s"]
    assert list(roles)[:3] == ["site.yml horovod", "site.yml python_env", "check.yml horovod_check"]
    assert roles["site.yml horovod"] >= 266.4  # the compile is one of the role's tasks
    builder_tasks = sum(s for s, host, *_ in RUN["tasks"] if host == "hvc-node1")
    assert abs(sum(roles.values()) - builder_tasks) < 0.5


def test_a_run_that_installed_a_cached_wheel_is_no_p1c():
    warm = [row for row in RUN["tasks"] if row[4] != cold_start.COMPILE]
    with pytest.raises(SystemExit, match="not cold"):
        cold_start.ratios(RUN["stages_s"], warm)


def test_task_rows_read_ansible_runners_events():
    events = [{"event": "runner_on_start", "event_data": {"host": "h1", "task": "t"}},
              {"event": "runner_on_ok", "event_data": {"host": "h1", "task": cold_start.COMPILE, "duration": 266.43,
                                                       "playbook": "/x/site.yml", "role": "horovod"}},
              {"event": "runner_on_skipped", "event_data": {"host": "h2", "task": "s", "duration": 0.1}},
              {"event": "runner_on_failed", "event_data": {"host": "h2", "task": "f", "duration": 3.0,
                                                           "playbook": "/x/check.yml", "role": ""}}]
    assert cold_start.task_rows(events) == [[266.4, "h1", "site.yml", "horovod", cold_start.COMPILE],
                                            [3.0, "h2", "check.yml", "", "f"]]
