"""The check's bandwidth table beside torch.distributed's: the bench filter that reads each horovodrun, and the
terminal table (horovod_cluster.views.render), over the real check report of the 3-host sandbox."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from rich.console import Console

from horovod_cluster.results import from_json
from horovod_cluster.views.render import render

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "plugins" / "filter"))
from hvc_bench import bench_table  # noqa: E402  (the plugin folder is not a package)

FIXTURE = REPO / "tests" / "fixtures" / "check" / "sandbox-check.json"
TABLE = {"size": 3, "algorithm": "torch.distributed/gloo",
         "rows": [{"bytes": 4096, "seconds": 1e-4, "algbw_GBps": 0.04, "busbw_GBps": 0.05}]}


def test_the_result_line_of_rank_0_is_the_table():
    run = {"rc": 0, "cmd": ["horovodrun"], "stderr": "", "stdout": f"[1,0]<stdout>:HVC_RESULT {json.dumps(TABLE)}\n"}
    assert bench_table(run) == TABLE


def test_a_failed_launch_keeps_its_command_and_why():
    run = {"rc": 124, "cmd": ["timeout", "300", "horovodrun", "--gloo"], "stdout": "started",
           "stderr": "Gloo timed out"}
    assert bench_table(run) == {"error": "horovodrun exited 124", "command": "timeout 300 horovodrun --gloo",
                                "output": "Gloo timed outstarted"}
    assert bench_table({"rc": 0, "cmd": ["horovodrun"], "stdout": "no table"})["error"] == "horovodrun exited 0"


def printed(data: dict) -> str:
    out = io.StringIO()
    render(from_json(json.dumps(data)), Console(file=out, width=200))
    return out.getvalue()


def test_the_terminal_table_has_torchs_busbw_and_the_ratio():
    data = json.loads(FIXTURE.read_text())
    rows = data["bandwidth"]["allreduce"]["rows"]
    data["bandwidth"]["torch_allreduce"] = {"size": 3, "algorithm": "torch.distributed/gloo", "rows": [
        {**row, "busbw_GBps": row["busbw_GBps"] * 2} for row in rows[1:]]}
    text = printed(data)
    assert "beside torch.distributed/gloo" in text and "Horovod / torch" in text
    lines = [line for line in text.splitlines() if line.strip().startswith(("│ 4096 ", "│ 65536 "))]
    assert "0.50" in lines[1] and lines[0].rstrip(" │").endswith("-"), lines  # 4 KiB: torch not measured there


def test_a_torch_figure_not_measured_says_why():
    data = json.loads(FIXTURE.read_text())
    data["bandwidth"]["torch_allreduce"] = {"error": "not measured: horovod_check_bench_torch is false"}
    text = printed(data)
    assert "Horovod / torch" not in text
    assert "torch.distributed allreduce: not measured: horovod_check_bench_torch is false" in text
