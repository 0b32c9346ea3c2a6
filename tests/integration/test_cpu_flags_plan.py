"""A wheel compiled on one CPU reaches only CPUs that run it (issue 45 item 5). Horovod's CMake compiles in those of
-mf16c -mavx -mfma that the builder's CPU has; a wheel built there stops with an illegal instruction on a CPU without
them. Planned over the sandbox host's recorded facts (tests/fixtures/facts/cpu-debian12.json, real flags) and the
same facts with AVX, F16C and FMA taken out (the CPU of an Atom or an older Celeron): two keys, a builder each, and
each build is told its flags."""
from __future__ import annotations

import json
import shutil

import pytest
import yaml

from ansible_run import REPO, run_playbook

FACTS = REPO / "tests" / "fixtures" / "facts"
OLD_CPU = ("avx", "f16c", "fma")


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    root = tmp_path_factory.mktemp("cpu-flags")
    facts = root / "facts"
    facts.mkdir()
    shutil.copy(FACTS / "cpu-debian12.json", facts / "new-cpu.json")
    old = json.loads((FACTS / "cpu-debian12.json").read_text())
    assert set(OLD_CPU) <= set(old["ansible_flags"])  # the recorded CPU has them all
    old["ansible_flags"] = [flag for flag in old["ansible_flags"] if not flag.startswith(OLD_CPU)]
    (facts / "old-cpu.json").write_text(json.dumps(old))
    inventory = root / "hosts.yml"
    hosts = {name: {"ansible_host": f"{name}.invalid"} for name in ("new-cpu", "old-cpu")}
    inventory.write_text(yaml.safe_dump({"all": {
        "vars": {"cluster_facts_dir": str(facts), "ansible_connection": "ssh",
                 "ansible_ssh_executable": "/nonexistent/plan-must-not-connect",
                 "ansible_python_interpreter": "/nonexistent/python3",
                 "python_env_torch_version": "2.13.0"},
        "children": {"cluster": {"hosts": hosts}}}}))
    # a wheel cache of its own: a cached wheel of the first key (the molecule scenarios fill one) is no build
    run = run_playbook("plan.yml", inventory, extra_vars={"horovod_artifacts_dir": str(root / "wheels")})
    assert run.rc == 0, {host: run.failure_messages(host) for host in hosts}
    return run.plan


def test_a_cpu_without_avx_gets_a_key_and_a_build_of_its_own(planned):
    new, old = planned["new-cpu"]["horovod"], planned["old-cpu"]["horovod"]
    assert old["platform_key"] == new["platform_key"] + "-nof16c_avx_fma", (new["platform_key"], old["platform_key"])
    assert (new["action"], new["builder"]) == ("build", "new-cpu"), new
    assert (old["action"], old["builder"]) == ("build", "old-cpu"), old


def test_each_build_compiles_in_exactly_its_keys_flags(planned):
    assert planned["new-cpu"]["horovod"]["build_env"]["HOROVOD_BUILD_ARCH_FLAGS"] == "-mf16c -mavx -mfma"
    # none to give: Horovod's CMake then asks the builder's compiler, which finds none on that CPU either
    assert "HOROVOD_BUILD_ARCH_FLAGS" not in planned["old-cpu"]["horovod"]["build_env"]
