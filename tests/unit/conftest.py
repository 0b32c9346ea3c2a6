"""Shared helpers of the unit tests.

Plugins are plain Python files under plugins/ (not an installed package): put their folders on
sys.path so a test can `import hvc_platform` (plugins/module_utils) or load a filter plugin.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"

for _sub in ("plugins/module_utils", "plugins/filter", "plugins/modules", "plugins/strategy"):
    _path = str(REPO / _sub)
    if _path not in sys.path:
        sys.path.insert(0, _path)


@pytest.fixture
def fixture_text():
    """Read a fixture file: fixture_text("os-release/ubuntu-24.04")."""

    def read(relative: str) -> str:
        return (FIXTURES / relative).read_text(encoding="utf-8")

    return read
