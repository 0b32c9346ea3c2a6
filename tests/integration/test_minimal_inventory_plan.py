"""Issue 46 (item 5): the roles' defaults are the tested pins. An inventory of only hosts and how to reach them
(no group_vars, no pin of its own) plans cleanly over recorded facts, and python_env pins torch 2.13.0 for it.
With the old default (python_env_torch_version "") horovod's decide step refused it: "horovod_frameworks lists
pytorch without a version".

The recorded facts come with the run (cluster_facts_dir as an extra variable, as `horovod-cluster plan
--facts-dir` passes it), not from the inventory; ssh is a program that does not exist, so nothing is reached.
"""
from __future__ import annotations

import shutil

import pytest
import yaml

from ansible_run import REPO, run_playbook

FACTS = REPO / "tests" / "fixtures" / "facts"
# host -> recorded facts: a Debian 12 x86_64 server and a 64-bit Raspberry Pi OS board
RECORDED = {"cpu01": "cpu-debian12", "pi01": "pi5-64"}


@pytest.fixture(scope="module")
def minimal(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("minimal")
    inventory = tmp / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"cluster": {"hosts": {
        host: {"ansible_host": f"{host}.invalid", "ansible_connection": "ssh",
               "ansible_ssh_executable": "/nonexistent/plan-must-not-connect"} for host in RECORDED}}}}}))
    (tmp / "facts").mkdir()
    for host, recorded in RECORDED.items():
        shutil.copy(FACTS / f"{recorded}.json", tmp / "facts" / f"{host}.json")
    return run_playbook("plan.yml", inventory, extra_vars={"cluster_facts_dir": str(tmp / "facts")})


def test_a_minimal_inventory_plans_without_a_refusal(minimal):
    failed = {h: minimal.failure_messages(h) for h in RECORDED if minimal.stats[h]["failures"]}
    assert failed == {}
    for host in RECORDED:
        assert minimal.stats[host]["unreachable"] == 0
        assert all(plan.get("action") != "fail" for plan in minimal.plan[host].values()), minimal.plan[host]
    assert minimal.changed() == 0


def test_python_env_pins_the_tested_torch(minimal):
    for host in RECORDED:
        assert minimal.plan[host]["python_env"]["torch_requirement"].startswith("torch==2.13.0"), \
            minimal.plan[host]["python_env"]
