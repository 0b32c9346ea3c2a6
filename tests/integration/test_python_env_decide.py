"""python_env decide step over recorded facts: platform -> installer, armv7l fallback, torch build,
wheel selection and bad inputs failing early with the variable's name.

decide.yml makes no change to any host, so it runs here against localhost with faked facts
(`ansible_facts` passed as an extra var).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ansible_run import PLAN_INVENTORY, ansible_playbook_json, run_playbook

PLAYBOOK = """
- name: Decide python_env
  hosts: all
  gather_facts: false
  roles: [cluster_defaults]
  tasks:
    - name: Run the decide step
      ansible.builtin.include_role:
        name: python_env
        tasks_from: decide  # the entry point whose argument specs are checked, as plan.yml runs it
    - name: Show the plan
      ansible.builtin.debug:
        var: __python_env_plan
"""

DEBIAN_AMD64 = {"system": "Linux", "architecture": "x86_64", "os_family": "Debian",
                "distribution": "Debian", "distribution_major_version": "12"}
PI_ARMV7L = {**DEBIAN_AMD64, "architecture": "armv7l"}
PI_ARM64 = {**DEBIAN_AMD64, "architecture": "aarch64"}
# hvc_platform as preflight publishes it (tests/fixtures/facts/gpu-ubuntu2404.json, trimmed).
UBUNTU_GPU = {**DEBIAN_AMD64, "distribution": "Ubuntu", "distribution_major_version": "24",
              "hvc_platform": {"system": "Linux", "arch": "x86_64", "userland_bits": 64,
                               "gpu": {"count": 2, "cuda_version": "13.0", "present": True}}}
# A Pi 4 with a 64-bit kernel but 32-bit Pi OS: conda has no installer for its userland.
PI_32BIT_USERLAND = {**PI_ARM64, "hvc_platform": {"system": "Linux", "arch": "aarch64", "userland_bits": 32,
                                                   "gpu": {"count": 0}}}
MAC_ARM64 = {"system": "Darwin", "architecture": "arm64", "os_family": "Darwin",
             "distribution": "MacOSX", "distribution_major_version": "14"}


def run_decide(tmp_path: Path, facts: dict, **variables):
    (tmp_path / "decide.yml").write_text(PLAYBOOK, encoding="utf-8")
    (tmp_path / "vars.json").write_text(json.dumps({"ansible_facts": facts, **variables}), encoding="utf-8")
    return ansible_playbook_json(["-i", "localhost,", "-c", "local", "-e", f"ansible_python_interpreter={sys.executable}",
                                  "-e", f"@{tmp_path / 'vars.json'}", tmp_path / "decide.yml"])


def decide(tmp_path: Path, facts: dict, **variables) -> tuple[dict | None, str]:
    """Run decide.yml; return (plan, failure message)."""
    run = run_decide(tmp_path, facts, **variables)
    plan, failure = None, ""
    for _, _, result in run.results():  # localhost is the only host
        if result.get("failed"):
            failures = [r.get("msg", "") for r in result.get("results", []) if r.get("failed")]
            failure = " ".join(failures) or result.get("msg", "")
        if "__python_env_plan" in result:
            plan = result["__python_env_plan"]
    return plan, failure


def test_default_is_venv_on_debian(tmp_path):
    plan, failure = decide(tmp_path, DEBIAN_AMD64)
    assert not failure
    assert plan["method"] == "venv" and plan["action"] == "install"
    assert plan["python"] == "/opt/horovod/venv/bin/python"


def test_conda_on_armv7l_falls_back_to_venv_with_reason(tmp_path):
    plan, failure = decide(tmp_path, PI_ARMV7L, python_env_manager="conda")
    assert not failure
    assert plan["method"] == "venv"
    assert plan["reason"] == "armv7l: no miniforge installer, using venv"


def test_conda_on_32bit_userland_with_64bit_kernel_falls_back(tmp_path):
    plan, failure = decide(tmp_path, PI_32BIT_USERLAND, python_env_manager="conda")
    assert not failure
    assert plan["method"] == "venv" and plan["reason"].startswith("armv7l: ")


def test_gpu_host_conda_env_uses_the_cuda_version_from_facts(tmp_path):
    plan, failure = decide(tmp_path, UBUNTU_GPU, python_env_manager="conda")
    assert not failure
    assert plan["method"] == "conda" and plan["torch_variant"] == "cuda"


def test_conda_on_armv7l_forced_fails_naming_the_variable(tmp_path):
    plan, failure = decide(tmp_path, PI_ARMV7L, python_env_manager="conda", python_env_conda_force=True)
    assert plan is None
    assert "python_env_conda_force" in failure


@pytest.mark.parametrize(
    ("facts", "distribution", "platform", "url_end"),
    [
        (DEBIAN_AMD64, "miniforge", "Linux-x86_64", "/25.3.0-3/Miniforge3-Linux-x86_64.sh"),
        (PI_ARM64, "miniforge", "Linux-aarch64", "/25.3.0-3/Miniforge3-Linux-aarch64.sh"),
        (DEBIAN_AMD64, "miniconda", "Linux-x86_64", "/miniconda/Miniconda3-py311_24.9.2-0-Linux-x86_64.sh"),
    ],
)
def test_platform_to_installer(tmp_path, facts, distribution, platform, url_end):
    plan, failure = decide(tmp_path, facts, python_env_manager="conda",
                           python_env_conda_distribution=distribution)
    assert not failure
    installer = plan["installer"]
    assert plan["method"] == "conda"
    assert installer["platform"] == platform
    assert installer["url"].endswith(url_end)
    assert len(installer["sha256"]) == 64 and installer["source"] == "internet"
    assert plan["python"] == "/opt/conda/envs/horovod/bin/python"


def test_macos_installer_without_shipped_sha_asks_for_the_variable(tmp_path):
    plan, failure = decide(tmp_path, MAC_ARM64, python_env_manager="conda")
    assert plan is None
    assert "python_env_conda_sha256['MacOSX-arm64']" in failure


def test_macos_installer_with_user_sha(tmp_path):
    digest = "ab" * 32
    plan, failure = decide(tmp_path, MAC_ARM64, python_env_manager="conda",
                           python_env_conda_sha256={"MacOSX-arm64": digest})
    assert not failure
    assert plan["installer"]["platform"] == "MacOSX-arm64"
    assert plan["installer"]["sha256"] == digest
    assert plan["torch_variant"] == "cpu"


def test_other_conda_version_needs_its_sha(tmp_path):
    plan, failure = decide(tmp_path, DEBIAN_AMD64, python_env_manager="conda",
                           python_env_conda_version="24.11.3-0")
    assert plan is None and "python_env_conda_sha256['Linux-x86_64']" in failure


def test_gpu_host_gets_cuda_torch_and_cpu_host_the_cpu_build(tmp_path):
    gpu, failure = decide(tmp_path, UBUNTU_GPU, python_env_torch_version="2.13.0")
    assert not failure
    assert gpu["torch_variant"] == "cuda" and gpu["torch_requirement"] == "torch==2.13.0"
    cpu, failure = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0",
                          python_env_wheelhouse_fill=False, python_env_wheelhouse="")
    assert not failure
    assert cpu["torch_variant"] == "cpu" and cpu["torch_requirement"] == "torch==2.13.0+cpu"
    # Without a wheelhouse the host itself reaches the CPU index.
    assert cpu["pip_options"] == ["--extra-index-url https://download.pytorch.org/whl/cpu"]


def test_controller_downloads_each_wheel_set_it_lacks(tmp_path):
    """The default: the controller fills <wheelhouse>/<os>-<arch>-cp<py>-<build> with pip download and
    hosts install from their copy of it (no index of their own)."""
    wheelhouse = tmp_path / "wh"
    cpu, failure = decide(tmp_path, {**DEBIAN_AMD64, "python": {"version": {"major": 3, "minor": 11}}},
                          python_env_torch_version="2.13.0", python_env_wheelhouse=str(wheelhouse))
    assert not failure
    fill = cpu["fill"]
    assert fill["dir"] == f"{wheelhouse}/linux-x86_64-cp311-cpu" == cpu["wheel_dir"]
    # The marker names everything downloaded: torch and the training packages (numpy by default).
    assert fill["requirement"] == "torch==2.13.0+cpu" and fill["marker"] == "torch-2.13.0+cpu_numpy.complete"
    first, second = fill["attempts"]
    # The controller's own pip configuration first, then the CPU index.
    assert "--extra-index-url" not in first and first[-2:] == ["torch==2.13.0+cpu", "numpy"]
    assert second[-2:] == ["--extra-index-url", "https://download.pytorch.org/whl/cpu"]
    assert {"--python-version", "3.11", "--only-binary=:all:", "--platform=manylinux_2_28_x86_64"} <= set(first)
    assert cpu["pip_options"] == ["--find-links /opt/horovod/wheelhouse"]
    # The platform whose environment markers pip evaluates for this set (test_python_env_cross_fill.py).
    assert fill["target"] == ["Linux", "x86_64", "3.11"]
    assert cpu["requirements"] == ["torch==2.13.0+cpu", "numpy"]
    # A GPU host on Ubuntu 24.04 (Python 3.12): the CUDA build, from PyPI, in a set of its own.
    gpu, failure = decide(tmp_path, {**UBUNTU_GPU, "python": {"version": {"major": 3, "minor": 12}}},
                          python_env_torch_version="2.14.1", python_env_wheelhouse=str(wheelhouse))
    assert not failure
    assert gpu["fill"]["dir"].endswith("/linux-x86_64-cp312-cuda") and gpu["fill"]["target"][2] == "3.12"
    assert len(gpu["fill"]["attempts"]) == 1 and gpu["fill"]["attempts"][0][-2] == "torch==2.14.1"
    # A set filled before numpy was a training package is filled again.
    done = wheelhouse / "linux-x86_64-cp311-cpu"
    done.mkdir(parents=True)
    (done / "torch-2.13.0+cpu.complete").write_text("torch==2.13.0+cpu\n")
    (done / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    older, _ = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse=str(wheelhouse))
    assert older["fill"]["marker"] == "torch-2.13.0+cpu_numpy.complete"
    # A complete set is not downloaded again.
    (done / "torch-2.13.0+cpu_numpy.complete").write_text("torch==2.13.0+cpu\n")
    again, _ = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse=str(wheelhouse))
    assert again["fill"] == {} and again["wheels"] == ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"]
    # python_env_wheelhouse_fill: false downloads nothing.
    off, _ = decide(tmp_path, UBUNTU_GPU, python_env_torch_version="2.14.1", python_env_wheelhouse=str(wheelhouse),
                    python_env_wheelhouse_fill=False)
    assert off["fill"] == {}


def test_an_index_with_credentials_is_shown_without_its_password(tmp_path):
    secret = "https://alice:s3cr3t@pypi.example/simple"
    plan, failure = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0",
                           python_env_wheelhouse=str(tmp_path / "wh"), python_env_torch_cpu_index_url=secret)
    assert not failure and "s3cr3t" not in json.dumps(plan)
    assert plan["fill"]["env"] == [{}, {"PIP_EXTRA_INDEX_URL": "https://alice:****@pypi.example/simple"}]
    # nor does any task's result (what -v prints and the run's artifacts keep)
    run = run_decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_torch_cpu_index_url=secret)
    assert run.rc == 0 and "s3cr3t" not in json.dumps(list(run.results()))


def test_cuda_build_host_without_gpu(tmp_path):
    plan, _ = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_cuda_build_host=True)
    assert plan["torch_variant"] == "cuda"


def test_wheelhouse_ships_only_the_wheels_this_host_can_use(tmp_path):
    wheelhouse = tmp_path / "wheels"
    wheelhouse.mkdir()
    names = ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
             "torch-2.13.0-cp311-cp311-manylinux_2_28_aarch64.whl",
             "filelock-3.16.1-py3-none-any.whl"]
    for name in names:
        (wheelhouse / name).write_bytes(b"")
    # A flat folder of the user's own that has the host's torch: used as it is, nothing downloaded.
    plan, failure = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0",
                           python_env_wheelhouse=str(wheelhouse), python_env_offline=True)
    assert not failure
    assert plan["fill"] == {}
    assert plan["wheels"] == [names[2], names[0]]
    assert plan["pip_options"] == ["--find-links /opt/horovod/wheelhouse", "--no-index"]
    arm, failure = decide(tmp_path, PI_ARM64, python_env_torch_version="2.13.0",
                          python_env_wheelhouse=str(wheelhouse))
    assert arm["wheels"] == [names[2], names[1]] and arm["torch_requirement"] == "torch==2.13.0"


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"python_env_manager": "pipenv"}, "python_env_manager"),
        ({"python_env_torch_version": "==2.13.0"}, "python_env_torch_version"),
        ({"python_env_torch_version": "latest"}, "python_env_torch_version"),
        # torch pinned twice, differently: the default python_env_torch_version (2.13.0) and a pip item
        ({"python_env_pip_packages": ["torch==2.14.1"]}, "but python_env_torch_version is '2.13.0'"),
        ({"python_env_conda_version": "25.3"}, "python_env_conda_version"),
        ({"python_env_cuda_version": "12"}, "python_env_cuda_version"),
        ({"python_env_torch_variant": "rocm"}, "python_env_torch_variant"),
        ({"python_env_wheelhouse": "/nonexistent/wheels", "python_env_wheelhouse_fill": False},
         "python_env_wheelhouse"),
        ({"python_env_wheelhouse_fill": "sometimes"}, "python_env_wheelhouse_fill"),
        ({"python_env_offline": True, "python_env_wheelhouse": ""}, "python_env_offline"),
        # fill false: with torch pinned (now the default) and the fill on, the plan fills the wheel set instead
        ({"python_env_wheelhouse": "/tmp", "python_env_wheelhouse_files": ["torch-9.9.9-py3-none-any.whl"],
          "python_env_wheelhouse_fill": False}, "python_env_wheelhouse_files"),
        ({"python_env_manager": "conda", "python_env_artifacts_dir": "/tmp"}, "python_env_artifacts_dir"),
        ({"python_env_manager": "conda", "python_env_torch_variant": "cuda"}, "python_env_cuda_version"),
        # a newline in the requirements file would start another pip option
        ({"python_env_torch_cpu_index_url": "https://pypi.example/simple\n--trusted-host evil.example"},
         "python_env_torch_cpu_index_url"),
    ],
)
def test_bad_input_fails_naming_the_variable(tmp_path, variables, named):
    plan, failure = decide(tmp_path, DEBIAN_AMD64, **variables)
    assert plan is None
    assert named in failure


def test_offline_without_the_torch_wheel_fails(tmp_path):
    wheelhouse = tmp_path / "wheels"
    wheelhouse.mkdir()
    (wheelhouse / "filelock-3.16.1-py3-none-any.whl").write_bytes(b"")
    plan, failure = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0",
                           python_env_wheelhouse=str(wheelhouse), python_env_offline=True,
                           python_env_wheelhouse_fill=False)
    assert plan is None and "python_env_wheelhouse" in failure and "torch==2.13.0+cpu" in failure


def test_plan_playbook_over_recorded_lab_facts():
    """playbooks/plan.yml (preflight + python_env decide) over the recorded lab hosts."""
    run = run_playbook("plan.yml", PLAN_INVENTORY, "--limit", "gpu-ubuntu2404,pi4-32,pi5-64,mac-m2",
                       extra_vars={"cluster_plan_roles": ["preflight", "python_env"],
                                   "python_env_manager": "conda", "python_env_torch_version": "2.13.0",
                                   "python_env_conda_sha256": {"MacOSX-arm64": "cd" * 32}})
    plans = {host: roles["python_env"] for host, roles in run.plan.items() if "python_env" in roles}
    assert plans["pi4-32"]["method"] == "venv"
    assert plans["pi4-32"]["reason"] == "armv7l: no miniforge installer, using venv"
    assert plans["pi5-64"]["installer"]["platform"] == "Linux-aarch64"
    assert plans["mac-m2"]["installer"]["platform"] == "MacOSX-arm64"
    assert plans["mac-m2"]["torch_requirement"] == "torch==2.13.0"
    assert plans["gpu-ubuntu2404"]["torch_variant"] == "cuda"
    assert plans["gpu-ubuntu2404"]["torch_requirement"] == "torch==2.13.0"


def test_training_packages_travel_with_torch(tmp_path):
    """python_env_training_packages are downloaded with torch and named by the set's marker; a pinned
    one keeps its pin, and [] leaves torch alone (the set filled before numpy was a default)."""
    wheelhouse = tmp_path / "wh"
    pinned, failure = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0",
                             python_env_wheelhouse=str(wheelhouse),
                             python_env_training_packages=["numpy==2.2.6", "pandas"])
    assert not failure
    assert pinned["fill"]["attempts"][0][-3:] == ["torch==2.13.0+cpu", "numpy==2.2.6", "pandas"]
    assert pinned["fill"]["marker"] == "torch-2.13.0+cpu_numpy-2.2.6_pandas.complete"
    none, failure = decide(tmp_path, DEBIAN_AMD64, python_env_torch_version="2.13.0",
                           python_env_wheelhouse=str(wheelhouse), python_env_training_packages=[])
    assert not failure
    assert none["fill"]["attempts"][0][-1] == "torch==2.13.0+cpu"
    assert none["fill"]["marker"] == "torch-2.13.0+cpu.complete"
    assert none["requirements"] == ["torch==2.13.0+cpu"]
    assert pinned["requirements"] == ["torch==2.13.0+cpu", "numpy==2.2.6", "pandas"]
