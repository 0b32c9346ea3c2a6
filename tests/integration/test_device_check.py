"""tests/device/gpu_check.sh on this machine, which has no GPU: every step it runs on a GPU host runs here on
the CPU (the record, the role's Gloo build, the smoke test, both benchmarks, the two multi-rank runs), so the
script a GPU host gets is the script tested here. Slow tier (HVC_SLOW=1): it compiles Horovod (3-6 min)
into a venv of its own with PyPI's / the configured index's CPU torch.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEFAULTS = yaml.safe_load((REPO / "roles/python_env/defaults/main.yml").read_text())
TORCH = "torch==2.13.0"  # the role's tested pin (compatibility matrix known_good)

pytestmark = pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                                reason="slow (a Horovod compile, 3-6 min): set HVC_SLOW=1")


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    work = tmp_path_factory.mktemp("device")
    env_dir = work / "env"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    index = ["--extra-index-url", DEFAULTS["python_env_torch_cpu_index_url"]]  # as python_env gets a CPU torch
    subprocess.run([python, "-m", "pip", "install", "-q", TORCH, "numpy", *index], check=True)
    out = work / "out"
    env = dict(os.environ, HVC_PYTHON=str(python), HVC_HOST="cpu-check", HVC_SIZES="4096 1048576",
               HVC_WORK=str(work / "scratch"), HVC_HOST_PYTHON=sys.executable, HVC_DEADLINE="2400")
    done = subprocess.run(["bash", str(REPO / "tests/device/gpu_check.sh"), str(out)], env=env,
                          capture_output=True, text=True, timeout=2700)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (out / "record.tgz").stat().st_size > 0
    return json.loads((out / "summary.json").read_text())


def test_every_step_ran(summary):
    steps = summary["steps"]
    for name in ("controller", "record_facts", "build", "smoke", "bench", "torch_bench"):
        assert steps[name]["exit"] == 0, (name, steps)


def test_the_host_was_recorded_and_built_by_the_role(summary):
    assert summary["gpu_facts"]["present"] is False  # the parser ran on this host: no NVIDIA GPU here
    built = summary["check_build"]
    assert "pytorch" in built["frameworks"] and built["controllers"] == ["gloo"], built
    assert "nccl" not in built["tensor_operations"]


def test_the_check_scripts_ran_under_horovodrun(summary):
    assert summary["smoke"]["ok"] and summary["smoke"]["size"] == 1
    assert [row["bytes"] for row in summary["horovod_bench"]["rows"]] == [4096, 1048576]
    assert summary["horovod_bench"]["algorithm"] == "gloo"
    assert summary["torch_bench"]["algorithm"] == "torch.distributed/gloo"
    assert [row["bytes"] for row in summary["torch_bench"]["rows"]] == [4096, 1048576]


@pytest.mark.parametrize("step", ["two_ranks_one_gpu", "mixed_device"])
def test_two_rank_allreduces_ran_where_there_is_no_gpu(summary, step):
    """Without a GPU both two-rank allreduces are plain CPU jobs that sum 1 + 1; on a GPU host the same steps
    record what NCCL says of a shared GPU and Horovod's refusal of a GPU rank beside a CPU rank."""
    ranks = summary[step]
    assert [r["device"] for r in ranks] == ["cpu", "cpu"] and all(r["result"] == [2.0] * 4 for r in ranks), ranks
