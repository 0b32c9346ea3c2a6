"""`plan`'s terminal view: each host's roles in run order, each platform key with its hosts and who compiles
it, and a one-line cluster summary (hosts, keys, compiles, downloads)."""
from __future__ import annotations

from rich.console import Console

from horovod_cluster.results import PlanResult, RolloutResult
from horovod_cluster.views.render import render

KEY_A, KEY_B = "hvd0.28.1-debian12-x86_64-py3.11-pytorch2.13.0_cpu", "hvd0.28.1-raspios12-aarch64-py3.11"
FILL = {"dir": "/wh/linux-x86_64-cp311-cpu", "marker": "torch-2.13.0+cpu.complete", "requirement": "torch==2.13.0"}


def _host(key: str, action: str, builder: str, fill: dict) -> dict:
    # the plan lists the roles in the order site.yml runs them
    return {"preflight": {"action": "pass"}, "python_env": {"action": "install", "fill": fill},
            "horovod": {"action": action, "platform_key": key, "builder": builder}, "hostfile": {"action": "write"}}


def _shown(result: PlanResult) -> str:
    console = Console(record=True, width=250, color_system=None)
    render(result, console)
    return console.export_text()


def test_plan_shows_run_order_keys_builders_and_the_cluster():
    hosts = {"a1": _host(KEY_A, "build", "a1", FILL), "a2": _host(KEY_A, "install_wheel", "a1", FILL),
             "pi": _host(KEY_B, "install_wheel", "cache", {})}
    run = RolloutResult.from_dict({"playbook": "plan.yml", "status": "successful", "rc": 0, "artifacts": "",
                                   "started": 0, "finished": 1, "hosts": {}})
    result = PlanResult(hosts=hosts, run=run)
    shown = _shown(result)
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in shown.splitlines() if "│" in line]
    rows = [row[1] for row in cells if row and row[0] == "a1"]
    assert rows[:4] == ["preflight", "python_env", "horovod", "hostfile"]  # not alphabetical
    assert result.platform_keys == {KEY_A: {"hosts": ["a1", "a2"], "builder": "a1", "compiles": ["a1"]},
                                    KEY_B: {"hosts": ["pi"], "builder": "cache", "compiles": []}}
    assert [KEY_A, "a1, a2", "a1"] in cells and [KEY_B, "pi", "a cached wheel"] in cells
    assert "cluster: 3 hosts, 2 platform keys, 1 Horovod compile, 1 wheel set to download" in shown


def test_plan_shows_the_job_groups_and_why_no_job_spans_every_host():
    groups = {"groups": [{"controller": "gloo", "hosts": ["cpu01", "gpu01"], "tensors": "cpu"},
                         {"controller": "gloo", "hosts": ["gpu01"], "tensors": "cuda"},
                         {"controller": "gloo", "hosts": ["mac01"], "tensors": "cpu"}],
              "spans": {"gloo": False}, "reasons": {"gloo": "Gloo transports differ (cpu01=tcp, mac01=uv)"}}
    run = RolloutResult.from_dict({"playbook": "plan.yml", "status": "successful", "rc": 0, "artifacts": "",
                                   "started": 0, "finished": 1, "hosts": {}})
    result = PlanResult(hosts={}, run=run, job_groups=groups)
    shown = _shown(result)
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in shown.splitlines() if "│" in line]
    assert ["gloo", "cpu01, gpu01", "cpu"] in cells and ["gloo", "gpu01", "cuda"] in cells
    assert "no gloo job spans every host: Gloo transports differ (cpu01=tcp, mac01=uv)" in shown
    assert PlanResult.from_dict(result.to_dict()).job_groups == groups
