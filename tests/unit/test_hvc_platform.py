"""Platform parsing (plugins/module_utils/hvc_platform.py) on real-world text."""
from __future__ import annotations

from pathlib import Path

import pytest

import hvc_platform as hp

OS_RELEASE = {
    # fixture: (os_id, os_id_raw, version, major, codename)
    "ubuntu-22.04": ("ubuntu", "ubuntu", "22.04", "22", "jammy"),
    "ubuntu-24.04": ("ubuntu", "ubuntu", "24.04", "24", "noble"),
    "debian-12": ("debian", "debian", "12", "12", "bookworm"),
    "raspios-12-armhf": ("raspios", "raspbian", "12", "12", "bookworm"),
    # Pi OS 64-bit ships Debian's os-release unchanged: without the board it is Debian
    "raspios-12-arm64": ("debian", "debian", "12", "12", "bookworm"),
    "rocky-9": ("rocky", "rocky", "9.4", "9", ""),
}


@pytest.mark.parametrize("name", sorted(OS_RELEASE))
def test_os_release_normalized(fixture_text, name):
    osr = hp.parse_os_release(fixture_text(f"os-release/{name}"))
    got = hp.normalize_os(osr)
    assert (got["id"], got["id_raw"], got["version"], got["version_major"], got["codename"]) == OS_RELEASE[name]


def test_os_release_quotes_and_comments():
    osr = hp.parse_os_release('# comment\nNAME="A \\"quoted\\" name"\nID=\'x\'\n\nBROKEN\nVERSION_ID=1.2\n')
    assert osr == {"NAME": 'A "quoted" name', "ID": "x", "VERSION_ID": "1.2"}


def test_families(fixture_text):
    family = lambda n: hp.normalize_os(hp.parse_os_release(fixture_text(f"os-release/{n}")))["family"]
    assert family("ubuntu-24.04") == family("raspios-12-armhf") == family("debian-12") == "debian"
    assert family("rocky-9") == "rhel"


@pytest.mark.parametrize("name,model,is_pi", [
    ("rpi-4b", "Raspberry Pi 4 Model B Rev 1.4", True),
    ("rpi-5b", "Raspberry Pi 5 Model B Rev 1.0", True),
    ("rpi-3bplus", "Raspberry Pi 3 Model B Plus Rev 1.3", True),
    ("rpi-zero-2w", "Raspberry Pi Zero 2 W Rev 1.0", True),
    ("rpi-cm4", "Raspberry Pi Compute Module 4 Rev 1.0", True),
    ("jetson-orin-nano", "NVIDIA Orin Nano Developer Kit", False),
    ("rockpro64", "Pine64 RockPro64 v2.0", False),
])
def test_device_tree_model(name, model, is_pi):
    from conftest import FIXTURES
    raw = (FIXTURES / "device-tree" / name).read_bytes()
    assert raw.endswith(b"\x00")  # as the kernel exposes it
    assert hp.parse_device_tree_model(raw) == model
    assert hp.is_raspberry_pi_model(model) is is_pi


def test_pi_os_64bit_detected_by_device_tree(fixture_text):
    facts = hp.build_platform(os_release_text=fixture_text("os-release/raspios-12-arm64"), machine="aarch64",
                              device_tree_model_raw=b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert (facts["os_id"], facts["os_id_raw"], facts["arch"]) == ("raspios", "debian", "aarch64")
    assert facts["is_raspberry_pi"] is True
    assert facts["device_model"] == "Raspberry Pi 5 Model B Rev 1.0"


def test_pi_os_64bit_detected_by_rpi_issue(fixture_text):
    facts = hp.build_platform(os_release_text=fixture_text("os-release/raspios-12-arm64"), machine="aarch64",
                              rpi_issue_text=fixture_text("rpi-issue/bookworm"))
    assert facts["os_id"] == "raspios"
    assert facts["rpi_issue"] == "Raspberry Pi reference 2024-11-19"


def test_debian_on_other_arm_board_is_not_a_pi(fixture_text):
    facts = hp.build_platform(os_release_text=fixture_text("os-release/debian-12"), machine="aarch64",
                              device_tree_model_raw=b"Pine64 RockPro64 v2.0\x00")
    assert (facts["os_id"], facts["is_raspberry_pi"]) == ("debian", False)


def test_pi_os_32bit(fixture_text):
    facts = hp.build_platform(os_release_text=fixture_text("os-release/raspios-12-armhf"), machine="armv7l",
                              userland_bits=32, device_tree_model_raw=b"Raspberry Pi 4 Model B Rev 1.4\x00")
    assert (facts["os_id"], facts["os_version"], facts["arch"], facts["is_raspberry_pi"]) == \
        ("raspios", "12", "armv7l", True)


@pytest.mark.parametrize("machine,bits,arch", [
    ("x86_64", 64, "x86_64"), ("amd64", 64, "x86_64"), ("aarch64", 64, "aarch64"),
    ("arm64", 64, "aarch64"), ("armv7l", 32, "armv7l"), ("armv8l", 32, "armv7l"),
    # Pi OS 32-bit on a Pi 4/5 boots a 64-bit kernel: the userland decides
    ("aarch64", 32, "armv7l"),
    ("ppc64le", 64, "ppc64le"), ("riscv64", 64, "riscv64"), ("armv6l", 32, "armv6l"),
])
def test_arch(machine, bits, arch):
    assert hp.normalize_arch(machine, bits) == arch


@pytest.mark.parametrize("name,version,major", [
    ("macos-14.5", "14.5", "14"), ("macos-13.6.7", "13.6.7", "13"),
    ("macos-12.7.4", "12.7.4", "12"), ("macos-10.15.7", "10.15.7", "10"),
])
def test_macos(fixture_text, name, version, major):
    facts = hp.build_platform(system="Darwin", machine="arm64", sw_vers_text=fixture_text(f"sw_vers/{name}"),
                              brew_path="/opt/homebrew/bin/brew", cores=10)
    assert (facts["os_id"], facts["os_family"], facts["os_version"], facts["os_version_major"]) == \
        ("macos", "darwin", version, major)
    assert facts["arch"] == "aarch64" and facts["kernel_arch"] == "arm64"
    assert facts["homebrew"] == {"present": True, "path": "/opt/homebrew/bin/brew", "prefix": "/opt/homebrew"}
    assert facts["has_nvidia_gpu"] is False


@pytest.mark.parametrize("name,driver,cuda,names", [
    ("a100x2-driver580-cuda13.0.txt", "580.126.09", "13.0", ["NVIDIA A100-SXM4-40GB"] * 2),
    ("t4-driver535-cuda12.2.txt", "535.129.03", "12.2", ["Tesla T4"]),
    ("geforce-driver470-cuda11.4.txt", "470.57.02", "11.4", ["NVIDIA GeForce ..."]),
])
def test_nvidia_smi_banner_and_table(fixture_text, name, driver, cuda, names):
    text = fixture_text(f"nvidia-smi/{name}")
    assert hp.parse_nvidia_smi_header(text) == {"driver_version": driver, "cuda_version": cuda}
    assert [g["name"] for g in hp.parse_nvidia_smi_table(text)] == names


@pytest.mark.parametrize("name", ["failed-no-driver.txt", "no-devices.txt",
                                  "driver470-compute-cap-unknown.txt"])
def test_nvidia_smi_failures_have_no_banner(fixture_text, name):
    text = fixture_text(f"nvidia-smi/{name}")
    assert hp.parse_nvidia_smi_header(text) is None
    assert hp.parse_nvidia_smi_table(text) == []


def test_gpu_facts_from_nvidia_smi(fixture_text):
    fields = ["index", "name", "uuid", "driver_version", "memory.total", "compute_cap"]
    rows = hp.parse_nvidia_smi_query(fixture_text("nvidia-smi/a100x2-driver580-query.csv"), fields)
    gpu = hp.build_gpu_facts(dev_nodes=["/dev/nvidia0", "/dev/nvidia1"], proc_driver_present=True,
                             smi_path="/usr/bin/nvidia-smi",
                             smi_header_text=fixture_text("nvidia-smi/a100x2-driver580-cuda13.0.txt"),
                             smi_query_rows=rows)
    assert gpu["present"] and gpu["vendor"] == "nvidia" and gpu["count"] == 2
    assert gpu["names"] == ["NVIDIA A100-SXM4-40GB"] * 2
    assert (gpu["driver_version"], gpu["cuda_version"]) == ("580.126.09", "13.0")
    assert gpu["compute_capabilities"] == ["8.0", "8.0"] and gpu["cuda_archs"] == ["80"]
    assert gpu["memory_mib"] == [40960, 40960]
    assert gpu["sources"] == ["nvidia-smi", "/proc/driver/nvidia", "/dev/nvidia*"]


def test_gpu_facts_old_driver_without_compute_cap(fixture_text):
    fields = ["index", "name", "uuid", "driver_version", "memory.total"]
    rows = hp.parse_nvidia_smi_query(fixture_text("nvidia-smi/geforce-driver470-query-no-cc.csv"), fields)
    gpu = hp.build_gpu_facts(smi_header_text=fixture_text("nvidia-smi/geforce-driver470-cuda11.4.txt"),
                             smi_query_rows=rows, smi_path="nvidia-smi")
    assert gpu["names"] == ["NVIDIA GeForce RTX 3070"]  # the query is not truncated
    assert gpu["compute_capabilities"] == [] and gpu["cuda_version"] == "11.4"


def test_proc_driver_version_of_the_proprietary_module(fixture_text):
    """The open kernel module's text and a GPU's information file, recorded on a real host, are read in
    test_recorded_gpu_host.py (a host with the kernel module and no nvidia-smi)."""
    assert hp.parse_proc_driver_version(fixture_text("proc-driver-nvidia/version-535")) == "535.129.03"


def test_gpu_facts_device_nodes_only():
    gpu = hp.build_gpu_facts(dev_nodes=hp.nvidia_device_nodes(
        ["nvidia1", "nvidiactl", "nvidia-uvm", "nvidia0", "nvidia10", "nvidia-modeset", "null"]))
    assert gpu["devices"] == ["/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia10"]
    assert gpu["count"] == 3 and gpu["driver_version"] is None


def test_no_gpu(fixture_text):
    gpu = hp.build_gpu_facts(smi_path="/usr/bin/nvidia-smi",
                             smi_header_text=fixture_text("nvidia-smi/failed-no-driver.txt"))
    assert gpu["present"] is False and gpu["count"] == 0 and gpu["vendor"] is None


def test_query_not_supported_values():
    rows = hp.parse_nvidia_smi_query("0, NVIDIA T4, [N/A], 535.1, 15360, [Not Supported]\n",
                                     ["index", "name", "uuid", "driver_version", "memory.total", "compute_cap"])
    assert rows[0]["uuid"] is None and rows[0]["compute_cap"] is None and rows[0]["name"] == "NVIDIA T4"


def test_platform_ubuntu_gpu_host(fixture_text):
    gpu = hp.build_gpu_facts(smi_header_text=fixture_text("nvidia-smi/t4-driver535-cuda12.2.txt"))
    facts = hp.build_platform(os_release_text=fixture_text("os-release/ubuntu-22.04"), machine="x86_64",
                              gpu=gpu, cores=32, python_version="3.10.12")
    assert facts["os_id"] == "ubuntu" and facts["has_nvidia_gpu"] is True
    assert facts["gpu"]["count"] == 1 and facts["cores"] == 32 == facts["cores_total"]
    assert facts["homebrew"]["present"] is False and facts["is_raspberry_pi"] is False


def test_debian13_and_pi_os_13_pass_the_roles_support_matrix(fixture_text):
    """Debian 13's real os-release, alone and on a Pi 5 (64-bit Pi OS 13 ships Debian's os-release unchanged: pi-gen's
    arm64 trixie images bootstrap from deb.debian.org), against preflight's own default matrix."""
    import yaml

    import hvc_preflight as pf

    defaults = yaml.safe_load((Path(__file__).resolve().parents[2] / "roles/preflight/defaults/main.yml").read_text())
    checks = {"platforms": defaults["preflight_supported_platforms"], "archs": defaults["preflight_supported_archs"],
              "ansible_version": "2.19.1", "min_ansible_version": "2.16", "min_python_version": "3.8",
              "require_homebrew": True, "choices": {}, "gpu_options": {}, "values": {}, "address_clashes": {}}
    debian = hp.build_platform(os_release_text=fixture_text("os-release/debian-13"), machine="x86_64")
    pi = hp.build_platform(os_release_text=fixture_text("os-release/debian-13"), machine="aarch64",
                           device_tree_model_raw=b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert (debian["os_id"], debian["os_version"], pi["os_id"], pi["os_version"]) == ("debian", "13", "raspios", "13")
    for facts in (debian, pi):
        assert pf.preflight_errors({**facts, "python_version": "3.13.5"}, "h", checks) == []
    later = {**debian, "os_version": "14", "os_version_major": "14", "python_version": "3.13.5"}
    assert "debian version '14'" in pf.preflight_errors(later, "h", checks)[0]
