"""cmake decide step over recorded facts: method per platform, and bad input refused naming the variable."""
import pytest

from ansible_run import host_facts, plans, run_role

AUTO = {"debian12": "distro", "raspios12": "distro", "ubuntu22": "distro", "ubuntu24": "distro",
        "ubuntu20": "distro", "macos14": "homebrew"}


def test_auto_method_per_platform(tmp_path):
    proc = run_role(tmp_path, "cmake", {name: host_facts(name, name) for name in AUTO})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = plans(proc)
    assert {host: plan["method"] for host, plan in got.items()} == AUTO
    assert got["debian12"]["version"] == "3.25.1"
    assert got["debian12"]["path"] == "/usr/bin/cmake"
    assert all(plan["action"] == "install" for plan in got.values())


def test_distro_too_old_falls_back_to_pip(tmp_path):
    proc = run_role(tmp_path, "cmake", {"ubuntu20": host_facts("ubuntu20", "h1")}, {"cmake_min_version": "3.18"})
    assert proc.returncode == 0, proc.stdout
    plan = plans(proc)["ubuntu20"]
    assert plan["method"] == "pip"
    assert plan["path"] == "/opt/horovod-cluster/tools/cmake/bin/cmake"
    assert "3.16.3 is not within" in plan["reason"]


@pytest.mark.parametrize("platform, extra, needle", [
    ("debian12", {"cmake_method": "conda"}, "cmake_method"),
    ("debian12", {"cmake_pip_version": "latest"}, "cmake_pip_version"),
    ("debian12", {"cmake_pip_version": "4.1.0"}, "cmake_pip_version"),
    ("debian12", {"cmake_min_version": "3.x"}, "cmake_min_version"),
    ("debian12", {"cmake_method": "homebrew"}, "cmake_method=homebrew"),
    ("debian12", {"cmake_method": "pip", "cmake_pip_version": "3.30.0"}, "cmake_pip_hashes"),
    ("macos14", {"cmake_method": "distro"}, "cmake_method=distro"),
    ("rocky9", {}, "os_family must be Debian or Darwin"),
])
def test_bad_input_fails_naming_the_variable(tmp_path, platform, extra, needle):
    proc = run_role(tmp_path, "cmake", {"h1": host_facts(platform, "h1")}, extra)
    assert proc.returncode != 0
    assert needle in proc.stdout
    assert plans(proc) == {}
