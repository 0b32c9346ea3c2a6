"""plan.yml over the facts recorded on a real GPU host (tests/fixtures/device/h200-2026-11-28), with the
variables the horovod role was given there (tests/fixtures/plan/recorded-gpu.yml): the plan, made here with no
connection, must name the build the host really did (its platform key, from the role's log of that run)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from ansible_run import REPO, run_playbook

INVENTORY = REPO / "tests" / "fixtures" / "plan" / "recorded-gpu.yml"
RECORD = REPO / "tests" / "fixtures" / "device" / "h200-2026-11-28" / "record"


@pytest.fixture(scope="module")
def plan():
    run = run_playbook("plan.yml", INVENTORY)
    assert run.rc == 0, run.failure_messages("gpu-host") or run.stderr[-3000:]
    assert run.changed() == 0
    return run.plan["gpu-host"]


def test_preflight_reads_the_recorded_gpu(plan):
    preflight = plan["preflight"]
    assert (preflight["action"], preflight["method"]) == ("pass", "validate")
    got = preflight["platform"]
    assert (got["os_id"], got["os_version"], got["arch"], got["gpu_count"], got["cuda_version"]) == \
        ("ubuntu", "24.04", "x86_64", 1, "13.0")
    assert "NVIDIA GPU (driver 580.159.04, CUDA 13.0)" in preflight["reason"]


def test_plan_names_the_build_the_host_did(plan):
    """The key the role computed on the host itself (record/logs/build.log) is the key the plan computes here."""
    real = re.search(r"__horovod_platform_key: (\S+)", (RECORD / "logs" / "build.log").read_text()).group(1)
    horovod = plan["horovod"]
    assert horovod["platform_key"] == real == \
        "hvd0.28.1-ubuntu24-x86_64-py3.12-pytorch2.11.0-cuda13.0-sm90-gpuopsnccl-nompi-nodistutils-waitcv"
    env = horovod["build_env"]
    assert (env["HOROVOD_GPU_OPERATIONS"], env["HOROVOD_BUILD_CUDA_CC_LIST"]) == ("NCCL", "90")
    assert (env["HOROVOD_NCCL_HOME"], env["HOROVOD_NCCL_LINK"]) == ("/tmp/hvc-gpu-check/nccl-home", "SHARED")
    # torch 2.11 needs C++17 (the role's patch) and the host's GCC 13 the header patch
    assert (str(horovod["cxx_standard"]), horovod["fixes"]) == \
        ("17", ["cxx17", "gcc13_headers", "flatbuffers_span", "gloo_cstdint", "torch_wait_blocks", "distutils_spawn"])
    assert json.loads((RECORD / "vars.json").read_text())["horovod_cuda_home"] == env["HOROVOD_CUDA_HOME"]


def test_the_host_applied_the_patches_the_plan_names(plan):
    """Every file the matrix's patches for the planned fixes touch was changed by the role there, and no other."""
    compat = yaml.safe_load((REPO / "roles" / "horovod" / "vars" / "compat.yml").read_text())["horovod_compat_matrix"]
    wanted = {edit["file"] for fix in plan["horovod"]["fixes"] for edit in compat["patches"].get(fix, [])}
    log = (RECORD / "logs" / "build.log").read_text()
    task = log.split("Apply the source patches of the compatibility matrix]")[1].split("\nTASK [")[0]
    patched = set(re.findall(r"^changed: \[gpu-host\] => \(item=(\S+)\)", task, re.MULTILINE))
    assert patched == wanted and "horovod/runner/js_run.py" in patched and "horovod/torch/mpi_ops_v2.cc" in patched
