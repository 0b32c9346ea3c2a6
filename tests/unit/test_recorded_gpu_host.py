"""The GPU hosts tests/device/gpu_check.sh recorded (tests/fixtures/device/h200-2026-11-27 and -28: an NVIDIA H200,
Ubuntu 24.04, driver 580.159.04, CUDA 13.0, GCC 13.3, Python 3.12.3, torch 2.11.0+cu130), each test on each record.

The parser is held to what the module really reported on that host, from the raw texts recorded beside it;
the record's summary is read again with tests/device/summarize.py; what ran there is asserted as recorded.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import hvc_platform as hp
from horovod_check_build import parse_check_build

DEVICE = Path(__file__).resolve().parents[1] / "fixtures" / "device"
QUERY_FIELDS = ["index", "name", "uuid", "driver_version", "memory.total", "compute_cap"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["h200-2026-11-27", "h200-2026-11-28"])
def run(request):
    return DEVICE / request.param


@pytest.fixture(scope="module")
def raw(run):
    return run / "record" / "raw"


@pytest.fixture(scope="module")
def facts(run):
    return json.loads((run / "record" / "facts" / "gpu-host.json").read_text())


@pytest.fixture(scope="module")
def summary(run):
    return json.loads((run / "summary.json").read_text())


def test_parser_on_the_recorded_texts_gives_what_the_module_reported_there(facts, raw):
    """hvc_platform_facts ran on the host (record_facts.yml); the same parser over the texts recorded there byte
    for byte (nvidia-smi, its query, /proc/driver/nvidia) must give the module's own answer."""
    banner = (raw / "nvidia-smi").read_text()
    proc = [hp.parse_proc_gpu_information(p.read_text()) for p in sorted(raw.glob("proc-driver-nvidia-gpu-*"))
            if not p.name.endswith((".rc", ".stderr"))]
    gpu = hp.build_gpu_facts(
        dev_nodes=hp.nvidia_device_nodes(line.split()[-1] for line in (raw / "dev-nvidia").read_text().splitlines()
                                         if line.split()),
        proc_driver_present=True, proc_version_text=(raw / "proc-driver-nvidia-version").read_text(),
        proc_gpu_models=proc, smi_path=facts["hvc_platform"]["gpu"]["nvidia_smi"], smi_header_text=banner,
        smi_query_rows=hp.parse_nvidia_smi_query((raw / "nvidia-smi-query").read_text(), QUERY_FIELDS))
    assert gpu == facts["hvc_platform"]["gpu"]
    assert (gpu["names"], gpu["driver_version"], gpu["cuda_version"], gpu["compute_capabilities"]) == \
        (["NVIDIA H200"], "580.159.04", "13.0", ["9.0"])
    assert gpu["memory_mib"] == [143771] and gpu["sources"] == ["nvidia-smi", "/proc/driver/nvidia", "/dev/nvidia*"]


def test_os_release_and_setup_keys_agree(facts, raw):
    platform = hp.build_platform(
        os_release_text=(raw / "os-release").read_text(), system=facts["ansible_system"],
        machine=facts["ansible_machine"], userland_bits=int(facts["ansible_userspace_bits"]),
        gpu=facts["hvc_platform"]["gpu"], cores=facts["ansible_processor_vcpus"],
        python_version=facts["ansible_python_version"], python_executable=facts["ansible_python"]["executable"])
    # the module adds dpkg_interrupted from dpkg's journal (no text of these; recorded since the second run)
    assert platform == {key: value for key, value in facts["hvc_platform"].items() if key != "dpkg_interrupted"}
    assert facts["hvc_platform"].get("dpkg_interrupted") in (None, False)
    assert (platform["os_id"], platform["os_version"], platform["cores"]) == ("ubuntu", "24.04", 16)


def test_proc_driver_texts_without_nvidia_smi(raw):
    """A host with the kernel module and no nvidia-smi: the recorded /proc texts alone name the GPU and driver."""
    info = next(p for p in sorted(raw.glob("proc-driver-nvidia-gpu-*")) if not p.name.endswith((".rc", ".stderr")))
    gpu = hp.build_gpu_facts(dev_nodes=["/dev/nvidia0"], proc_driver_present=True,
                             proc_version_text=(raw / "proc-driver-nvidia-version").read_text(),
                             proc_gpu_models=[hp.parse_proc_gpu_information(info.read_text())])
    assert (gpu["count"], gpu["names"], gpu["driver_version"], gpu["cuda_version"]) == \
        (1, ["NVIDIA H200"], "580.159.04", None)


def test_check_build_shows_nccl(raw):
    built = parse_check_build((raw / "check-build").read_text())
    assert built["version"] == "0.28.1" and built["frameworks"] == ["pytorch"]
    assert built["controllers"] == ["gloo"] and built["tensor_operations"] == ["gloo", "nccl"]


def test_summarize_reads_the_record_as_it_did_there(summary, run):
    """summarize.py over the stored record gives the summary.json the run wrote on the GPU host."""
    done = subprocess.run([sys.executable, str(REPO / "tests/device/summarize.py"), str(run / "record")],
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == summary


def test_every_step_ran_on_the_gpu(summary):
    assert all(step["exit"] == 0 for step in summary["steps"].values()), summary["steps"]
    assert summary["host"]["torch"] == "2.11.0+cu130" and summary["host"]["devices"] == ["NVIDIA H200"]
    assert summary["gcc"].endswith(" 13.3.0")


def test_gpu_collectives_ran_through_nccl(summary):
    smoke = summary["smoke"]
    assert smoke["ok"] and smoke["ranks"][0]["device"] == "cuda:0" and smoke["controller"] == "gloo"
    assert all(smoke["ranks"][0]["checks"].values())
    for bench in (summary["horovod_bench"], summary["horovod_bench_cycle_0.1ms"]):
        assert bench["algorithm"] == "nccl" and bench["size"] == 1
        assert [row["bytes"] for row in bench["rows"]] == [4096, 65536, 1 << 20, 1 << 24, 1 << 26, 1 << 28, 1 << 30]
    assert summary["torch_bench"]["algorithm"] == "torch.distributed/nccl"


def test_one_rank_allreduce_waits_for_horovods_cycle(summary):
    """One rank: every allreduce takes about one HOROVOD_CYCLE_TIME (1 ms) up to 64 MiB, a tenth of it with
    0.1 ms; torch.distributed's NCCL returns in tens of microseconds (a one-rank allreduce moves nothing)."""
    default = [row["seconds"] for row in summary["horovod_bench"]["rows"]]
    short = [row["seconds"] for row in summary["horovod_bench_cycle_0.1ms"]["rows"]]
    torch = [row["seconds"] for row in summary["torch_bench"]["rows"]]
    assert all(0.9e-3 < s < 1.5e-3 for s in default)
    assert all(s < 0.3e-3 for s in short[:5])
    assert all(s < 0.1e-3 for s in torch)


def test_nccl_refuses_two_ranks_on_one_gpu(summary):
    ranks = summary["two_ranks_one_gpu"]
    assert [r["device"] for r in ranks] == ["cuda:0", "cuda:0"]
    assert all(r["error"].startswith("ncclCommInitRank failed: invalid usage") for r in ranks)
    assert any("NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device" in line
               for line in summary["nccl_messages"])


def test_horovod_refuses_a_gpu_rank_beside_a_cpu_rank(summary):
    ranks = summary["mixed_device"]
    assert [r["device"] for r in ranks] == ["cuda:0", "cpu"]
    wanted = "Mismatched ALLREDUCE CPU/GPU device selection: One rank specified device CPU, but another rank " \
             "specified device GPU."
    assert all(r["error_type"] == "HorovodInternalError" and r["error"] == wanted for r in ranks)


def test_gcc13_needs_the_header_patch(summary):
    """GCC 13.3 there: horovod/common fails to compile as 0.28.1 ships it and compiles with the matrix's patches."""
    compiled = summary["compile_patches"]
    assert compiled["compiler"].startswith("g++ (Ubuntu 13.3.0")
    assert {"horovod/common/common.cc c++17", "horovod/common/group_table.cc c++17",
            "horovod/common/group_table.cc c++20"} <= set(compiled["fixed"])
    common = compiled["units"]["horovod/common/common.cc c++17"]["unpatched"]["first_error"]
    assert "'logic_error' is not a member of 'std'" in common.replace("‘", "'").replace("’", "'")
    # no unit that compiled unpatched fails patched
    assert not [unit for unit, sides in compiled["units"].items()
                if sides["unpatched"]["exit"] == 0 and sides["patched"]["exit"] != 0]
