"""The preflight decide step's pure checks (plugins/filter/hvc_preflight.py)."""
from __future__ import annotations

import pytest

import hvc_preflight as pf

MATRIX = [{"os": "ubuntu", "versions": ["22.04", "24.04"]}, {"os": "debian", "versions": ["12"]},
          {"os": "raspios", "versions": ["12"]}, {"os": "macos", "min_version": "13"}]
ARCHS = ["x86_64", "aarch64", "armv7l"]


def platform(**kw):
    base = {"os_id": "debian", "os_name": "Debian GNU/Linux 12", "os_version": "12", "os_version_major": "12",
            "os_family": "debian", "arch": "x86_64", "kernel_arch": "x86_64", "has_nvidia_gpu": False,
            "python_version": "3.11.2", "homebrew": {"present": False}, "gpu": {"present": False, "count": 0}}
    base.update(kw)
    return base


def checks(**kw):
    base = {"platforms": MATRIX, "archs": ARCHS, "ansible_version": "2.19.1", "min_ansible_version": "2.16",
            "min_python_version": "3.8", "require_homebrew": True, "choices": {}, "gpu_options": {},
            "values": {}, "address_clashes": {}}
    base.update(kw)
    return base


def test_supported_platforms_pass():
    for p in (platform(), platform(os_id="ubuntu", os_version="24.04", os_version_major="24"),
              platform(os_id="raspios", arch="armv7l"),
              platform(os_id="macos", os_family="darwin", os_version="13.0", os_version_major="13", arch="aarch64",
                       homebrew={"present": True})):
        assert pf.preflight_errors(p, "h", checks()) == []


def test_matrix_text_lists_everything():
    assert pf.supported_platforms_text(MATRIX) == "ubuntu 22.04, 24.04; debian 12; raspios 12; macos >= 13"


def test_unsupported_version_and_arch_together():
    errors = pf.preflight_errors(platform(os_id="ubuntu", os_version="23.10", os_version_major="23", arch="ppc64le"),
                                 "h1", checks())
    assert len(errors) == 2
    assert errors[0].startswith("host h1: ubuntu version '23.10'")
    assert "preflight_supported_archs): x86_64, aarch64, armv7l" in errors[1]


def test_allow_unsupported_skips_only_the_matrix():
    errors = pf.preflight_errors(platform(os_id="fedora", arch="riscv64"), "h",
                                 checks(allow_unsupported=True, min_ansible_version="99"))
    assert len(errors) == 1 and "preflight_min_ansible_version" in errors[0]


def test_macos_version_compared_numerically():
    old = platform(os_id="macos", os_family="darwin", os_version="9.9", arch="aarch64", homebrew={"present": True})
    new = dict(old, os_version="13.10")
    assert "older than the supported minimum 13" in pf.preflight_errors(old, "m", checks())[0]
    assert pf.preflight_errors(new, "m", checks()) == []


def test_choices_scalar_and_list_and_undefined():
    c = checks(choices={"a": ["x", "y"], "b": ["p"], "c": ["q"]},
               values={"a": ["x", "z", "w"], "b": "p", "c": pf.UNDEFINED})
    assert pf.preflight_errors(platform(), "h", c) == [
        "host h: a has unknown values 'z', 'w'; allowed values: x, y"]


def test_gpu_options_build_host_and_mac():
    opts = {"horovod_gpu_operations": ["NCCL", "MPI"], "openmpi_cuda": ["True", "true"]}
    values = {"horovod_gpu_operations": "none", "openmpi_cuda": True}
    assert "openmpi_cuda=True needs an NVIDIA GPU" in pf.preflight_errors(
        platform(), "h", checks(gpu_options=opts, values=values))[0]
    assert pf.preflight_errors(platform(), "h", checks(gpu_options=opts, values=values, gpu_build_host=True)) == []
    assert pf.preflight_errors(platform(has_nvidia_gpu=True), "h", checks(gpu_options=opts, values=values)) == []
    mac = platform(os_id="macos", os_family="darwin", os_version="14.5", arch="aarch64", homebrew={"present": True})
    assert "macOS does not have" in pf.preflight_errors(
        mac, "m", checks(gpu_options=opts, values=values, gpu_build_host=True))[0]


def test_duplicate_addresses():
    addresses = {"a": "10.0.0.1", "b": "10.0.0.1", "c": "10.0.0.2", "d": "10.0.0.1", "e": "GPU01.lab.",
                 "f": "gpu01.lab"}
    clashes = pf.address_clashes(addresses)
    assert clashes == {"a": {"address": "10.0.0.1", "others": ["b", "d"]},
                       "b": {"address": "10.0.0.1", "others": ["a", "d"]},
                       "d": {"address": "10.0.0.1", "others": ["a", "b"]},
                       "e": {"address": "GPU01.lab.", "others": ["f"]}, "f": {"address": "gpu01.lab", "others": ["e"]}}
    assert pf.check_duplicate_addresses("a", clashes) == [
        "host a: ansible_host 10.0.0.1 is also the address of b, d; allowed values: an address no other host of "
        "the play uses"]
    assert pf.check_duplicate_addresses("c", clashes) == []
    assert pf.preflight_errors(platform(), "e", checks(address_clashes=clashes)) == [
        "host e: ansible_host GPU01.lab. is also the address of f; allowed values: an address no other host of "
        "the play uses"]
    assert pf.preflight_errors(platform(), "e", checks(address_clashes=clashes,
                                                      check_duplicate_addresses=False)) == []


def test_missing_platform_facts():
    assert "hvc_platform is missing" in pf.preflight_errors({}, "h", checks())[0]


def test_summary():
    p = platform(os_id="ubuntu", os_version="24.04", gpu={"present": True, "count": 2, "driver_version": "580.95.05",
                                                           "cuda_version": "13.0"}, cores=64)
    assert pf.preflight_summary(p) == ("ubuntu 24.04 x86_64, 2 NVIDIA GPUs (driver 580.95.05, CUDA 13.0), "
                                       "64 cores, Python 3.11.2")


def test_missing_packages_by_the_list_preflight_read():
    preflight = {"packages": ["libuv1-dev", "pkg-config", "cmake"]}
    assert pf.missing_packages(["libuv1-dev", "pkg-config"], preflight) == []
    assert pf.missing_packages(["cmake", "iperf3", "libuv1-dev"], preflight) == ["iperf3"]
    assert pf.missing_packages("iperf3", preflight) == ["iperf3"]
    # a pinned package is left to apt
    assert pf.missing_packages(["cmake=3.25.1-1"], preflight) == ["cmake=3.25.1-1"]


@pytest.mark.parametrize("preflight", [None, {}, {"packages": None}])
def test_missing_packages_when_nothing_was_read_is_everything(preflight):
    assert pf.missing_packages(["libuv1-dev", "pkg-config"], preflight) == ["libuv1-dev", "pkg-config"]


PI32 = dict(os_id="raspios", os_name="Raspbian GNU/Linux 12 (bookworm)", arch="armv7l", kernel_arch="aarch64")
TORCH = {"wanted": True, "version": "2.13.0", "wheelhouse": "/srv/wheels", "wheels": []}


def test_armv7l_needing_torch_is_refused_with_both_ways_out():
    errors = pf.preflight_errors(platform(**PI32), "pi02", checks(armv7l_torch=TORCH))
    assert len(errors) == 1
    assert errors[0].startswith("host pi02: Raspbian GNU/Linux 12 (bookworm) (armv7l, a 32-bit userland) has no "
                                "PyTorch wheels")
    assert "the 64-bit Raspberry Pi OS (aarch64)" in errors[0]
    assert "put torch-2.13.0-<python tags>-linux_armv7l.whl directly in /srv/wheels" in errors[0]


def test_armv7l_with_its_own_torch_wheel_or_without_torch_passes():
    own = dict(TORCH, wheels=["/srv/wheels/torch-2.13.0-cp311-cp311-linux_armv7l.whl"])
    assert pf.preflight_errors(platform(**PI32), "pi02", checks(armv7l_torch=own)) == []
    assert pf.preflight_errors(platform(**PI32), "pi02", checks(armv7l_torch=dict(TORCH, wanted=False))) == []
    # the 64-bit OS on the same board needs no wheel of its own (PyPI has aarch64 torch)
    assert pf.preflight_errors(platform(**dict(PI32, arch="aarch64")), "pi02", checks(armv7l_torch=TORCH)) == []


def test_interrupted_dpkg_is_refused_naming_the_repair_but_not_on_a_rootless_host():
    interrupted = platform(dpkg_interrupted=True)
    errors = pf.preflight_errors(interrupted, "h", checks())
    assert errors == ["host h: dpkg was interrupted (a package operation stopped half-way: files are left in "
                      "/var/lib/dpkg/updates), so every apt task would fail; run `sudo dpkg --configure -a` on h, "
                      "then roll out again"]
    assert pf.preflight_errors(interrupted, "h", checks(rootless={"enabled": True})) == []
    assert pf.preflight_errors(platform(dpkg_interrupted=False), "h", checks()) == []


def test_plan_of_a_passing_host_says_what_it_is():
    p = platform(os_id="ubuntu", os_version="24.04", is_raspberry_pi=False, cores=64,
                 gpu={"present": True, "count": 2, "driver_version": "580.95.05", "cuda_version": "13.0"})
    assert pf.preflight_plan(p, "h", checks()) == {
        "action": "pass", "method": "validate", "errors": [],
        "reason": "supported: " + pf.preflight_summary(p),
        "platform": {"os_id": "ubuntu", "os_version": "24.04", "arch": "x86_64", "is_raspberry_pi": False,
                     "gpu_count": 2, "cuda_version": "13.0", "cores": 64, "python_version": "3.11.2"}}


def test_plan_fails_naming_every_finding_the_settings_check_last():
    settings = ["host h: horovod_make_jobs is the string 'many'"]
    plan = pf.preflight_plan(platform(arch="riscv64"), "h", checks(), settings)
    assert plan["action"] == "fail"
    assert len(plan["errors"]) == 2 and "architecture 'riscv64'" in plan["errors"][0]
    assert plan["errors"][1] == settings[0]
    assert plan["reason"] == " | ".join(plan["errors"])


def test_plan_without_platform_facts_fails_with_empty_fields():
    plan = pf.preflight_plan({}, "h", checks())
    assert plan["action"] == "fail" and "hvc_platform is missing" in plan["reason"]
    assert plan["platform"] == {"os_id": None, "os_version": None, "arch": None, "is_raspberry_pi": None,
                                "gpu_count": 0, "cuda_version": None, "cores": None, "python_version": None}
