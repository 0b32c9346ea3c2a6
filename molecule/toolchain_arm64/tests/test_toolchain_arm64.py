"""Real state on the Raspberry Pi OS stand-in (Debian 12 arm64)."""
import json
import re


def _facts(host):
    return json.loads(host.file("/tmp/hvc-toolchain-facts.json").content_string)


def test_host_is_arm64(host):
    assert host.check_output("uname -m") == "aarch64"


def test_cmake_version_in_horovod_range(host):
    out = host.check_output("cmake --version")
    version = tuple(int(p) for p in re.search(r"cmake version ([0-9.]+)", out).group(1).split("."))
    assert (3, 13) <= version < (4, 0)
    assert _facts(host)["cmake"]["method"] == "distro"


def test_mpirun_major_version(host):
    out = host.check_output("mpirun --version")
    assert re.search(r"\(Open MPI\) 4\.", out), out
    assert _facts(host)["openmpi"]["major"] == "4"


def test_python_env_venv_runs_on_arm64(host):
    script = "import sys, platform; print(sys.prefix, platform.machine())"
    out = host.check_output(f"/opt/horovod/venv/bin/python -c '{script}'")
    assert out == "/opt/horovod/venv aarch64"
