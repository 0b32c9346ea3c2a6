"""Real state after the cmake, openmpi and gloo roles (Debian 12 amd64; Debian 13 on toolchain-trixie)."""
import json
import re

# Debian 12 ships Open MPI 4.1 and CMake 3.25; Debian 13 Open MPI 5.0 and CMake 3.31.
DEBIAN13 = "toolchain-trixie"


def _version(text, pattern):
    match = re.search(pattern, text)
    assert match, text
    return tuple(int(part) for part in match.group(1).split("."))


def _facts(host):
    return json.loads(host.file("/tmp/hvc-toolchain-facts.json").content_string)


def test_cmake_version_in_horovod_range(host):
    facts = _facts(host)["cmake"]
    out = host.check_output(f"{facts['path']} --version")
    version = _version(out, r"cmake version ([0-9.]+)")
    assert (3, 13) <= version < (4, 0)
    assert facts["version"] == ".".join(map(str, version))


def test_cmake_method_per_host(host):
    facts = _facts(host)["cmake"]
    if host.backend.get_hostname() == "toolchain-pip":
        assert facts["method"] == "pip"
        assert facts["path"] == "/opt/horovod-cluster/tools/cmake/bin/cmake"
        assert facts["version"] == "3.31.6"
    else:
        assert facts["method"] == "distro"
        assert facts["path"] == "/usr/bin/cmake"
        assert host.package("cmake").is_installed
        assert facts["version"].startswith("3.31." if host.backend.get_hostname() == DEBIAN13 else "3.25.")


def test_mpirun_major_version(host):
    facts = _facts(host)["openmpi"]
    out = host.check_output("mpirun --version")
    version = _version(out, r"\(Open MPI\) ([0-9.]+)")
    major = 5 if host.backend.get_hostname() == DEBIAN13 else 4
    assert version[0] == major
    assert facts["major"] == str(major)
    assert facts["mpirun"] == "/usr/bin/mpirun"
    assert host.file("/usr/bin/mpicc").exists


def test_mpicc_builds_a_program(host):
    cmd = host.run(
        "printf '#include <mpi.h>\\nint main(int c,char**v){MPI_Init(&c,&v);MPI_Finalize();return 0;}\\n'"
        " > /tmp/hvc_t.c && mpicc /tmp/hvc_t.c -o /tmp/hvc_t && echo built"
    )
    assert cmd.rc == 0, cmd.stderr
    assert "built" in cmd.stdout


def test_gloo_installs_nothing_on_linux(host):
    """Horovod's Gloo uses its built-in tcp transport on Linux: no libuv (it is for macOS's uv transport)."""
    gloo = _facts(host)["gloo"]
    assert (gloo["plan"]["action"], gloo["transport"], gloo["libuv_version"]) == ("none", "tcp", ""), gloo
    assert not host.package("libuv1-dev").is_installed


def test_recommends_follow_cluster_install_recommends(host):
    """libopenmpi-dev recommends gfortran (through libcoarrays-openmpi-dev), nothing here needs it: installed only
    where cluster_install_recommends is true (toolchain-pip), absent under the default (toolchain-distro)."""
    wanted = host.backend.get_hostname() == "toolchain-pip"
    assert host.package("gfortran").is_installed is wanted
    assert host.package("libopenmpi-dev").is_installed
