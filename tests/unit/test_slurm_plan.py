"""The slurm role's decision as a pure function (plugins/filter/slurm_plan.py), called directly: the plan of the
controller and of a node, the node lines from what each host reports, and each refusal by its message (what a
host reports of itself goes into every host's slurm.conf: a name with a space or `=` would add settings there)."""
from __future__ import annotations

from pathlib import Path

import pytest

from hvc_settings import hvc_rule_errors  # plugins/filter (tests/unit/conftest.py puts it on sys.path)
from slurm_plan import slurm_node, slurm_plan

ROLES = str(Path(__file__).resolve().parents[2] / "roles")
DEFAULTS = {"slurm_controller": "lab1", "slurm_cluster_name": "horovod", "slurm_partition": "horovod",
            "slurm_slurmctld_port": 6817, "slurm_slurmd_port": 6818}
PATHS = {"conf": "/etc/slurm/slurm.conf", "munge_key": "/etc/munge/munge.key"}


def node(host, hostname=None, address=None, cpus=4, os_family="Debian"):
    return {"host": host, "hostname": hostname or host, "address": address or host, "cpus": cpus,
            "os_family": os_family}


NODES = [node("lab1", "gpu1", "10.0.0.1", 8), node("lab2", "pi2", "10.0.0.2", 4), node("lab3", cpus=2)]


def decide(host="lab1", nodes=None, limit="", **given):
    return slurm_plan({"vars": {**DEFAULTS, **given}, "host": host, "nodes": NODES if nodes is None else nodes,
                       "paths": PATHS, "limit": limit})


def test_the_controller_runs_slurmctld_and_every_host_is_a_node_by_its_own_hostname():
    decided = decide()
    assert decided["errors"] == []
    plan = decided["plan"]
    assert plan["role"] == "controller" and plan["services"] == ["munge", "slurmctld", "slurmd"]
    assert plan["packages"] == ["munge", "slurm-client", "slurmd", "slurmctld"]
    assert (plan["controller_name"], plan["controller_address"]) == ("gpu1", "10.0.0.1")
    assert [(n["name"], n["address"], n["cpus"]) for n in plan["nodes"]] == [
        ("gpu1", "10.0.0.1", 8), ("pi2", "10.0.0.2", 4), ("lab3", "lab3", 2)]
    assert plan["total_cpus"] == 14 and "partition horovod of 3 nodes (14 CPUs), controller gpu1" in plan["reason"]


def test_another_host_is_a_node_only_and_the_controller_follows_the_variable():
    plan = decide(host="lab2")["plan"]
    assert plan["role"] == "node" and plan["services"] == ["munge", "slurmd"] and "slurmctld" not in plan["packages"]
    plan = decide(host="lab2", slurm_controller="lab3")["plan"]
    assert (plan["role"], plan["controller_name"], plan["controller_address"]) == ("node", "lab3", "lab3")
    assert decide(host="lab3", slurm_controller="lab3")["plan"]["role"] == "controller"


@pytest.mark.parametrize("nodes, given, message", [
    (NODES, {"slurm_controller": "lab9"}, 'slurm_controller is "lab9"; expected one of the play\'s hosts (lab1, lab2,'),
    (NODES, {"slurm_slurmd_port": 70000}, 'slurm_slurmd_port is "70000"; expected a TCP port number, 1 to 65535'),
    (NODES, {"slurm_slurmd_port": 6817}, "slurm_slurmctld_port and slurm_slurmd_port are both 6817"),
    ([node("lab1"), node("mac", os_family="Darwin")], {}, "slurm: mac is a Darwin host; the role installs Debian's"),
    ([node("lab1"), node("lab2", hostname="x CPUs=999")], {},
     'slurm: lab2 reports the hostname "x CPUs=999", not a node name slurm.conf can hold'),
    ([node("lab1"), node("lab2", hostname="lab1")], {}, 'slurm: lab1, lab2 all report the hostname "lab1"'),
    ([node("lab1"), node("lab2", address="10.0.0.2 Weight=1")], {},
     "slurm: lab2's address (ansible_host) is \"10.0.0.2 Weight=1\"; expected a host name or an IP address"),
    ([node("lab1"), node("lab2", cpus="4")], {}, 'slurm: lab2 reports "4" CPUs (processor_vcpus); expected a'),
    ([node("lab1"), node("lab2", cpus=0)], {}, 'slurm: lab2 reports "0" CPUs'),
], ids=["controller", "port", "same-ports", "macos", "hostname", "same-hostname", "address", "cpus-text", "no-cpus"])
def test_refusals_name_the_variable_or_the_host(nodes, given, message):
    decided = decide(nodes=nodes, **given)
    assert decided["plan"] == {} and any(message in error for error in decided["errors"]), decided["errors"]


def test_a_limited_play_is_refused():
    """A --limit play would write a slurm.conf of only its hosts (and, by default, make one of them the controller)."""
    decided = decide(limit="lab3")
    assert decided["plan"] == {} and decided["errors"] == [
        "slurm: --limit lab3: slurm.conf lists every node of the play, so a limited play would write one without the"
        " other hosts; expected the whole cluster (no --limit)"]


def test_a_node_entry_is_what_the_host_reports_and_its_inventory_address():
    hostvars = {"inventory_hostname": "lab2", "ansible_host": "10.0.0.2",
                "ansible_facts": {"hostname": "pi2", "processor_vcpus": 4, "os_family": "Debian"}}
    assert slurm_node(hostvars) == {"host": "lab2", "hostname": "pi2", "address": "10.0.0.2", "cpus": 4,
                                    "os_family": "Debian"}
    assert slurm_node({"inventory_hostname": "lab3"})["address"] == "lab3"


@pytest.mark.parametrize("name, value, form", [
    ("slurm_cluster_name", "Horovod lab", "a cluster name of lower-case letters"),
    ("slurm_partition", "gpu=1", "a partition name of letters, digits, _ and -"),
    ("slurm_munge_key_file", "keys/munge.key", "an absolute path"),
])
def test_the_names_and_the_key_file_have_their_form(name, value, form):
    errors = hvc_rule_errors({name: value}, ROLES, "lab1", [name])
    assert len(errors) == 1 and name in errors[0] and form in errors[0], errors
