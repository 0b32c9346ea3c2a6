"""A pattern is written once, in its role's meta/rules.yml: preflight applies it to what the inventory gives
(hvc_settings_findings) and the role's decide step to the value it runs with (hvc_rule_errors), and no task
writes the same variable's form again as a regex."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from hvc_settings import hvc_rule_errors, load_rules  # plugins/filter (tests/unit/conftest.py puts it on sys.path)

REPO = Path(__file__).resolve().parents[2]
ROLES = str(REPO / "roles")


def test_no_task_writes_a_pattern_of_meta_rules_again():
    patterns = load_rules(ROLES)["patterns"]
    test = re.compile(r"\b(%s)\b[^\n]*\bis (?:regex|match|search)\(" % "|".join(map(re.escape, patterns)))
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()}" for path in sorted((REPO / "roles").glob("*/tasks/*.yml"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if test.search(line)]
    assert found == []


@pytest.mark.parametrize("name,value,fragment", [
    ("horovod_version", "0.28", "horovod_version is '0.28'; allowed: a release like 0.28.1"),
    ("openmpi_source_sha256", "abc", "openmpi_source_sha256 is 'abc'; allowed: 64 lowercase hex digits"),
    ("cmake_min_version", "three", "cmake_min_version is 'three'; allowed: a version like 3.13"),
    ("openmpi_cuda", "maybe", "openmpi_cuda is 'maybe'; allowed: auto, true or false"),
    # issue 45: free text that reaches environment.yml, a path or apt/pip
    ("nccl_version", "2.27.7 --index-url=http://x", "nccl_version is '2.27.7 --index-url=http://x'; allowed: a release"
                                                     ' like "2.27.7" (pip) or "2.27.7-1+cuda13.0"'),
    ("nccl_version", "latest", "nccl_version is 'latest'; allowed: a release"),
    ("python_env_conda_env_name", "../base", "python_env_conda_env_name is '../base'; allowed: a conda environment"),
    ("python_env_conda_env_name", "horovod\nchannels: [evil]", "python_env_conda_env_name is 'horovod\\nchannels"),
    ("python_env_conda_channels", ["conda-forge", "x y"], "python_env_conda_channels has the item 'x y'; allowed: a"
                                                          ' channel name ("conda-forge", "nvidia/label/cuda-12.4.0")'),
    ("python_env_conda_channels", ["file:///etc"], "python_env_conda_channels has the item 'file:///etc'"),
    # issue 45: the mesh key's folder and comment, and its from=
    ("cluster_id", "../lab", "cluster_id is '../lab'; allowed: a name: letters, digits and . _ -, up to 64"),
    ("cluster_id", "a b", "cluster_id is 'a b'; allowed: a name"),
    ("ssh_mesh_allow_from", ["fe80::1%eth0"], "ssh_mesh_allow_from has the item 'fe80::1%eth0'; allowed: IPv4 or IPv6"
                                              ' addresses or networks (CIDR): "10.1.2.3", "192.168.1.0/24"'),
    ("ssh_mesh_allow_from", ["10.0.0.0/8", "lab.example"], "ssh_mesh_allow_from has the item 'lab.example'"),
    ("ssh_mesh_allow_from", ["10.0.0.0/33"], "ssh_mesh_allow_from has the item '10.0.0.0/33'"),
    ("ssh_mesh_allow_from", ["256.0.0.1"], "ssh_mesh_allow_from has the item '256.0.0.1'"),
    ("ssh_mesh_allow_from", ["*"], "ssh_mesh_allow_from has the item '*'"),
])
def test_the_roles_check_names_the_variable_and_the_form(name, value, fragment):
    assert [fragment in e for e in hvc_rule_errors({name: value}, ROLES, "h")] == [True]


def test_the_shipped_forms_of_nccl_and_conda_pass():
    channels = ["pytorch", "conda-forge", "defaults", "nvidia/label/cuda-12.4.0",
                "https://conda.anaconda.org/conda-forge"]
    assert hvc_rule_errors({"nccl_version": "2.27.7-1+cuda13.0", "python_env_conda_env_name": "horovod-2.13",
                            "python_env_conda_channels": channels}, ROLES, "h") == []
    assert hvc_rule_errors({"nccl_version": "2.27.7"}, ROLES, "h") == []


def test_empty_is_the_default_unless_required():
    assert hvc_rule_errors({"horovod_git_commit": ""}, ROLES, "h") == []
    assert hvc_rule_errors({"horovod_git_commit": ""}, ROLES, "h", ["horovod_git_commit"]) == [
        "host h: horovod_git_commit is empty; allowed: a full 40-hex commit"]
    assert hvc_rule_errors({"horovod_version": "0.28.1", "cmake_max_version": "4.0"}, ROLES, "h") == []
    # a raw option: YAML's booleans and the words alike
    assert hvc_rule_errors({"openmpi_cuda": True}, ROLES, "h") == []
    assert hvc_rule_errors({"openmpi_cuda": "Auto"}, ROLES, "h") == []


def test_a_name_without_a_pattern_is_a_mistake_of_the_role():
    with pytest.raises(ValueError, match="no pattern"):
        hvc_rule_errors({"horovod_python": "/x"}, ROLES, "h")


def test_torch_pinned_twice_must_agree():
    """issue 46 item 5: python_env_torch_version (the default 2.13.0 included) and a torch==X item of
    python_env_pip_packages name one torch; preflight checks what the inventory gives against the default, the
    role's decide step the values it runs with."""
    from hvc_settings import settings_findings
    differ = {"python_env_torch_version": "2.13.0", "python_env_pip_packages": ["numpy==2.2.6", "torch==2.14.1"]}
    message = ("host h: python_env_pip_packages has the item 'torch==2.14.1' but python_env_torch_version is '2.13.0';"
               ' allowed: the same version in both, or python_env_torch_version: "" to install torch from'
               " python_env_pip_packages alone")
    assert hvc_rule_errors(differ, ROLES, "h") == [message]
    assert settings_findings({"python_env_pip_packages": ["torch==2.14.1"]}, "h", ROLES)["errors"] == [message]
    for same in ({"python_env_pip_packages": ["torch==2.13.0", "torchvision==0.28.0"]},
                 {"python_env_pip_packages": ["torch==2.13.0+cpu"]},
                 {"python_env_torch_version": "", "python_env_pip_packages": ["torch==2.14.1"]},
                 {"python_env_torch_version": "2.14.1", "python_env_pip_packages": ["Torch[opt] == 2.14.1"]}):
        assert settings_findings(same, "h", ROLES)["errors"] == [], same
        assert hvc_rule_errors({"python_env_torch_version": "2.13.0", **same}, ROLES, "h") == [], same


def test_the_accepted_forms_of_ssh_mesh_allow_from_pass():
    """IPv4 exact (address, address/prefix), IPv6 by its shape; the filter (hvc_mesh_key_options) parses them."""
    good = ["10.1.2.3", "192.168.1.0/24", "10.0.0.0/8", "0.0.0.0/0", "fd00::/8", "::1", "2001:db8::17",
            "::ffff:10.0.0.1"]
    assert hvc_rule_errors({"ssh_mesh_allow_from": good, "cluster_id": "lab-1.a_b"}, ROLES, "h") == []
    assert hvc_rule_errors({"cluster_id": ""}, ROLES, "h", ["cluster_id"]) == [
        "host h: cluster_id is empty; allowed: a name: letters, digits and . _ -, up to 64"]
