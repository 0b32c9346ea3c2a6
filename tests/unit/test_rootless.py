"""cluster_rootless: preflight's refusals (plugins/filter/hvc_preflight.py check_rootless) and the package lists
preflight asks a rootless host for, kept equal to what the roles would otherwise install with apt."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import hvc_preflight as pf
from hvc_settings import hvc_rootless_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = hvc_rootless_rules(str(ROOT / "roles"), "Debian")  # what each role's meta/rules.yml declares
NEEDS = RULES["needs"]
ALL_PACKAGES = sorted({name for need in NEEDS for name in need["packages"]})


def rootless(**kw):
    base = {"enabled": True, "become": False, "user_space": True, "user": "hvcuser", "home": "/home/hvcuser",
            "allowed_methods": RULES["methods"], "paths": RULES["paths"],
            "values": {}, "packages": ALL_PACKAGES, "needs": NEEDS}
    base.update(kw)
    return base


def test_a_rootless_host_with_everything_passes():
    assert pf.check_rootless("h", rootless()) == []
    assert pf.check_rootless("h", rootless(values={"cmake_method": "pip", "openmpi_method": "host",
                                                   "hostfile_path": "/home/hvcuser/hf", "python_env_path": "~/env",
                                                   "ssh_mesh_user": "hvcuser"})) == []


def test_off_means_no_finding():
    assert pf.check_rootless("h", rootless(enabled=False, become=True, packages=[])) == []
    assert pf.check_rootless("h", None) == []


REFUSED = [
    ({"become": True}, ["host h: cluster_rootless is true but ansible_become is true", "allowed: ansible_become: false"]),
    ({"user_space": False}, ["cluster_user_space is false", "allowed: cluster_user_space: true"]),
    ({"values": {"openmpi_method": "distro"}},
     ["openmpi_method=distro needs root", "allowed with cluster_rootless: auto, host, homebrew"]),
    ({"values": {"openmpi_method": "source"}}, ["openmpi_method=source needs root"]),
    ({"values": {"cmake_method": "distro"}}, ["cmake_method=distro", "auto, pip, host, homebrew"]),
    ({"values": {"cuda_toolkit_method": "nvidia_repo"}}, ["cuda_toolkit_method=nvidia_repo", "allowed with cluster_rootless: auto, pip"]),
    ({"values": {"nccl_method": "nvidia_repo"}}, ["nccl_method=nvidia_repo"]),
    ({"values": {"hostfile_path": "/etc/horovod/hostfile"}},
     ["hostfile_path=/etc/horovod/hostfile is outside the user's home /home/hvcuser", "allowed: a path under /home/hvcuser"]),
    ({"values": {"python_env_path": "/home/hvcuser/../other/venv"}}, ["python_env_path=/home/hvcuser/../other/venv is outside"]),
    ({"values": {"horovod_build_root": "relative/build"}}, ["horovod_build_root=relative/build is outside"]),
    ({"values": {"ssh_mesh_user": "root"}}, ["ssh_mesh_user=root is not the connecting user hvcuser", "allowed: ssh_mesh_user: hvcuser"]),
]
MISSING = [
    ("python3-venv", "ask the admin to install python3-venv"),
    ("python3-dev", "build-essential and python3-dev"),
    ("libopenmpi-dev", "openmpi_host_bindir"),
    ("openssh-client", "ask the admin to install openssh-client"),
]


def _case_id(kw):
    return "cluster_rootless with " + ", ".join(f"{k}={v}" for k, v in (kw.get("values") or kw).items())


@pytest.mark.parametrize("kw,fragments", REFUSED, ids=[_case_id(kw) for kw, _ in REFUSED])
def test_refused_naming_the_variable(kw, fragments):
    errors = pf.check_rootless("h", rootless(**kw))
    assert len(errors) == 1, errors
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


@pytest.mark.parametrize("missing,way_out", MISSING, ids=[m for m, _ in MISSING])
def test_missing_package_refused_naming_it_and_the_way_out(missing, way_out):
    errors = pf.check_rootless("h", rootless(packages=[p for p in ALL_PACKAGES if p != missing]))
    assert len(errors) == 1, errors
    assert f"the system package {missing} is not installed" in errors[0]
    assert "a rootless run installs no system package" in errors[0] and way_out in errors[0]


def test_packages_unknown_are_not_refused_in_a_plan_over_recorded_facts():
    assert pf.check_rootless("h", rootless(packages=None)) == []


def test_preflight_errors_runs_the_rootless_check():
    p = {"os_id": "debian", "os_version": "12", "os_version_major": "12", "arch": "x86_64", "python_version": "3.11"}
    errors = pf.preflight_errors(p, "h", {"platforms": [{"os": "debian", "versions": ["12"]}], "archs": ["x86_64"],
                                          "rootless": rootless(become=True)})
    assert any("ansible_become is true" in e for e in errors), errors


def _role_vars(path):
    return yaml.safe_load((ROOT / path).read_text())


# Each role's apt list on the Debian family, and what its meta/rules.yml asks a rootless host to have instead.
APT = [("python_env", "__python_env_venv_packages"), ("horovod", "__horovod_build_packages"),
       ("openmpi", "__openmpi_packages"), ("ssh_mesh", "__ssh_mesh_packages")]


@pytest.mark.parametrize("role,packages", APT, ids=[role for role, _ in APT])
def test_each_role_declares_what_it_would_install_with_apt(role, packages):
    """A rootless host must already have every package the role would apt-install (ssh_mesh: the client only;
    sshd is the admin's by nature, like iperf3, whose absence the check reports)."""
    declared = yaml.safe_load((ROOT / "roles" / role / "meta" / "rules.yml").read_text())["rootless"]["needs"]["Debian"]
    wanted = set(_role_vars(f"roles/{role}/vars/Debian.yml")[packages])
    names = {name for need in declared for name in need["packages"]}
    assert names == (wanted & {"openssh-client"} if role == "ssh_mesh" else wanted)


def test_every_rootless_rule_names_its_own_roles_variables():
    """A role declares rules for its own variables only (cluster_defaults for the project-wide cluster_ ones)."""
    for path in sorted((ROOT / "roles").glob("*/meta/rules.yml")):
        role = path.parent.parent.name
        prefix = "cluster_" if role == "cluster_defaults" else role + "_"
        rules = yaml.safe_load(path.read_text()) or {}
        names = [*(rules.get("patterns") or {}), *(pin["var"] for pin in rules.get("pins") or []),
                 *(rules.get("controller_files") or []), *((rules.get("rootless") or {}).get("methods") or {}),
                 *((rules.get("rootless") or {}).get("paths") or [])]
        assert all(n.startswith(prefix) or (role, n) == ("preflight", "proxy_env") for n in names), (role, names)
