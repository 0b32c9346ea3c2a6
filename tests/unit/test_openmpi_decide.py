"""openmpi decide step over recorded facts, and the source method's validation and check mode."""
import pytest

from ansible_run import host_facts, plans, run_role

GPU_HOST = {"hvc_platform": {"gpu": {"present": True, "count": 2}, "cores": 16}}


def test_auto_method_per_platform(tmp_path):
    hosts = {"debian12": host_facts("debian12", "a"), "ubuntu24": host_facts("ubuntu24", "b"),
             "macos14": host_facts("macos14", "c")}
    proc = run_role(tmp_path, "openmpi", hosts)
    assert proc.returncode == 0, proc.stdout
    got = plans(proc)
    assert {h: p["method"] for h, p in got.items()} == {"debian12": "distro", "ubuntu24": "distro",
                                                         "macos14": "homebrew"}
    assert got["debian12"]["bindir"] == "/usr/bin"


def test_source_plan_is_cuda_aware_on_gpu_hosts(tmp_path):
    hosts = {"gpu": host_facts("ubuntu24", "gpu", extra=GPU_HOST), "cpu": host_facts("debian12", "cpu")}
    proc = run_role(tmp_path, "openmpi", hosts, {"openmpi_method": "source"})
    assert proc.returncode == 0, proc.stdout
    got = plans(proc)
    assert got["gpu"]["cuda_aware"] is True
    assert got["cpu"]["cuda_aware"] is False
    assert got["gpu"]["action"] == "install"
    assert got["gpu"]["bindir"] == "/opt/openmpi/bin"
    assert "build 4.1.6 CUDA-aware" in got["gpu"]["reason"]


def test_source_skipped_when_ompi_info_reports_the_version(tmp_path):
    hosts = {"h": host_facts("debian12", "h")}
    proc = run_role(tmp_path, "openmpi", hosts, {"openmpi_method": "source", "__openmpi_installed_version": "4.1.6"})
    assert plans(proc)["h"]["action"] == "skip"
    proc = run_role(tmp_path, "openmpi", hosts, {"openmpi_method": "source", "openmpi_force_rebuild": True,
                                                 "__openmpi_installed_version": "4.1.6"})
    assert plans(proc)["h"]["action"] == "install"


@pytest.mark.parametrize("extra, needle", [
    ({"openmpi_method": "spack"}, "openmpi_method"),
    ({"openmpi_method": "source", "openmpi_source_version": "4.1"}, "openmpi_source_version"),
    ({"openmpi_method": "source", "openmpi_source_version": "5.0.3"}, "openmpi_source_sha256"),
    ({"openmpi_method": "source", "openmpi_source_sha256": "abc"}, "openmpi_source_sha256"),
    ({"openmpi_method": "source", "openmpi_source_url": "http://example.invalid/o.tar.bz2"}, "openmpi_source_url"),
    ({"openmpi_cuda": "maybe"}, "openmpi_cuda"),
    ({"openmpi_method": "homebrew"}, "openmpi_method=homebrew"),
])
def test_bad_input_fails_naming_the_variable(tmp_path, extra, needle):
    proc = run_role(tmp_path, "openmpi", {"h": host_facts("debian12", "h")}, extra)
    assert proc.returncode != 0
    assert needle in proc.stdout
    assert plans(proc) == {}


def test_source_method_in_check_mode_changes_nothing(tmp_path):
    """The whole role in check mode: ompi_info probe, decide, then the build steps are reached without
    building. The official download site is not reachable from here, so get_url's check (a request
    even in check mode) is the only step allowed to fail."""
    prefix = tmp_path / "openmpi"
    proc = run_role(tmp_path, "openmpi", {"h": host_facts("debian12", "h")},
                    {"openmpi_method": "source", "openmpi_source_prefix": str(prefix)}, tasks_from="main")
    out = proc.stdout
    assert "Probe the Open MPI version in the source prefix (ompi_info)" in out
    assert "Install the build dependencies of the source build" in out
    assert "Download the pinned Open MPI tarball (sha256-verified)" in out
    if proc.returncode != 0:
        failed = out[out.rindex("TASK ["):]
        assert failed.startswith("TASK [openmpi : Download the pinned Open MPI tarball"), failed
        assert "download.open-mpi.org/release/open-mpi/v4.1/openmpi-4.1.6.tar.bz2" in failed
    assert not prefix.exists()
