"""What the toolchain roles produced on a real Mac (delegated scenario, not run in CI)."""
import json
import re


def facts(host):
    return json.loads(host.file("/tmp/hvc-toolchain-facts.json").content_string)


def test_preflight_saw_a_supported_mac(host):
    platform = facts(host)["platform"]
    assert platform["os_id"] == "macos"
    assert int(platform["os_version"].split(".")[0]) >= 13
    assert platform["arch"] == host.check_output("uname -m").replace("arm64", "aarch64")


def test_cmake_from_homebrew_in_range(host):
    cmake = facts(host)["cmake"]
    assert cmake["method"] == "homebrew"
    version = re.search(r"cmake version (\d+)\.(\d+)", host.check_output(f"{cmake['path']} --version"))
    assert (3, 13) <= (int(version[1]), int(version[2]))


def test_open_mpi_runs(host):
    mpirun = facts(host)["openmpi"]["mpirun"]
    out = host.check_output(f"{mpirun} --version")
    assert re.search(r"Open MPI\)? (\d+)\.", out)
    assert host.run(f"{mpirun} -np 2 hostname").rc == 0


def test_libuv_found_by_pkg_config(host):
    assert host.run("PATH=$(brew --prefix)/bin:$PATH pkg-config --modversion libuv").rc == 0


def test_venv_python_runs(host):
    python = facts(host)["python_env"]["python"]
    assert host.check_output(f"{python} -c 'import sys; print(sys.version_info[:2] >= (3, 9))'") == "True"
