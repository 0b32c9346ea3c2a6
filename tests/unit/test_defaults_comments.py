"""One place for each rule: what an option is, its forms and why its default is what it is live in the
role's meta/argument_specs.yml (the description `ansible-doc -t role` shows); defaults/main.yml keeps the
values, each with at most a one-line comment. A run of two or more comment lines (a blank line ends a
run) means a description is growing in the wrong file."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEFAULTS = sorted((REPO / "roles").glob("*/defaults/main.yml"))


def comment_runs(text: str):
    """(first line number, length) of each run of two or more consecutive comment lines."""
    runs, start, length = [], 0, 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            if length == 0:
                start = number
            length += 1
            continue
        if length >= 2:
            runs.append((start, length))
        length = 0
    if length >= 2:
        runs.append((start, length))
    return runs


def test_comment_runs_found():
    text = "---\n# one\na: 1\n# two\n# lines\nb: 2\n\n# x\n\n# y\nc: 3\n  # indented\n  # too\n"
    assert comment_runs(text) == [(4, 2), (12, 2)]


def test_there_are_defaults_to_check():
    assert DEFAULTS


@pytest.mark.parametrize("defaults_file", DEFAULTS, ids=lambda p: p.parent.parent.name)
def test_defaults_comments_are_one_line(defaults_file):
    runs = comment_runs(defaults_file.read_text(encoding="utf-8"))
    where = [f"{defaults_file.relative_to(REPO)}:{start}: {length} comment lines" for start, length in runs]
    assert not where, (
        "defaults/main.yml keeps at most one comment line per value; move the rest into the option's "
        "description in meta/argument_specs.yml:\n" + "\n".join(where)
    )
