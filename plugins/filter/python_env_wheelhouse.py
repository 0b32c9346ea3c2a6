# -*- coding: utf-8 -*-
# Apache-2.0
"""The controller wheelhouse as pure functions: filling it (roles/python_env/tasks/wheelhouse-fill.yml: how pip runs
for each wheel set, what each set's download came to after its one or two tries) and sending a host its wheels
(wheelhouse.yml: which ones it lacks)."""
from __future__ import annotations

import os
import re

# pip's lines that say nothing about why a download failed (a find-links folder it ignores, its own retries)
_NOISE = re.compile(r"is ignored|Retrying")


def python_env_fill_runners(fills, controller_platform, python, script):
    """{set folder: the argv before pip's}. A set of the controller's own platform ("System machine X.Y", as the
    controller's Python printed it) runs `python -m pip`; another platform's runs files/pip_for_platform.py with
    the set's [system, machine, X.Y], since pip evaluates dependency markers against the Python it runs in,
    whatever --platform says (pypa/pip#4304)."""
    here = str(controller_platform or "").split()
    return {fill["dir"]: ([python, "-m"] if list(fill["target"]) == here else [python, script, *fill["target"]])
            for fill in fills or []}


def python_env_fill_outcomes(first, second=None):
    """[{fill, ok, why, out}] per wheel set, from the registered results of the first pip download and of the
    second try (with the torch index; only sets whose first failed and that have a second attempt): the last try
    decides; `why` is its last three lines of stderr that say something, `out` its stdout (the marker's wheels)."""
    retried = [result for result in (second or {}).get("results") or [] if "item" in result]
    outcomes = []
    for result in (first or {}).get("results") or []:
        last = next((again for again in retried if again["item"].get("item") == result["item"]), result)
        why = [line for line in last.get("stderr_lines") or [] if not _NOISE.search(line)]
        outcomes.append({"fill": result["item"], "ok": last.get("rc") == 0, "why": " / ".join(why[-3:]),
                         "out": last.get("stdout") or ""})
    return outcomes


def python_env_wheels_to_send(wheels, here, there):
    """The wheels of `wheels` the host lacks or holds changed: `here` and `there` are ansible.builtin.find's files
    (sha256 checksums) on the controller and on the host. A wheel the host holds with the controller's checksum and
    the mode the copy sets (0644) is not sent again."""
    sums = {os.path.basename(found["path"]): found.get("checksum") for found in here or []}
    same = {os.path.basename(found["path"]) for found in there or []
            if found.get("mode") == "0644" and sums.get(os.path.basename(found["path"])) == found.get("checksum")}
    return [wheel for wheel in wheels or [] if wheel not in same]


class FilterModule(object):
    def filters(self):
        return {"python_env_fill_runners": python_env_fill_runners,
                "python_env_fill_outcomes": python_env_fill_outcomes,
                "python_env_wheels_to_send": python_env_wheels_to_send}
