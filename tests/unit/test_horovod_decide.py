"""horovod_decide (plugins/filter/horovod_decide.py): the horovod role's whole per-host decision, called directly
over recorded facts (tests/fixtures/facts): each refusal with its message, a plain CPU host and a GPU host."""
from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
import yaml

from horovod_decide import horovod_decide  # plugins/filter (tests/unit/conftest.py puts it on sys.path)
from horovod_wheels import horovod_wheel_manifest

REPO = Path(__file__).resolve().parents[2]
MATRIX = yaml.safe_load((REPO / "roles" / "horovod" / "vars" / "compat.yml").read_text())["horovod_compat_matrix"]
# the role's defaults as the play gives them (cluster_prefix /opt/horovod), torch pinned as inventories/lab does
VARS = {"horovod_version": "0.28.1", "horovod_source": "pypi", "horovod_source_path": "", "horovod_git_commit": "",
        "horovod_python": "/opt/horovod/venv/bin/python", "horovod_build_root": "/opt/horovod/build",
        "horovod_artifacts_dir": "/nonexistent/wheels", "horovod_frameworks": ["pytorch"],
        "horovod_controllers": ["mpi", "gloo"], "horovod_gpu_operations": "auto", "horovod_cuda_cc_list": [],
        "horovod_cuda_version": "", "horovod_cuda_home": "", "horovod_nccl_home": "", "horovod_nccl_link": "",
        "horovod_cmake": "", "horovod_make_jobs": 0, "horovod_build_env_overrides": {}, "horovod_allow_untested": False,
        "python_env_manager": "venv", "python_env_python_version": "", "python_env_torch_version": "2.13.0",
        "python_env_pip_packages": ""}
GPU_VARS = {"horovod_cuda_version": "13.0", "horovod_cuda_home": "/usr/local/cuda", "horovod_nccl_home": "/usr",
            "horovod_nccl_link": "SHARED"}
OPTIONS = {"force_rebuild": False, "share_wheels": True, "source": "pypi"}
WHEEL = "horovod-0.28.1-cp311-cp311-linux_x86_64.whl"


def facts(recorded: str) -> dict:
    """ansible_facts as plan.yml loads a recorded file (hvc_recorded_facts; Ansible drops the ansible_ prefix)."""
    data = json.loads((REPO / "tests" / "fixtures" / "facts" / f"{recorded}.json").read_text())
    return {key.removeprefix("ansible_"): value for key, value in data.items()}


def decide(recorded="cpu-debian12", probe=None, env=None, python_env=None, **variables):
    return horovod_decide({
        "host": recorded, "roles_dir": str(REPO / "roles"), "probe_stdout": json.dumps(probe) if probe else "",
        "env": env or {"probed": False, "exists": False}, "python_env": python_env or {}, "openmpi": {}, "cmake": {},
        "facts": facts(recorded), "vars": {**VARS, **variables}, "matrix": MATRIX,
        "role": {"log_dir": "/var/log", "become": True, "marker_name": ".horovod-platform-key.json",
                 "plan_options": OPTIONS}})


def test_a_plain_cpu_host_plans_a_build():
    got = decide()
    assert got["errors"] == [] and got["note"].startswith("compatible (known good: ")
    key = "hvd0.28.1-debian12-x86_64-py3.11-cpu-gpuopsnone-nompi-waitcv"
    assert got["platform_key"] == key and got["combo"]["pytorch"] == "2.13.0"
    assert got["cxx_standard"] == 20 and got["fixes"][0] == "cxx20"  # torch 2.13 needs C++20, the role patches it
    assert "HOROVOD_GPU_OPERATIONS" not in got["build_env"] and got["build_env"]["HOROVOD_WITH_PYTORCH"] == "1"
    assert got["state"] == {"platform_key": key, "needs": True, "build_candidate": True,
                            "reason": "horovod not installed", "rejected_wheels": [], "host": "cpu-debian12"}
    assert got["plan_extra"] == {"wheel_dir": f"/nonexistent/wheels/{key}",
                                 "marker": "/opt/horovod/venv/.horovod-platform-key.json", "fixes": got["fixes"],
                                 "cxx_standard": 20, "build_root": "/opt/horovod/build", "log_dir": "/var/log",
                                 "become": True, "build_env": got["build_env"],
                                 # what another host must share with it (the plan's job groups)
                                 "job": {"python": "3.11", "mpi_major": "", "gloo_transport": "", "gpu": False,
                                         "controllers": VARS["horovod_controllers"]}}


def test_a_gpu_host_builds_with_nccl_for_its_gpus():
    got = decide("gpu-ubuntu2404", **GPU_VARS)
    assert got["errors"] == []
    assert got["platform_key"] == "hvd0.28.1-ubuntu24-x86_64-py3.12-cuda13.0-sm80-gpuopsnccl-nompi-nodistutils-waitcv"
    env = got["build_env"]
    assert (env["HOROVOD_GPU_OPERATIONS"], env["HOROVOD_BUILD_CUDA_CC_LIST"], env["HOROVOD_NCCL_LINK"]) == \
        ("NCCL", "80", "SHARED")
    assert env["CUDA_HOME"] == env["HOROVOD_CUDA_HOME"] == "/usr/local/cuda" and env["MAKEFLAGS"] == "-j64"


def test_an_installed_horovod_of_this_key_needs_nothing():
    key = decide()["platform_key"]
    got = decide(probe={"python": "3.11.2", "frameworks": {"pytorch": "2.13.0"}, "horovod": "0.28.1",
                        "marker": {"platform_key": key.replace("-cpu-", "-pytorch2.13.0-cpu-")}},
                 env={"probed": True, "exists": True})
    assert got["errors"] == [] and got["state"]["needs"] is False, got["state"]


def _cache(tmp_path, key, manifest):
    folder = tmp_path / key
    folder.mkdir()
    with zipfile.ZipFile(folder / WHEEL, "w") as wheel:
        wheel.writestr("horovod/__init__.py", "")
    sha256 = hashlib.sha256((folder / WHEEL).read_bytes()).hexdigest() if manifest == "right" else "0" * 64
    (folder / f"{WHEEL}.sha256").write_text(horovod_wheel_manifest(sha256, str(folder / WHEEL)))
    return folder / WHEEL


def test_a_verified_cached_wheel_is_installed_and_a_bad_one_named(tmp_path):
    key = decide()["platform_key"]
    _cache(tmp_path, key, "right")
    cached = decide(horovod_artifacts_dir=str(tmp_path))["state"]
    assert (cached["needs"], cached["build_candidate"], cached["rejected_wheels"]) == (True, False, [])
    (tmp_path / key / f"{WHEEL}.sha256").write_text("0" * 64 + f"  {WHEEL}\n")
    rejected = decide(horovod_artifacts_dir=str(tmp_path))["state"]
    assert rejected["build_candidate"] is True
    assert rejected["rejected_wheels"][0]["reason"].endswith(f"differs from its manifest's {'0' * 64}")


REFUSED = {
    "version pattern": ({"horovod_version": "0.28.1; rm"}, "horovod_version is '0.28.1; rm'"),
    "git without a commit": ({"horovod_source": "git"},
                             "host cpu-debian12: horovod_git_commit is empty; allowed: a full 40-hex commit"),
    "path without a folder": ({"horovod_source": "path"},
                              "Bad horovod variables: horovod_source path needs horovod_source_path; "
                              "horovod_controllers a non-empty list; horovod_build_env_overrides a mapping (allowed "
                              "values: meta/argument_specs.yml). Got source=path source_path= controllers=['mpi', "
                              "'gloo']."),
    "no controllers": ({"horovod_controllers": []}, "Got source=pypi source_path= controllers=[]."),
    "overrides not a mapping": ({"horovod_build_env_overrides": ["X=1"]}, "Bad horovod variables: "),
    "python with a command": ({"horovod_python": "/opt/v$(touch /tmp/p)/bin/python"},
                              'horovod_python is "/opt/v$(touch /tmp/p)/bin/python"; expected an absolute path '
                              "of letters, digits and . _ - + /"),
    "build root with a newline": ({"horovod_build_root": "/var/tmp/hb\ntouch x"},
                                  'horovod_build_root is "/var/tmp/hb\\ntouch x"; expected an absolute path'),
    "env names": ({"horovod_build_env_overrides": {"HOROVOD_X;ls": "1", "ÜBER": "1", "OK_1": "$(free text)"}},
                  'horovod_build_env_overrides has the name(s) ["HOROVOD_X;ls", "ÜBER"]; expected environment '
                  "variable names: a letter or _, then letters, digits and _ (the values are free text)"),
    "torch unpinned": ({"python_env_torch_version": ""},
                       "horovod_frameworks lists pytorch without a version to check against the compatibility matrix; "
                       'allowed: for pytorch, python_env_torch_version pinned (e.g. "2.13.0") or an item torch==2.13.0 '
                       "in python_env_pip_packages; or drop it from horovod_frameworks"),
    "tensorflow unpinned": ({"horovod_frameworks": ["pytorch", "tensorflow"]},
                            "horovod_frameworks lists tensorflow without a version to check against the "
                            "compatibility matrix; allowed: for tensorflow, an item tensorflow==2.15.1 in "
                            "python_env_pip_packages; or drop it from horovod_frameworks"),
    "known-bad combination": ({"python_env_torch_version": "9.9.9"},
                              "Refused combination: [torch-newer-than-tested] horovod 0.28.1 with torch 9.9.9"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refused_naming_the_variable(case):
    variables, message = REFUSED[case]
    errors = decide(**variables)["errors"]
    assert len(errors) == 1 and message in errors[0], errors
    assert "\n" not in errors[0]  # one line: a newline in a value is shown as \n


def test_every_bad_variable_is_named_at_once():
    errors = decide(horovod_python="relative/python", horovod_build_root="/b;x")["errors"]
    assert [e.split(" is ")[0] for e in errors] == ["horovod_python", "horovod_build_root"]


def test_frameworks_the_environment_lacks_are_refused():
    got = decide(probe={"python": "3.11.2", "frameworks": {"pytorch": "2.13.0", "tensorflow": None}},
                 env={"probed": True, "exists": True}, horovod_frameworks=["pytorch", "tensorflow"])
    assert got["errors"] == ["horovod_frameworks=['pytorch', 'tensorflow'] but the environment "
                             "/opt/horovod/venv/bin/python lacks ['tensorflow']: install them first "
                             "(python_env_torch_version / python_env_pip_packages) or drop them from "
                             "horovod_frameworks."]


def test_an_environment_to_ask_is_not_refused_for_an_unpinned_framework():
    """The probe ran (apply), or horovod_python is the user's own: the rollout asks the environment instead."""
    probed = decide(env={"probed": True, "exists": False}, python_env_torch_version="")
    own = decide(python_env={"python": "/opt/horovod/venv/bin/python3.11"}, python_env_torch_version="")
    assert probed["errors"] == own["errors"] == []
    mine = decide(python_env={"python": "/opt/horovod/venv/bin/python"}, python_env_torch_version="")
    assert mine["errors"][0].startswith("horovod_frameworks lists pytorch without a version")


def test_untested_allowed_as_a_bool_word():
    assert decide(python_env_torch_version="9.9.9", horovod_allow_untested="yes")["errors"] == []
    assert decide(python_env_torch_version="9.9.9", horovod_allow_untested="no")["errors"]
