"""cuda_toolkit's decision as one pure function (plugins/filter/cuda_toolkit_plan.py), called directly over the
inputs decide.yml gathers: recorded facts of a GPU Ubuntu host, a Mac, a Pi and a Debian host without GPU, each
method, and each refusal with its message (tests/unit/test_cuda_decide.py runs the same role through ansible)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cuda_toolkit_plan import cuda_toolkit_plan

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "cuda_toolkit"
MAIN = yaml.safe_load((ROLE / "vars" / "main.yml").read_text(encoding="utf-8"))
TABLES = {"supported_versions": MAIN["__cuda_toolkit_supported_versions"], "path_re": MAIN["__cuda_toolkit_path_re"]}
VARS = {"cuda_toolkit_method": "auto", "cuda_toolkit_version": "13.0", "cuda_toolkit_build_host": False,
        "cuda_toolkit_torch_cuda": "", "cuda_toolkit_driver_check": True,
        "cuda_toolkit_repo_home": "/usr/local/cuda-13.0",
        "cuda_toolkit_pip_prefix": "/home/lab/.local/share/hvc/cuda-13.0", "cluster_rootless": False}
FACT_KEYS = ("system", "os_family", "distribution", "distribution_major_version", "architecture", "lsb")


def recorded(name: str) -> dict:
    """A recorded host's facts as decide.yml gathers them."""
    data = json.loads((REPO / "tests" / "fixtures" / "facts" / f"{name}.json").read_text(encoding="utf-8"))
    return {**{key: data.get("ansible_" + key) for key in FACT_KEYS}, "hvc_platform": data.get("hvc_platform")}


def os_vars(name: str) -> dict:
    """vars/<name>.yml as decide.yml passes it."""
    data = yaml.safe_load((ROLE / "vars" / f"{name}.yml").read_text(encoding="utf-8"))
    return {key: data[f"__cuda_toolkit_{key}"] for key in ("distro_version", "distro_home", "distro_host_compiler")}


UBUNTU24 = recorded("gpu-ubuntu2404")  # 2 x A100, driver 580 (CUDA 13.0)
UBUNTU22_T4 = recorded("gpu-ubuntu2204")  # Tesla T4, driver 535 (CUDA 12.2)
MAC = recorded("mac-m2")
PI = recorded("pi5-64")
PI32 = {**recorded("pi4-32"), "hvc_platform": None}  # no preflight: the standard facts tell (Raspbian, armv7l)
DEBIAN = recorded("cpu-debian12")
UBUNTU_ARM = {**UBUNTU24, "distribution_major_version": "22", "architecture": "aarch64"}


def decide(facts, os_name="default", **variables):
    return cuda_toolkit_plan(facts, {**VARS, **variables}, os_vars(os_name), TABLES)


def plan_of(facts, os_name="default", **variables):
    result = decide(facts, os_name, **variables)
    assert result["errors"] == [], result["errors"]
    return result["plan"]


def test_gpu_ubuntu_gets_nvidia_repo():
    assert plan_of(UBUNTU24, "Ubuntu-24") == {
        "action": "install", "method": "nvidia_repo", "reason": "cuda_toolkit_method=auto: nvidia_repo (ubuntu2404/x86_64);"
        " 2 GPU(s)", "version": "13.0", "home": "/usr/local/cuda-13.0", "repo_path": "ubuntu2404/x86_64",
        "nvcc": "/usr/local/cuda-13.0/bin/nvcc", "host_compiler": ""}


def test_arm_server_gets_the_sbsa_repository():
    assert plan_of(UBUNTU_ARM, "Ubuntu-22")["repo_path"] == "ubuntu2204/sbsa"


@pytest.mark.parametrize("facts,why", [
    (MAC, "macOS: CUDA has no macOS support"),
    (PI, "Raspberry Pi: no NVIDIA GPU and no CUDA for its SoC"),
    (PI32, "Raspberry Pi: no NVIDIA GPU and no CUDA for its SoC"),
    (DEBIAN, "no NVIDIA GPU detected (set cuda_toolkit_build_host: true for a compile-only build host)"),
    ({**UBUNTU24, "system": "FreeBSD", "os_family": "FreeBSD"}, "not Linux: no CUDA toolkit"),
])
def test_skipped_with_the_reason(facts, why):
    plan = plan_of(facts)
    assert (plan["action"], plan["method"], plan["reason"], plan["home"], plan["nvcc"]) == ("skip", "none", why, "", "")


def test_a_skipped_host_still_names_the_repository_auto_would_use():
    assert plan_of(DEBIAN, "Debian-12")["repo_path"] == "debian12/x86_64"


def test_build_host_without_gpu_gets_pip():
    plan = plan_of(DEBIAN, cuda_toolkit_build_host=True, cuda_toolkit_method="pip", cuda_toolkit_torch_cuda="cu130")
    assert plan["method"] == "pip" and plan["reason"] == "cuda_toolkit_method=pip: pip; compile-only build host"
    assert plan["home"] == "/home/lab/.local/share/hvc/cuda-13.0/cuda" and plan["repo_path"] == ""
    assert plan["nvcc"] == "/home/lab/.local/share/hvc/cuda-13.0/cuda/bin/nvcc"


def test_auto_build_host_on_debian_uses_nvidia_repo():
    plan = plan_of(DEBIAN, "Debian-12", cuda_toolkit_build_host="yes", cuda_toolkit_version="12.8",
                   cuda_toolkit_repo_home="/usr/local/cuda-12.8")
    assert (plan["method"], plan["repo_path"], plan["home"]) == ("nvidia_repo", "debian12/x86_64", "/usr/local/cuda-12.8")


def test_distro_on_debian_uses_the_gcc_wrapper():
    plan = plan_of(DEBIAN, "Debian-12", cuda_toolkit_build_host=True, cuda_toolkit_method="distro",
                   cuda_toolkit_version="11.8")
    assert (plan["method"], plan["home"], plan["nvcc"], plan["host_compiler"]) == (
        "distro", "/usr", "/usr/bin/nvcc", "/usr/bin/cuda-g++")


def test_rootless_auto_is_pip():
    assert plan_of(UBUNTU24, "Ubuntu-24", cluster_rootless=True)["method"] == "pip"


def test_driver_of_the_same_major_passes_and_the_check_can_be_turned_off():
    assert plan_of(UBUNTU22_T4, "Ubuntu-22", cuda_toolkit_version="12.8")["action"] == "install"
    assert plan_of(UBUNTU22_T4, "Ubuntu-22", cuda_toolkit_driver_check=False)["version"] == "13.0"


# (facts, OS vars file, variables, the one message) for each refusal, in the role's words.
REFUSALS = {
    "version not MAJOR.MINOR": (UBUNTU24, "Ubuntu-24", {"cuda_toolkit_version": "13"},
                                "cuda_toolkit_version must be a quoted MAJOR.MINOR string such as \"13.0\" (got '13')"),
    "version unquoted": (UBUNTU24, "Ubuntu-24", {"cuda_toolkit_version": 13.0},
                         "cuda_toolkit_version must be a quoted MAJOR.MINOR string such as \"13.0\" (got '13.0')"),
    "explicit method on macOS": (MAC, "default", {"cuda_toolkit_method": "pip"},
                                 "cuda_toolkit_method=pip / cuda_toolkit_build_host=False asks for CUDA on macOS (CUDA"
                                 " has no macOS support): leave cuda_toolkit_method at 'auto' and"
                                 " cuda_toolkit_build_host at false for this host"),
    "build host on a Pi": (PI, "Debian-12", {"cuda_toolkit_build_host": True},
                           "cuda_toolkit_method=auto / cuda_toolkit_build_host=True asks for CUDA on a Raspberry Pi (no"
                           " NVIDIA GPU, no CUDA for its SoC): leave cuda_toolkit_method at 'auto' and"
                           " cuda_toolkit_build_host at false for this host"),
    "repo home not a plain path": (UBUNTU24, "Ubuntu-24", {"cuda_toolkit_repo_home": "/usr/local/cuda\n$(id)"},
                                   'cuda_toolkit_repo_home is "/usr/local/cuda\\n$(id)"; expected an absolute path of'
                                   " letters, digits and . _ - + /"),
    "pip prefix not a plain path": (UBUNTU24, "Ubuntu-24",
                                    {"cuda_toolkit_method": "pip", "cuda_toolkit_pip_prefix": "/opt/cuda;rm"},
                                    'cuda_toolkit_pip_prefix is "/opt/cuda;rm"; expected an absolute path of letters,'
                                    " digits and . _ - + /"),
    "version the method does not support": (UBUNTU24, "Ubuntu-24", {"cuda_toolkit_version": "12.3"},
                                            'cuda_toolkit_version "12.3" is not supported by'
                                            " cuda_toolkit_method=nvidia_repo; allowed: 12.4, 12.6, 12.8, 12.9, 13.0"),
    "distro with another version": (DEBIAN, "Debian-12",
                                    {"cuda_toolkit_method": "distro", "cuda_toolkit_build_host": True},
                                    'cuda_toolkit_method=distro installs the distributions CUDA 11.8: set'
                                    ' cuda_toolkit_version: "11.8" (got "13.0")'),
    "distro where none is known": (MAC | {"system": "Linux", "os_family": "Debian", "distribution": "Fedora",
                                          "distribution_major_version": "40", "architecture": "x86_64"},
                                   "default", {"cuda_toolkit_method": "distro", "cuda_toolkit_build_host": True},
                                   "cuda_toolkit_method=distro: no nvidia-cuda-toolkit package known for Fedora 40"),
    "nvidia_repo where NVIDIA has none": (DEBIAN | {"architecture": "aarch64"}, "Debian-12",
                                          {"cuda_toolkit_method": "nvidia_repo", "cuda_toolkit_build_host": True},
                                          "cuda_toolkit_method=nvidia_repo: NVIDIA has no CUDA repository for Debian 12"
                                          " aarch64 (supported: Ubuntu 22.04/24.04 x86_64 and arm64 (sbsa), Debian 12"
                                          " x86_64); use cuda_toolkit_method=pip or distro"),
    "pip against torch's CUDA major": (UBUNTU24, "Ubuntu-24",
                                       {"cuda_toolkit_method": "pip", "cuda_toolkit_torch_cuda": "cu128"},
                                       "cuda_toolkit_method=pip needs Linux on x86_64 or aarch64 and"
                                       " cuda_toolkit_torch_cuda with the same CUDA major as cuda_toolkit_version: torch"
                                       " is built for CUDA 'cu128' (major 12) but cuda_toolkit_version is 13.0"),
    "pip on armv7l": (recorded("pi4-32") | {"hvc_platform": {"is_raspberry_pi": False, "gpu": {"count": 1}}},
                      "Debian-12", {"cuda_toolkit_method": "pip"},
                      "cuda_toolkit_method=pip needs Linux on x86_64 or aarch64 and cuda_toolkit_torch_cuda with the"
                      " same CUDA major as cuda_toolkit_version: torch is built for CUDA '' (major ) but"
                      " cuda_toolkit_version is 13.0"),
    "driver older than the toolkit's major": (UBUNTU22_T4, "Ubuntu-22", {},
                                              "The NVIDIA driver 535.129.03 supports CUDA up to 12.2 (nvidia-smi), older"
                                              " than cuda_toolkit_version 13.0 (another CUDA major): upgrade the driver,"
                                              " choose a cuda_toolkit_version of CUDA 12, or set"
                                              " cuda_toolkit_driver_check: false"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_refused_with_the_message(case):
    facts, os_name, variables, message = REFUSALS[case]
    assert decide(facts, os_name, **variables)["errors"] == [message]


def test_every_refusal_is_named_at_once():
    errors = decide(UBUNTU22_T4, "Ubuntu-22", cuda_toolkit_version="13.9",
                    cuda_toolkit_repo_home="relative")["errors"]
    assert [e.split(" ")[0] for e in errors] == ["cuda_toolkit_repo_home", "cuda_toolkit_version", "The"]
