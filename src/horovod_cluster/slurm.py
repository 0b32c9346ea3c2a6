"""Slurm allocations as horovodrun hostfiles: pure functions over the variables Slurm sets in a job.

Inside `sbatch`/`salloc`, Slurm names the allocated nodes in SLURM_JOB_NODELIST (older name
SLURM_NODELIST) as a hostlist expression (`node[01-04,07]`, `rack[1-2]-node[01-02]`, `a1,b[3-4],c`)
and the tasks of each node, in the same order, in SLURM_TASKS_PER_NODE (`2(x3),1`: two tasks on
each of three nodes, then one). `allocation_hostfile` turns them into the `host slots=N` lines that
`horovodrun --hostfile` reads, so a training job started inside an allocation uses exactly the
nodes and tasks Slurm gave it.

The syntax follows Slurm's own parser (src/common/hostlist.c): comma-separated entries, commas
inside brackets belong to the bracket; each bracket holds comma-separated numbers or `lo-hi`
ranges, zero-padded to the width of `lo`; several brackets in one name expand left to right (the
leftmost varies slowest); text may follow the last bracket. Bad syntax raises ValueError naming
the text. Host names are limited to letters, digits and `. _ -` (they go into a hostfile and
reach ssh), never starting with `-`.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

# Guard against an expression that would expand to millions of names ("a[0-999999999]").
MAX_HOSTS = 100_000

_NAME_TEXT = re.compile(r"[A-Za-z0-9._-]*\Z")
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?\Z")
_TASKS = re.compile(r"([0-9]+)(?:\(x([0-9]+)\))?\Z")


def _split_top_level(text: str) -> list[str]:
    """Split at the commas outside brackets; brackets must pair up and not nest."""
    entries, current, depth = [], [], 0
    for char in text:
        if char == "[":
            if depth:
                raise ValueError(f"bad Slurm hostlist {text!r}: nested '['")
            depth = 1
        elif char == "]":
            if not depth:
                raise ValueError(f"bad Slurm hostlist {text!r}: ']' without '['")
            depth = 0
        elif char == "," and not depth:
            entries.append("".join(current))
            current = []
            continue
        current.append(char)
    if depth:
        raise ValueError(f"bad Slurm hostlist {text!r}: '[' without ']'")
    entries.append("".join(current))
    return entries


def _bracket_numbers(body: str, text: str) -> list[str]:
    """`01-03,7` -> ['01', '02', '03', '7'] (each range zero-padded to the width of its low end)."""
    numbers: list[str] = []
    for part in body.split(","):
        found = _RANGE.match(part)
        if not found:
            raise ValueError(f"bad Slurm hostlist {text!r}: {part!r} in [{body}] is not a number or lo-hi range")
        low, high = found.group(1), found.group(2) or found.group(1)
        if int(low) > int(high):
            raise ValueError(f"bad Slurm hostlist {text!r}: range {part!r} runs backwards")
        if len(numbers) + int(high) - int(low) + 1 > MAX_HOSTS:
            raise ValueError(f"bad Slurm hostlist {text!r}: more than {MAX_HOSTS} names")
        numbers += [str(n).zfill(len(low)) for n in range(int(low), int(high) + 1)]
    return numbers


def _expand_entry(entry: str, text: str) -> list[str]:
    """One comma-free entry, e.g. `rack[1-2]-node[01-02]`, into its names."""
    pieces = re.split(r"\[([^\]]*)\]", entry)  # text, bracket body, text, ..., text
    names = [""]
    for index, piece in enumerate(pieces):
        if index % 2:
            choices = _bracket_numbers(piece, text)
        else:
            if not _NAME_TEXT.match(piece):
                bad = sorted(set(re.sub(r"[A-Za-z0-9._-]", "", piece)))
                raise ValueError(f"bad Slurm hostlist {text!r}: {''.join(bad)!r} in {entry!r} is not allowed in a "
                                 "host name (letters, digits and . _ -)")
            choices = [piece]
        if len(names) * len(choices) > MAX_HOSTS:
            raise ValueError(f"bad Slurm hostlist {text!r}: more than {MAX_HOSTS} names")
        names = [name + choice for name in names for choice in choices]
    return names


def expand_nodelist(text: str) -> list[str]:
    """Expand a Slurm hostlist expression (SLURM_JOB_NODELIST) into host names, in Slurm's order.

    >>> expand_nodelist("node[01-03,07]")
    ['node01', 'node02', 'node03', 'node07']
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"bad Slurm hostlist {text!r}: empty")
    names: list[str] = []
    for entry in _split_top_level(text.strip()):
        if not entry:
            raise ValueError(f"bad Slurm hostlist {text!r}: an empty entry")
        expanded = _expand_entry(entry, text)
        if any(not name or name.startswith("-") for name in expanded):
            raise ValueError(f"bad Slurm hostlist {text!r}: {entry!r} gives an empty name or one starting with '-'")
        names += expanded
        if len(names) > MAX_HOSTS:
            raise ValueError(f"bad Slurm hostlist {text!r}: more than {MAX_HOSTS} names")
    return names


def expand_tasks_per_node(text: str, count: int) -> list[int]:
    """Expand SLURM_TASKS_PER_NODE (`2(x3),1` -> [2, 2, 2, 1]); it must give `count` nodes.

    >>> expand_tasks_per_node("2(x3),1", 4)
    [2, 2, 2, 1]
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"bad SLURM_TASKS_PER_NODE {text!r}: empty")
    tasks: list[int] = []
    for part in text.strip().split(","):
        found = _TASKS.match(part)
        if not found:
            raise ValueError(f"bad SLURM_TASKS_PER_NODE {text!r}: {part!r} is not N or N(xM)")
        per_node, repeat = int(found.group(1)), int(found.group(2) or 1)
        if per_node < 1 or repeat < 1:
            raise ValueError(f"bad SLURM_TASKS_PER_NODE {text!r}: {part!r} counts zero")
        if len(tasks) + repeat > max(count, 0):
            raise ValueError(f"bad SLURM_TASKS_PER_NODE {text!r}: more nodes than the {count} of the node list")
        tasks += [per_node] * repeat
    if len(tasks) != count:
        raise ValueError(f"bad SLURM_TASKS_PER_NODE {text!r}: {len(tasks)} nodes, the node list has {count}")
    return tasks


def allocation_hostfile(environ: Mapping[str, str]) -> str | None:
    """The hostfile (`host slots=N` per line) of the Slurm allocation described by `environ`, or None outside
    one. Raises ValueError, naming the variable, when the allocation's variables are malformed or disagree."""
    nodes_var = next((name for name in ("SLURM_JOB_NODELIST", "SLURM_NODELIST") if environ.get(name)), None)
    if nodes_var is None:
        return None
    tasks_text = environ.get("SLURM_TASKS_PER_NODE")
    if not tasks_text:
        raise ValueError(f"{nodes_var} is set but SLURM_TASKS_PER_NODE is not: not a complete Slurm allocation")
    try:
        hosts = expand_nodelist(environ[nodes_var])
    except ValueError as err:
        raise ValueError(f"{nodes_var}: {err}") from None
    slots = expand_tasks_per_node(tasks_text, len(hosts))
    return "".join(f"{host} slots={n}\n" for host, n in zip(hosts, slots))
