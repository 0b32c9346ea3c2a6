# -*- coding: utf-8 -*-
# Apache-2.0
"""`hvc_plain_data`: a value as plain data (dict, list, str, int, float, bool, None).

ansible-core 2.19 tags each templated string, number and container with where it came from (a
file, line and column): in memory a tagged value takes about three times the room of a plain one.
The roles publish their results (hvc_<role>) with set_fact, and the controller keeps every host's
results until the run ends; each worker Ansible forks for a host and task copies the controller's
page tables, so the controller's size is paid again at every fork (benchmarks/plan_scaleout.py
--fork-cost). A published result is data for the other roles and for `plan`, not a template: it
needs no origin. On older ansible-core (no tags) the filter returns an equal copy.
"""
from __future__ import annotations

from collections.abc import Mapping


def plain_data(value):
    if isinstance(value, Mapping):
        return {plain_data(key): plain_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(item) for item in value]
    # bool before int: bool is an int
    for kind in (bool, str, int, float):
        if isinstance(value, kind):
            return kind(value)
    return value


class FilterModule:
    """hvc_plain_data."""

    def filters(self):
        return {"hvc_plain_data": plain_data}
