"""Pure functions of the cuda_toolkit / nccl roles: version mapping, repository rendering."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location(
    "cuda_toolkit_filters", REPO / "roles" / "cuda_toolkit" / "filter_plugins" / "cuda_toolkit.py")
cf = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(cf)


@pytest.mark.parametrize("version,parts", [("13.0", (13, 0)), ("12.8", (12, 8)), (" 12.4 ", (12, 4))])
def test_version_parts(version, parts):
    assert cf.cuda_version_parts(version) == parts


@pytest.mark.parametrize("bad", ["13", "13.0.1", "v13.0", "13.x", "", "thirteen", None, "13.0-1"])
def test_malformed_versions_rejected(bad):
    assert not cf.cuda_version_valid(bad)
    with pytest.raises(cf.CudaVersionError, match="cuda_toolkit_version"):
        cf.cuda_version_parts(bad)


def test_supported_set():
    assert cf.cuda_version_supported("13.0")
    assert cf.cuda_version_supported("12.8")
    assert not cf.cuda_version_supported("11.8")
    assert not cf.cuda_version_supported("13.5")


def test_supported_set_matches_role_vars():
    text = (REPO / "roles/cuda_toolkit/vars/main.yml").read_text()
    line = next(l for l in text.splitlines() if l.startswith("__cuda_toolkit_supported_versions"))
    assert all('"%s"' % v in line for v in cf.SUPPORTED_CUDA_VERSIONS)


@pytest.mark.parametrize("version,package", [("13.0", "cuda-toolkit-13-0"), ("12.8", "cuda-toolkit-12-8"),
                                             ("12.4", "cuda-toolkit-12-4")])
def test_toolkit_package(version, package):
    assert cf.cuda_toolkit_package(version) == package


@pytest.mark.parametrize("dist,major,arch,path", [
    ("Ubuntu", "24", "x86_64", "ubuntu2404/x86_64"),
    ("Ubuntu", "22", "x86_64", "ubuntu2204/x86_64"),
    ("Ubuntu", "24", "aarch64", "ubuntu2404/sbsa"),
    ("Ubuntu", "22", "arm64", "ubuntu2204/sbsa"),
    ("Debian", "12", "x86_64", "debian12/x86_64"),
    ("Debian", "12", "aarch64", ""),      # no sbsa repository for Debian
    ("Debian", "12", "armv7l", ""),       # Raspberry Pi OS 32-bit
    ("Ubuntu", "20", "x86_64", ""),       # not supported here
    ("MacOSX", "14", "arm64", ""),
])
def test_repo_path(dist, major, arch, path):
    assert cf.cuda_repo_path(dist, major, arch) == path


def test_repo_url_and_sources_line():
    assert cf.cuda_repo_url("ubuntu2404/x86_64") == \
        "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/"
    assert cf.cuda_repo_url("debian12/x86_64", "http://mirror.lab/cuda/") == "http://mirror.lab/cuda/debian12/x86_64/"
    assert cf.cuda_sources_line("ubuntu2404/sbsa", "/usr/share/keyrings/cuda-archive-keyring.asc") == (
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.asc] "
        "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/sbsa/ /")
    with pytest.raises(ValueError):
        cf.cuda_repo_url("")


def test_pin_and_origin():
    assert cf.cuda_repo_origin() == "developer.download.nvidia.com"
    assert cf.cuda_repo_origin("http://mirror.lab:8080/cuda") == "mirror.lab"
    assert cf.apt_pin("*", "origin developer.download.nvidia.com", 600) == (
        "Package: *\nPin: origin developer.download.nvidia.com\nPin-Priority: 600\n")
    assert cf.apt_pin(["libnccl2", "libnccl-dev"], "version 2.27.7-1+cuda13.0", 1001) == (
        "Package: libnccl2 libnccl-dev\nPin: version 2.27.7-1+cuda13.0\nPin-Priority: 1001\n")


def test_pip_requirements_cuda13_have_no_suffix():
    assert cf.cuda_pip_requirements("13.0") == [
        "nvidia-cuda-nvcc==13.0.*", "nvidia-cuda-crt==13.0.*", "nvidia-nvvm==13.0.*",
        "nvidia-cuda-cccl==13.0.*", "nvidia-cuda-runtime==13.0.*"]


def test_pip_requirements_cuda12_have_cu12_suffix():
    reqs = cf.cuda_pip_requirements("12.8")
    assert reqs == ["nvidia-cuda-nvcc-cu12==12.8.*", "nvidia-cuda-cccl-cu12==12.8.*",
                    "nvidia-cuda-runtime-cu12==12.8.*"]
    with pytest.raises(cf.CudaVersionError):
        cf.cuda_pip_requirements("11.8")


@pytest.mark.parametrize("cuda,nccl", [("13.0", "2.27.7-1+cuda13.0"), ("12.9", "2.26.5-1+cuda12.9"),
                                       ("12.8", "2.25.1-1+cuda12.8"), ("12.4", "2.21.5-1+cuda12.4")])
def test_nccl_repo_version(cuda, nccl):
    assert cf.nccl_repo_version(cuda) == nccl
    assert nccl.endswith("+cuda" + cuda)


def test_nccl_repo_version_unknown_cuda():
    with pytest.raises(cf.CudaVersionError, match="no NCCL build known for CUDA 11.8"):
        cf.nccl_repo_version("11.8")


def test_nccl_repo_packages_and_pip():
    assert cf.nccl_repo_packages("13.0") == ["libnccl2=2.27.7-1+cuda13.0", "libnccl-dev=2.27.7-1+cuda13.0"]
    assert cf.nccl_repo_packages("12.8", "2.26.5-1+cuda12.8") == [
        "libnccl2=2.26.5-1+cuda12.8", "libnccl-dev=2.26.5-1+cuda12.8"]
    assert cf.nccl_pip_requirement("13.0") == "nvidia-nccl-cu13==2.27.7"
    assert cf.nccl_pip_requirement("12.8", "2.26.5") == "nvidia-nccl-cu12==2.26.5"
    assert cf.nccl_pip_requirement("13.0", "2.27.7-1+cuda13.0") == "nvidia-nccl-cu13==2.27.7"
    assert cf.nccl_upstream_version("2.27.7-1+cuda13.0") == "2.27.7"


@pytest.mark.parametrize("driver,toolkit,ok", [("13.0", "13.0", True), ("13.0", "12.8", True),
                                               ("12.2", "13.0", False), ("11.4", "12.4", False),
                                               ("12.9", "12.8", True),
                                               # minor version compatibility within a major
                                               ("12.2", "12.8", True), ("11.4", "11.8", True),
                                               ("10.1", "10.2", False)])
def test_driver_supports(driver, toolkit, ok):
    assert cf.cuda_driver_supports(driver, toolkit) is ok


@pytest.mark.parametrize("torch,major", [("cu130", "13"), ("cu128", "12"), ("13.0", "13"), ("12.8", "12"),
                                         ("", ""), (None, ""), ("cpu", "")])
def test_torch_cuda_major(torch, major):
    assert cf.torch_cuda_major(torch) == major


def test_filters_exported():
    names = cf.FilterModule().filters()
    for name in ("cuda_repo_path", "cuda_sources_line", "cuda_toolkit_package", "nccl_repo_version",
                 "cuda_pip_requirements", "cuda_driver_supports"):
        assert callable(names[name])
