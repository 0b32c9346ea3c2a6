"""The wheelhouse fill's choices (plugins/filter/python_env_fill.py): how pip runs per set and what each set's
download came to."""
from __future__ import annotations

import python_env_fill as fill

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
