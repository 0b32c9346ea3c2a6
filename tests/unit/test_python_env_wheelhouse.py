"""The controller wheelhouse's choices (plugins/filter/python_env_wheelhouse.py): how pip runs per set, what each
set's download came to, which wheels a host is sent."""
from __future__ import annotations

import python_env_wheelhouse as fill

PYTHON, SCRIPT = "/venv/bin/python3", "/roles/python_env/files/pip_for_platform.py"
OWN = {"dir": "/wh/linux-x86_64-py3.11-torch2.13.0-cpu", "target": ["Linux", "x86_64", "3.11"],
       "requirement": "torch==2.13.0", "attempts": [["pip", "download", "a"], ["pip", "download", "b"]]}
PI = {"dir": "/wh/linux-aarch64-py3.11-torch2.5.1-cpu", "target": ["Linux", "aarch64", "3.11"],
      "requirement": "torch==2.5.1", "attempts": [["pip", "download", "c"]]}


def test_the_controllers_own_platform_runs_pip_as_it_is_another_through_the_wrapper():
    runners = fill.python_env_fill_runners([OWN, PI], "Linux x86_64 3.11\n", PYTHON, SCRIPT)
    assert runners == {OWN["dir"]: [PYTHON, "-m"], PI["dir"]: [PYTHON, SCRIPT, "Linux", "aarch64", "3.11"]}
    # a controller on another Python: its own machine's set goes through the wrapper too
    assert fill.python_env_fill_runners([OWN], "Linux x86_64 3.13", PYTHON, SCRIPT)[OWN["dir"]][1] == SCRIPT
    assert fill.python_env_fill_runners([], "Linux x86_64 3.11", PYTHON, SCRIPT) == {}


def result(item, rc, stdout="", stderr_lines=()):
    return {"item": item, "rc": rc, "stdout": stdout, "stderr_lines": list(stderr_lines), "changed": rc == 0}


def test_the_last_try_decides_and_says_why():
    first = {"results": [
        result(OWN, 1, stderr_lines=["WARNING: Location 'file:///opt/pypi/simple/torch/' is ignored: ...",
                                     "ERROR: No matching distribution found for torch==2.13.0"]),
        result(PI, 1, stderr_lines=["WARNING: Retrying (Retry(total=4)) after connection broken",
                                    "ERROR: Could not find a version that satisfies torch==2.5.1",
                                    "ERROR: No matching distribution found for torch==2.5.1"])]}
    second = {"results": [result(first["results"][0], 0, stdout="Saved /wh/torch-2.13.0.whl\nSuccessfully")]}
    own, pi = fill.python_env_fill_outcomes(first, second)
    assert own == {"fill": OWN, "ok": True, "why": "", "out": "Saved /wh/torch-2.13.0.whl\nSuccessfully"}
    assert pi["fill"] == PI and pi["ok"] is False and pi["out"] == ""
    assert pi["why"] == ("ERROR: Could not find a version that satisfies torch==2.5.1 / "
                         "ERROR: No matching distribution found for torch==2.5.1")


def test_nothing_to_fill_and_a_skipped_second_try():
    # what Ansible registers for a loop over no items
    assert fill.python_env_fill_outcomes({"results": [], "skipped": True}, {"results": [], "skipped": True}) == []
    first = {"results": [result(OWN, 0, stdout="Saved x")]}
    assert fill.python_env_fill_outcomes(first, {"results": [], "skipped": True})[0]["ok"] is True
    # a command that could not start has no rc: not downloaded
    unstarted = {"results": [{"item": OWN, "failed": True, "msg": "no such file"}]}
    assert fill.python_env_fill_outcomes(unstarted)[0]["ok"] is False


def found(path, checksum, mode="0644"):
    """One file as ansible.builtin.find lists it with get_checksum."""
    return {"path": path, "checksum": checksum, "mode": mode, "size": 1}


def test_a_host_is_sent_the_wheels_it_lacks_or_holds_changed():
    wheels = ["numpy-2.1.0.whl", "torch-2.13.0.whl", "filelock-3.16.whl", "sympy-1.13.whl"]
    here = [found("/wh/set/" + name, "sum-" + name) for name in wheels] + [found("/wh/set/stray.whl", "s")]
    there = [found("/opt/wh/numpy-2.1.0.whl", "sum-numpy-2.1.0.whl"),     # the same: not sent
             found("/opt/wh/torch-2.13.0.whl", "truncated"),              # changed: sent
             found("/opt/wh/filelock-3.16.whl", "sum-filelock-3.16.whl", mode="0600")]  # another mode: sent
    assert fill.python_env_wheels_to_send(wheels, here, there) == ["torch-2.13.0.whl", "filelock-3.16.whl",
                                                                    "sympy-1.13.whl"]
    assert fill.python_env_wheels_to_send(wheels, here, [found("/opt/wh/" + w, "sum-" + w) for w in wheels]) == []
