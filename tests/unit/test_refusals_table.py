"""docs/refusals.md is what tests/refusals.py makes of the tests' case tables now, and docs/using.md's count matches."""
from __future__ import annotations

import re

import refusals
from ansible_run import REPO


def test_refusals_table_is_current():
    assert (REPO / "docs" / "refusals.md").read_text() == refusals.markdown(), \
        "stale: run python tests/refusals.py > docs/refusals.md"


def test_using_guide_states_the_count():
    """docs/using.md's "Bad input" section states the count (the README's, before it became a front page)."""
    count = len(refusals.rows())
    assert count >= 50
    text = " ".join((REPO / "docs" / "using.md").read_text().split())
    assert re.search(rf"\[refusals\.md\]\(refusals\.md\) lists the {count} refusals", text), count
