"""The decide step of cuda_toolkit and nccl over recorded facts (no connection, no host change).

ansible-playbook --check runs the roles' tasks/decide.yml on fixture hosts whose facts come from a
recorded-facts folder: an Ubuntu 24.04 host with two A100s (real nvidia-smi output, driver 580 /
CUDA 13.0), the same host with a Tesla T4 on driver 535 (CUDA 12.2), a Mac, a Raspberry Pi and a
Debian 12 host without GPU, loaded by plan.yml's hvc_recorded_facts action (no connection).
The GPU facts are built by preflight's own parser from the real nvidia-smi fixtures.
"""
from __future__ import annotations

import json

import pytest

import hvc_platform  # plugins/module_utils, put on sys.path by conftest.py
from ansible_run import REPO, ansible_playbook_json, local_inventory

FIX = REPO / "tests" / "fixtures"

PLAYBOOK = """
- name: Decide over recorded facts
  hosts: all
  gather_facts: false
  roles: [cluster_defaults]
  tasks:
    - name: Load the recorded facts (plugins/action, no connection)
      hvc_recorded_facts:
        dir: "{{ facts_dir }}"
    - name: Decide cuda_toolkit
      ansible.builtin.include_role:
        name: cuda_toolkit
        tasks_from: decide
        public: true
    - name: Decide nccl
      ansible.builtin.include_role:
        name: nccl
        tasks_from: decide
        public: true
    - name: Show the plans and the rendered repository files
      ansible.builtin.debug:
        msg:
          cuda: "{{ __cuda_toolkit_plan }}"
          nccl: "{{ __nccl_plan }}"
          sources: "{{ lookup('ansible.builtin.template', repo ~ '/roles/cuda_toolkit/templates/cuda-nvidia.list.j2')
            if __cuda_toolkit_plan['method'] == 'nvidia_repo' else '' }}"
          pin: "{{ lookup('ansible.builtin.template', repo ~ '/roles/cuda_toolkit/templates/cuda-repository-pin.j2')
            if __cuda_toolkit_plan['method'] == 'nvidia_repo' else '' }}"
          nccl_pin: "{{ lookup('ansible.builtin.template', repo ~ '/roles/nccl/templates/nccl-pin.j2')
            if __nccl_plan['method'] == 'nvidia_repo' else '' }}"
"""


def _gpu(smi_name):
    if smi_name is None:
        return hvc_platform.build_gpu_facts()
    text = (FIX / "nvidia-smi" / smi_name).read_text()
    return hvc_platform.build_gpu_facts(smi_path="/usr/bin/nvidia-smi", smi_header_text=text)


def _linux(dist, major, arch, smi=None, pi=False, lsb_id=None):
    return {
        "ansible_system": "Linux", "ansible_os_family": "Debian", "ansible_distribution": dist,
        "ansible_distribution_major_version": major, "ansible_architecture": arch,
        "ansible_user_dir": "/home/lab", "ansible_lsb": {"id": lsb_id or dist},
        "hvc_platform": {"system": "Linux", "is_raspberry_pi": pi, "gpu": _gpu(smi)},
    }


HOSTS = {
    "ubuntu-gpu": _linux("Ubuntu", "24", "x86_64", "a100x2-driver580-cuda13.0.txt"),
    "ubuntu-t4-535": _linux("Ubuntu", "24", "x86_64", "t4-driver535-cuda12.2.txt"),
    "ubuntu-arm-gpu": _linux("Ubuntu", "22", "aarch64", "a100x2-driver580-cuda13.0.txt"),
    "old-geforce-470": _linux("Ubuntu", "22", "x86_64", "geforce-driver470-cuda11.4.txt"),
    "debian-nogpu": _linux("Debian", "12", "x86_64", None),
    "rpi": _linux("Debian", "12", "aarch64", None, pi=True),
    "mac": {"ansible_system": "Darwin", "ansible_os_family": "Darwin", "ansible_distribution": "MacOSX",
            "ansible_distribution_major_version": "14", "ansible_architecture": "arm64",
            "ansible_user_dir": "/Users/lab",
            "hvc_platform": {"system": "Darwin", "is_raspberry_pi": False, "gpu": _gpu(None)}},
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cuda_decide")
    cache = tmp / "facts"
    cache.mkdir()
    for name, facts in HOSTS.items():
        (cache / (name + ".json")).write_text(json.dumps(facts))
    local_inventory(tmp, {name: {} for name in HOSTS})
    (tmp / "decide.yml").write_text(PLAYBOOK)
    return tmp


def run(workdir, limit, **extra):
    extra = dict(extra, repo=str(REPO), facts_dir=str(workdir / "facts"))
    out = ansible_playbook_json(["--check", "-i", workdir / "inventory.json", "-l", limit, workdir / "decide.yml",
                                 "-e", json.dumps(extra)], timeout=300,
                                env={"ANSIBLE_GATHERING": "explicit"})
    results = {}
    for host, task, res in out.results():
        if res.get("failed"):
            results[host] = {"failed": res.get("msg", "")}
        elif task.startswith("Show the plans"):
            results[host] = res["msg"]
    return out.rc, results


def test_plan_over_recorded_facts(workdir):
    rc, res = run(workdir, "ubuntu-gpu,mac,rpi,debian-nogpu,ubuntu-arm-gpu")
    assert rc == 0, res
    gpu = res["ubuntu-gpu"]
    assert gpu["cuda"]["action"] == "install" and gpu["cuda"]["method"] == "nvidia_repo"
    assert gpu["cuda"]["version"] == "13.0" and gpu["cuda"]["home"] == "/usr/local/cuda-13.0"
    assert "ubuntu2404/x86_64" in gpu["cuda"]["reason"] and "2 GPU(s)" in gpu["cuda"]["reason"]
    assert gpu["nccl"] == {"action": "install", "method": "nvidia_repo", "version": "2.27.7-1+cuda13.0",
                           "cuda_version": "13.0", "home": "/usr",
                           "reason": "nccl_method=auto: nvidia_repo for CUDA 13.0"}
    assert gpu["sources"].splitlines()[-1] == (
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.asc] "
        "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/ /")
    assert "Package: *\nPin: origin developer.download.nvidia.com\nPin-Priority: 600" in gpu["pin"]
    assert "Package: libnccl2 libnccl-dev\nPin: version 2.27.7-1+cuda13.0\nPin-Priority: 1001" in gpu["nccl_pin"]
    assert res["ubuntu-arm-gpu"]["cuda"]["repo_path"] == "ubuntu2204/sbsa"
    assert "/ubuntu2204/sbsa/ /" in res["ubuntu-arm-gpu"]["sources"]
    for host, why in (("mac", "macOS: CUDA has no macOS support"),
                      ("rpi", "Raspberry Pi: no NVIDIA GPU and no CUDA for its SoC"),
                      ("debian-nogpu", "no NVIDIA GPU detected")):
        assert res[host]["cuda"]["action"] == "skip", host
        assert res[host]["cuda"]["reason"].startswith(why), res[host]
        assert res[host]["nccl"]["action"] == "skip"
        assert res[host]["nccl"]["reason"].startswith("cuda_toolkit skipped: " + why)


def test_build_host_without_gpu_gets_pip_plan(workdir):
    rc, res = run(workdir, "debian-nogpu", cuda_toolkit_build_host=True, cuda_toolkit_method="pip",
                  cuda_toolkit_torch_cuda="cu130")
    assert rc == 0, res
    plan = res["debian-nogpu"]
    assert plan["cuda"]["method"] == "pip" and "compile-only build host" in plan["cuda"]["reason"]
    assert plan["cuda"]["home"] == "/home/lab/.local/share/hvc/cuda-13.0/cuda"
    assert plan["nccl"]["method"] == "pip" and plan["nccl"]["version"] == "2.27.7"


def test_auto_build_host_on_debian_uses_nvidia_repo(workdir):
    rc, res = run(workdir, "debian-nogpu", cuda_toolkit_build_host=True, cuda_toolkit_version="12.8")
    assert rc == 0, res
    assert res["debian-nogpu"]["cuda"]["repo_path"] == "debian12/x86_64"
    assert res["debian-nogpu"]["nccl"]["version"] == "2.25.1-1+cuda12.8"


def test_distro_plan_on_debian(workdir):
    rc, res = run(workdir, "debian-nogpu", cuda_toolkit_build_host=True, cuda_toolkit_method="distro",
                  cuda_toolkit_version="11.8")
    assert rc == 0, res
    assert res["debian-nogpu"]["cuda"]["method"] == "distro"
    assert res["debian-nogpu"]["cuda"]["home"] == "/usr"
    assert res["debian-nogpu"]["cuda"]["nvcc"] == "/usr/bin/nvcc"
    assert res["debian-nogpu"]["nccl"]["action"] == "skip"
    assert res["debian-nogpu"]["nccl"]["reason"].startswith("no NCCL build for CUDA 11.8")


@pytest.mark.parametrize("host,extra,words", [
    ("mac", {"cuda_toolkit_method": "pip"}, ["cuda_toolkit_method=pip", "macOS"]),
    ("rpi", {"cuda_toolkit_build_host": True}, ["cuda_toolkit_build_host=True", "Raspberry Pi"]),
    ("ubuntu-gpu", {"cuda_toolkit_method": "conda"}, ["cuda_toolkit_method must be one of", "conda"]),
    ("ubuntu-gpu", {"cuda_toolkit_version": "13"}, ["cuda_toolkit_version", "MAJOR.MINOR"]),
    ("ubuntu-gpu", {"cuda_toolkit_version": "12.3"}, ["cuda_toolkit_version \"12.3\" is not supported",
                                                      "12.4, 12.6, 12.8, 12.9, 13.0"]),
    ("debian-nogpu", {"cuda_toolkit_build_host": True, "cuda_toolkit_method": "distro"},
     ["cuda_toolkit_method=distro", "11.8", "cuda_toolkit_version"]),
    ("ubuntu-gpu", {"cuda_toolkit_method": "pip", "cuda_toolkit_torch_cuda": "cu128"},
     ["cuda_toolkit_torch_cuda", "cu128", "major 12", "cuda_toolkit_version is 13.0"]),
    ("ubuntu-t4-535", {}, ["driver 535.129.03", "CUDA up to 12.2", "cuda_toolkit_version 13.0"]),
    ("old-geforce-470", {"cuda_toolkit_version": "12.4"}, ["driver 470.57.02", "CUDA up to 11.4",
                                                       "cuda_toolkit_version 12.4"]),
    ("rpi", {"cuda_toolkit_method": "nvidia_repo"}, ["Raspberry Pi"]),
    ("ubuntu-gpu", {"nccl_method": "nvidia_repo", "cuda_toolkit_method": "pip"},
     ["nccl_method=nvidia_repo needs cuda_toolkit_method=nvidia_repo"]),
    ("ubuntu-gpu", {"nccl_method": "rccl"}, ["nccl_method must be one of"]),
])
def test_bad_input_fails_in_decide_naming_the_variable(workdir, host, extra, words):
    rc, res = run(workdir, host, **extra)
    assert rc != 0
    msg = res[host]["failed"]
    for word in words:
        assert word in msg, msg


def test_driver_of_the_same_major_passes(workdir):
    # driver 535 (CUDA 12.2) runs a 12.8 build: CUDA minor version compatibility
    rc, res = run(workdir, "ubuntu-t4-535", cuda_toolkit_version="12.8")
    assert rc == 0, res
    assert res["ubuntu-t4-535"]["cuda"]["action"] == "install"
    assert res["ubuntu-t4-535"]["nccl"]["version"] == "2.25.1-1+cuda12.8"


def test_driver_check_can_be_turned_off(workdir):
    rc, res = run(workdir, "ubuntu-t4-535", cuda_toolkit_driver_check=False)
    assert rc == 0, res
    assert res["ubuntu-t4-535"]["cuda"]["version"] == "13.0"
