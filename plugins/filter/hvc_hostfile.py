# -*- coding: utf-8 -*-
# Apache-2.0
"""The hosts and slots of a hostfile, read once for the check (world.yml, groups.yml) and for `horovod-cluster run`
(src/horovod_cluster/job.py loads this file): the one reading of the format.

A line is `host [slots=N]` as horovodrun and mpirun take it; `#` starts a comment, and a host without slots= has
one slot, as in horovodrun. (job.py's check_hostfile refuses a user's hostfile that is not of this form, with
hostfile_line and line_slots.)
"""
from __future__ import annotations

import re

_SLOTS = re.compile(r"\Aslots\s*=\s*([0-9]+)\Z")


def hostfile_line(line):
    """(host, the rest) of one line, its comment dropped; None where the line names no host."""
    words = str(line).split("#", 1)[0].split(None, 1)
    return (words[0], words[1].strip() if len(words) > 1 else "") if words else None


def line_slots(rest):
    """N of the rest of a line, `slots=N`; 1 where there is no rest, None where it is anything else."""
    if not rest:
        return 1
    match = _SLOTS.match(rest)
    return int(match.group(1)) if match else None


def hostfile_slots(text):
    """[[host, slots], ...] in the file's order (one slot where the rest of a line is not slots=N)."""
    entries = filter(None, map(hostfile_line, str(text or "").splitlines()))
    read = ((host, line_slots(rest)) for host, rest in entries)
    return [[host, 1 if slots is None else slots] for host, slots in read]


class FilterModule(object):
    def filters(self):
        return {"hvc_hostfile_slots": hostfile_slots}
