"""Preflight refuses bad input before any change, with a message naming the host, the variable and
the allowed values. Platforms that are not here come from recorded facts (tests/fixtures/facts);
inventory mistakes also run for real against localhost (detect + decide, the whole role)."""
from __future__ import annotations

import pytest

from ansible_run import BAD_INVENTORY, PLAN_INVENTORY, local_inventory, plan_preflight, run_playbook

# (case, inventory, host, extra vars, expected fragments of the message)
RECORDED_CASES = [
    ("unsupported OS", BAD_INVENTORY, "bad-rocky9", {},
     ["host bad-rocky9", "OS 'rocky'", "preflight_supported_platforms",
      "ubuntu 22.04, 24.04, 26.04; debian 12, 13; raspios 12, 13; macos >= 13"]),
    ("unsupported Ubuntu version", BAD_INVENTORY, "bad-ubuntu2004", {},
     ["host bad-ubuntu2004", "ubuntu version '20.04'", "preflight_supported_platforms", "ubuntu 22.04, 24.04"]),
    # Debian 13 is supported (issue 46): refused here by a lab's own matrix that lists Debian 12 only
    ("unsupported Debian version", BAD_INVENTORY, "bad-debian13",
     {"preflight_supported_platforms": [{"os": "debian", "versions": ["12"]}]},
     ["host bad-debian13", "debian version '13'", "preflight_supported_platforms", "debian 12"]),
    ("unsupported arch", BAD_INVENTORY, "bad-riscv64", {},
     ["host bad-riscv64", "architecture 'riscv64'", "preflight_supported_archs", "x86_64, aarch64, armv7l"]),
    ("old macOS", BAD_INVENTORY, "bad-mac12", {},
     ["host bad-mac12", "macos 12.7.4", "older than the supported minimum 13", "preflight_supported_platforms"]),
    ("macOS without Homebrew", BAD_INVENTORY, "bad-mac-nobrew", {},
     ["host bad-mac-nobrew", "Homebrew was not found", "preflight_require_homebrew",
      "allowed: a Mac with Homebrew installed"]),
    ("GPU option on a host without GPU", PLAN_INVENTORY, "cpu-debian12", {"horovod_gpu_operations": "NCCL"},
     ["host cpu-debian12", "horovod_gpu_operations=NCCL", "needs an NVIDIA GPU", "anything but NCCL, MPI"]),
    ("CUDA option on a Mac", PLAN_INVENTORY, "mac-m2", {"python_env_torch_variant": "cuda"},
     ["host mac-m2", "python_env_torch_variant=cuda", "macOS does not have", "anything but cuda"]),
    ("GPU required on a Pi", PLAN_INVENTORY, "pi5-64", {"preflight_gpu_required": True},
     ["host pi5-64", "preflight_gpu_required is true", "no NVIDIA GPU was detected", "allowed on this host: false"]),
    ("unknown list value", PLAN_INVENTORY, "pi4-32", {"horovod_frameworks": ["pytorch", "caffe"]},
     ["host pi4-32", "horovod_frameworks item 2 is 'caffe'", "allowed values: pytorch, tensorflow, mxnet"]),
    # PyTorch publishes no armv7l wheels: the fixture's way out (its own wheel in the wheelhouse) taken away
    ("32-bit Pi OS needing torch without a wheel of the user's own", PLAN_INVENTORY, "pi4-32",
     {"python_env_wheelhouse": ""},
     ["host pi4-32", "(armv7l, a 32-bit userland) has no PyTorch wheels", "torch 2.13.0 cannot be installed",
      "allowed: the 64-bit Raspberry Pi OS (aarch64)", "a torch wheel of your own for armv7l in python_env_wheelhouse",
      "torch-2.13.0-<python tags>-linux_armv7l.whl"]),
    ("unknown scalar value", PLAN_INVENTORY, "gpu-ubuntu2404", {"python_env_manager": "pipenv"},
     ["host gpu-ubuntu2404", "python_env_manager is 'pipenv'", "allowed values: venv, conda"]),
    ("Ansible too old for the requirement", PLAN_INVENTORY, "cpu-debian12", {"preflight_min_ansible_version": "99.0"},
     ["host cpu-debian12", "older than preflight_min_ansible_version 99.0", "allowed: Ansible (ansible-core) >= 99.0"]),
    ("malformed Ansible version requirement", PLAN_INVENTORY, "cpu-debian12",
     {"preflight_min_ansible_version": "two"},
     ["host cpu-debian12", "preflight_min_ansible_version: 'two' is not a version", "allowed: dotted numbers"]),
]


@pytest.mark.parametrize("case,inventory,host,extra,fragments", RECORDED_CASES, ids=[c[0] for c in RECORDED_CASES])
def test_refused_over_recorded_facts(case, inventory, host, extra, fragments):
    run = plan_preflight(inventory, "--limit", host, extra_vars=extra)
    assert run.rc == 2, run.stderr
    assert run.stats[host]["failures"] == 1 and run.stats[host]["unreachable"] == 0
    assert run.changed() == 0
    message = run.failure_messages(host)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    # the plan still says why
    assert run.plan[host]["preflight"]["action"] == "fail"
    assert fragments[1] in run.plan[host]["preflight"]["reason"]


def test_duplicate_addresses_name_both_hosts(tmp_path):
    (tmp_path / "plan").mkdir()
    inv = tmp_path / "plan" / "dup.yml"
    inv.write_text(PLAN_INVENTORY.read_text().replace("ansible_host: pi4-32.invalid", "ansible_host: pi5-64.invalid"))
    (tmp_path / "facts").symlink_to(PLAN_INVENTORY.parent.parent / "facts")
    run = plan_preflight(inv)
    assert run.rc == 2
    for host, other in (("pi5-64", "pi4-32"), ("pi4-32", "pi5-64")):
        message = run.failure_messages(host)
        assert f"host {host}: ansible_host pi5-64.invalid is also the address of {other}" in message
        assert "allowed values: an address no other host of the play uses" in message
    for host in ("gpu-ubuntu2404", "mac-m2", "cpu-debian12"):
        assert run.stats[host]["failures"] == 0
    assert run.changed() == 0


def test_argument_spec_refuses_wrong_type():
    run = plan_preflight(PLAN_INVENTORY, "--limit", "cpu-debian12", extra_vars={"preflight_allow_unsupported": "maybe"})
    assert run.rc == 2
    assert "preflight_allow_unsupported" in run.failure_messages("cpu-debian12")


# The whole role for real on this machine (detect with the module, then decide): the findings name the
# variable, and nothing changed — every task reports changed=false, also in check mode.
LOCAL_CASES = [
    ({"horovod_gpu_operations": "MPI"}, ["horovod_gpu_operations=MPI", "needs an NVIDIA GPU"]),
    ({"horovod_controllers": ["gloo", "nccl"]}, ["horovod_controllers item 2 is 'nccl'",
                                                 "allowed values: mpi, gloo"]),
    ({"preflight_supported_archs": ["aarch64"]}, ["architecture 'x86_64'", "preflight_supported_archs", "aarch64"]),
    ({"preflight_min_python_version": "4.0"}, ["the host's Python", "preflight_min_python_version 4.0"]),
]


@pytest.mark.parametrize("check", [False, True], ids=["apply", "check-mode"])
@pytest.mark.parametrize("extra,fragments", LOCAL_CASES, ids=[next(iter(c[0])) for c in LOCAL_CASES])
def test_refused_on_a_real_host(tmp_path, extra, fragments, check):
    run = run_playbook("preflight.yml", local_inventory(tmp_path), *(["--check"] if check else []), extra_vars=extra)
    assert run.rc == 2
    message = run.failure_messages("localhost")
    assert "host localhost" in message
    for fragment in fragments:
        assert fragment in message, message
    assert run.changed() == 0
    assert not any(result.get("changed") for _, _, result in run.results())
