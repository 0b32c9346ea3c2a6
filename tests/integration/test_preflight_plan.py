"""plan.yml ("decide, then apply") over recorded facts, with no connection to any host, and the
preflight role passing for real on this machine."""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_run import PLAN_INVENTORY, REPO, ansible_playbook, local_inventory, plan_preflight, run_playbook

FIXTURE_HOSTS = {
    # host: (os_id, os_version, arch, is_raspberry_pi, gpu_count)
    "gpu-ubuntu2404": ("ubuntu", "24.04", "x86_64", False, 2),
    "mac-m2": ("macos", "14.5", "aarch64", False, 0),
    "pi5-64": ("raspios", "12", "aarch64", True, 0),
    "pi4-32": ("raspios", "12", "armv7l", True, 0),
    "cpu-debian12": ("debian", "12", "x86_64", False, 0),
}


def test_preflight_plan_over_recorded_facts():
    run = plan_preflight(PLAN_INVENTORY)
    assert run.rc == 0, run.stderr
    assert set(run.plan) == set(FIXTURE_HOSTS)  # merged across hosts, one entry each
    for host, (os_id, version, arch, is_pi, gpus) in FIXTURE_HOSTS.items():
        assert run.stats[host]["unreachable"] == 0 and run.stats[host]["failures"] == 0
        plan = run.plan[host]["preflight"]
        assert (plan["action"], plan["method"]) == ("pass", "validate")
        got = plan["platform"]
        assert (got["os_id"], got["os_version"], got["arch"], got["is_raspberry_pi"], got["gpu_count"]) == \
            (os_id, version, arch, is_pi, gpus)
    assert run.plan["gpu-ubuntu2404"]["preflight"]["platform"]["cuda_version"] == "13.0"
    assert "2 NVIDIA GPUs (driver 580.126.09, CUDA 13.0)" in run.plan["gpu-ubuntu2404"]["preflight"]["reason"]
    assert "Raspberry Pi 5 Model B Rev 1.0" in run.plan["pi5-64"]["preflight"]["reason"]
    assert run.changed() == 0


def test_plan_makes_no_connection():
    """The fixture hosts' ssh is a program that does not exist: the first connection would fail the
    host. plan.yml itself (loading recorded facts, publishing) and preflight's decide step never reach one."""
    run = plan_preflight(PLAN_INVENTORY)
    assert run.rc == 0, run.stderr
    for host in FIXTURE_HOSTS:
        assert run.stats[host]["unreachable"] == 0 and run.stats[host]["failures"] == 0
    assert not any("plan-must-not-connect" in str(result) for _, _, result in run.results())


@pytest.fixture(scope="module")
def full_plan():
    """plan.yml with every role's decide step present in roles/."""
    return run_playbook("plan.yml", PLAN_INVENTORY)


# Roles whose decide step is known to touch the host (none: keep it that way).
IMPURE: dict[str, str] = {}


@pytest.mark.parametrize("role", [
    pytest.param(r, marks=pytest.mark.xfail(reason=IMPURE[r], strict=False)) if r in IMPURE else r
    for r in ["cluster_defaults", "preflight", "cmake", "openmpi", "gloo", "python_env", "ssh_mesh", "hostfile", "cuda_toolkit",
              "nccl", "horovod"]])
def test_every_decide_step_is_pure(full_plan, role):
    """Each role's decide step plans every fixture host without reaching it (DESIGN §2)."""
    if not (REPO / "roles" / role / "tasks" / "decide.yml").is_file():
        pytest.skip(f"roles/{role} has no decide step yet")
    connected = sorted({host for host, name, result in full_plan.results()
                        if name.startswith(f"{role} : ") and "plan-must-not-connect" in str(result)})
    assert connected == [], f"{role}'s decide step tried to reach {connected}"
    for host in FIXTURE_HOSTS:
        plan = full_plan.plan[host].get(role)
        assert plan is not None, f"no {role} plan for {host}: {full_plan.plan[host]}"
        assert plan.get("action") != "fail", plan


def test_connection_guard_is_real(tmp_path):
    """Sanity check of the guard the test above relies on: a task that does connect fails."""
    (tmp_path / "probe.yml").write_text(
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n")
    proc = ansible_playbook([tmp_path / "probe.yml", "-i", PLAN_INVENTORY, "--limit", "cpu-debian12"])
    assert proc.returncode != 0
    assert "plan-must-not-connect" in proc.stdout + proc.stderr


def test_recorded_facts_missing_names_the_file(tmp_path):
    (tmp_path / "plan").mkdir()
    (tmp_path / "facts").mkdir()
    inv = tmp_path / "plan" / "hosts.yml"
    inv.write_text(PLAN_INVENTORY.read_text())
    run = plan_preflight(inv, "--limit", "mac-m2")
    assert run.rc == 2
    assert "no recorded facts for host mac-m2" in run.failure_messages("mac-m2")
    assert "mac-m2.json is missing" in run.failure_messages("mac-m2")


@pytest.mark.parametrize("check", [False, True], ids=["apply", "check-mode"])
def test_preflight_passes_on_this_machine(tmp_path, check):
    """The whole role for real (setup + hvc_platform_facts + decide) on localhost; nothing changes."""
    run = run_playbook("preflight.yml", local_inventory(tmp_path), *(["--check"] if check else []))
    assert run.rc == 0, run.stderr
    assert run.changed() == 0
    detected = [r for _, name, r in run.results() if "Detect OS, arch" in name]
    facts = detected[0]["ansible_facts"]["hvc_platform"]
    machine = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(platform.machine())
    assert facts["arch"] == machine
    assert facts["cores"] == len(os.sched_getaffinity(0))
    assert facts["python_version"] == platform.python_version()
    assert facts["is_raspberry_pi"] is False
    with open("/etc/os-release") as handle:
        assert f"ID={facts['os_id_raw']}" in handle.read()


def test_lab_inventory_parses():
    # this interpreter's own ansible-inventory (a venv's, also when the venv is not activated)
    tool = shutil.which("ansible-inventory", path=str(Path(sys.executable).parent)) or "ansible-inventory"
    proc = subprocess.run([tool, "-i", str(REPO / "inventories" / "lab"), "--list"],
                          cwd=REPO, capture_output=True, text=True, check=True)
    inventory = json.loads(proc.stdout)
    for group in ("cluster", "gpu_nodes", "cpu_nodes", "macs", "pis"):
        assert inventory[group].get("hosts") or inventory[group].get("children"), group
    hostvars = inventory["_meta"]["hostvars"]
    addresses = [v["ansible_host"] for v in hostvars.values()]
    assert len(addresses) == len(set(addresses))


def test_plan_gives_each_host_the_key_the_rollout_builds(full_plan):
    """horovod's decide step reads the other roles' published results (hvc_<role>), which their own
    decide steps set: a GPU host's plan names the CUDA/NCCL build, an MPI host the MPI series, and the
    interpreter is the environment python_env will make (conda on the GPU host). The fixture mixes
    Open MPI 4.1 (Linux) with Homebrew's 5 (macOS), so every host with a PyPI wheel plans PyPI's 5;
    the 32-bit Pi has none and keeps its distro's 4."""
    keys = {host: full_plan.plan[host]["horovod"]["platform_key"] for host in FIXTURE_HOSTS}
    assert keys["gpu-ubuntu2404"] == \
        "hvd0.28.1-ubuntu24-x86_64-py3.11-pytorch2.13.0-cuda13.0-sm80-gpuopsnccl-mpi5pip-mpilongopts-waitcv"
    assert keys["cpu-debian12"] == \
        "hvd0.28.1-debian12-x86_64-py3.11-pytorch2.13.0_cpu-cpu-gpuopsnone-mpi5pip-mpilongopts-waitcv"
    assert keys["mac-m2"].endswith("-cpu-gpuopsnone-mpi5pip-mpilongopts-waitcv")
    assert keys["pi5-64"].endswith("-aarch64-py3.11-pytorch2.13.0-cpu-gpuopsnone-mpi5pip-mpilongopts-waitcv")
    assert keys["pi4-32"].endswith("-armv7l-py3.11-pytorch2.13.0-cpu-gpuopsnone-mpi4-waitcv")
    gpu = full_plan.plan["gpu-ubuntu2404"]["horovod"]
    assert gpu["build_env"]["HOROVOD_GPU_OPERATIONS"] == "NCCL"
    assert gpu["build_env"]["HOROVOD_CUDA_HOME"] == full_plan.plan["gpu-ubuntu2404"]["cuda_toolkit"]["home"]
    assert gpu["build_env"]["HOROVOD_NCCL_HOME"] == full_plan.plan["gpu-ubuntu2404"]["nccl"]["home"]
    assert gpu["marker"].startswith(full_plan.plan["gpu-ubuntu2404"]["python_env"]["env_path"] + "/")


def test_lab_gpu_operations_nccl_plans(tmp_path):
    """The lab inventory sets horovod_gpu_operations: NCCL for its GPU hosts; the plan takes it."""
    run = run_playbook("plan.yml", PLAN_INVENTORY, "--limit", "gpu-ubuntu2404",
                       "-e", "horovod_gpu_operations=NCCL")
    assert run.rc == 0, run.stderr
    assert "-cuda13.0-sm80-gpuopsnccl-" in run.plan["gpu-ubuntu2404"]["horovod"]["platform_key"]


def test_plan_shows_the_shared_download_settings_without_proxy_secrets(tmp_path):
    """cluster_defaults' decide step: the plan says which proxy variables and which CA bundle each host's
    downloads get; a proxy's credentials never reach the plan (only the variables' names do)."""
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    run = run_playbook("plan.yml", PLAN_INVENTORY, "--limit", "cpu-debian12", extra_vars={
        "cluster_plan_roles": ["cluster_defaults", "preflight"], "cluster_ca_bundle": str(bundle),
        "proxy_env": {"https_proxy": "http://user:s3cret@proxy.invalid:3128", "no_proxy": "localhost"}})
    assert run.rc == 0, run.failure_messages("cpu-debian12") or run.stderr[-2000:]
    plan = run.plan["cpu-debian12"]["cluster_defaults"]
    assert (plan["action"], plan["ca_bundle"], plan["ca_dest"]) == ("copy_ca", str(bundle), "/opt/horovod/ca-bundle.pem")
    assert plan["proxy_variables"] == ["https_proxy", "no_proxy"]
    assert {"PIP_CERT", "SSL_CERT_FILE", "https_proxy"} <= set(plan["download_env_variables"])
    assert "s3cret" not in json.dumps(run.plan)
    plain = run_playbook("plan.yml", PLAN_INVENTORY, "--limit", "cpu-debian12",
                         extra_vars={"cluster_plan_roles": ["cluster_defaults"]}).plan["cpu-debian12"]["cluster_defaults"]
    assert (plain["action"], plain["proxy_variables"], plain["download_env_variables"]) == ("none", [], [])


def test_armv7l_way_out_reaches_the_environment(full_plan):
    """pi4-32 (32-bit Pi OS) plans because the fixture inventory's wheelhouse for it holds a torch wheel of the
    user's own for armv7l (tests/fixtures/wheelhouse-armv7l); python_env installs that wheel, with no download,
    and horovod builds against it. Without it preflight refuses the host
    (test_preflight_bad_input.py, test_lab_plan.py)."""
    pi = full_plan.plan["pi4-32"]
    assert pi["preflight"]["action"] == "pass"
    env = pi["python_env"]
    assert os.path.realpath(env["wheel_dir"]) == str(REPO / "tests" / "fixtures" / "wheelhouse-armv7l")
    assert env["wheels"] == ["torch-2.13.0-cp311-cp311-linux_armv7l.whl"] and env["fill"] == {}
    assert env["requirements"][0] == "torch==2.13.0"
    assert pi["horovod"]["platform_key"] == "hvd0.28.1-raspios12-armv7l-py3.11-pytorch2.13.0-cpu-gpuopsnone-mpi4-waitcv"
