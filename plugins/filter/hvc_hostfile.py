# -*- coding: utf-8 -*-
# Apache-2.0
"""The hosts and slots of a hostfile, read once for the check (world.yml, groups.yml) and for `horovod-cluster run`
(src/horovod_cluster/job.py loads this file): the one reading of the format.

A line is `host [slots=N]` as horovodrun and mpirun take it; `#` starts a comment, and a host without slots= has
one slot, as in horovodrun. (job.py's check_hostfile refuses a user's hostfile that is not of this form.)
"""
from __future__ import annotations

import re

_LINE = re.compile(r"^\s*([^#\s]+)(?:\s+slots\s*=\s*(\d+))?")


def hostfile_slots(text):
    """[[host, slots], ...] in the file's order."""
    found = (_LINE.match(line) for line in str(text or "").splitlines())
    return [[match.group(1), int(match.group(2) or 1)] for match in found if match]


class FilterModule(object):
    def filters(self):
        return {"hvc_hostfile_slots": hostfile_slots}
