"""tests/ on sys.path, so unit and integration tests import the one ansible_run module.

pytest's default (prepend) import mode would add this folder by itself when it loads this conftest;
saying it here keeps the import working under any import mode.
"""
import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
