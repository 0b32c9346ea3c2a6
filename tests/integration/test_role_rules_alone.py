"""A role applied alone (no preflight in the play, as in a playbook of the user's own) refuses a value
against its meta/rules.yml with the engine's message, in its decide step over recorded facts; the same
values pass."""
from __future__ import annotations

import pytest

from ansible_run import host_facts, plans, run_role

CASES = [
    ("horovod", {"horovod_version": "0.28"}, "horovod_version is '0.28'; allowed: a release like 0.28.1"),
    ("horovod", {"horovod_source": "git", "horovod_git_commit": ""},
     "horovod_git_commit is empty; allowed: a full 40-hex commit"),
    ("cmake", {"cmake_min_version": "three"}, "cmake_min_version is 'three'; allowed: a version like 3.13"),
    ("openmpi", {"openmpi_source_version": "4.1"}, "openmpi_source_version is '4.1'; allowed: a release like 4.1.6"),
]


@pytest.mark.parametrize("role,extra,message", CASES, ids=[f"{r}-{next(iter(e))}" for r, e, _ in CASES])
def test_a_role_alone_refuses_against_its_rules(tmp_path, role, extra, message):
    proc = run_role(tmp_path, role, {"h1": host_facts("debian12", "h1")}, extra_vars=extra)
    assert proc.returncode != 0 and f"host h1: {message}" in proc.stdout, proc.stdout[-3000:]


@pytest.mark.parametrize("role", ["horovod", "cmake", "openmpi"])
def test_a_role_alone_plans_with_its_defaults(tmp_path, role):
    pin = {"python_env_torch_version": "2.13.0"} if role == "horovod" else {}  # what horovod checks torch against
    facts = host_facts("debian12", "h1", extra={"python_version": "3.11.2"})
    proc = run_role(tmp_path, role, {"h1": facts}, extra_vars=pin)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert plans(proc)["h1"]["action"], plans(proc)
