# -*- coding: utf-8 -*-
# Apache-2.0
"""The controller wheelhouse fill (roles/python_env/tasks/wheelhouse-fill.yml) as pure functions: how pip runs for
each wheel set, and what each set's download came to after its one or two tries."""
from __future__ import annotations

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


class FilterModule(object):
    def filters(self):
        return {"python_env_fill_runners": python_env_fill_runners,
                "python_env_fill_outcomes": python_env_fill_outcomes}
