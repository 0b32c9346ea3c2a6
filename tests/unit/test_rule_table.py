"""Each variable's allowed values live in one place, its role's meta/argument_specs.yml: no task, vars file,
plugin or default writes a choice list again (preflight reads them from the specs: hvc_spec_choices)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from hvc_settings import hvc_spec_choices  # plugins/filter (tests/unit/conftest.py puts it on sys.path)

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("roles", "playbooks", "plugins", "src", "inventories")
LIST = re.compile(r"\[([^\[\]\n]*)\]")


def _scalar_choices() -> dict[frozenset, str]:
    """{allowed values: variable} of the str options (a list option's choices are also its natural default)."""
    found = {}
    for path in (REPO / "roles").glob("*/meta/argument_specs.yml"):
        for entry in yaml.safe_load(path.read_text())["argument_specs"].values():
            for name, spec in (entry.get("options") or {}).items():
                if spec.get("choices") and spec.get("type", "str") == "str" and len(spec["choices"]) > 1:
                    found[frozenset(map(str, spec["choices"]))] = name
    return found


def _lists(path: Path):
    """Every flow list ([a, 'b']) of the file's text and every block list of its YAML, as sets of strings."""
    text = path.read_text(errors="replace")
    for match in LIST.finditer(text):
        yield text.count("\n", 0, match.start()) + 1, frozenset(
            item.strip().strip("'\"") for item in match.group(1).split(",") if item.strip())
    if path.suffix == ".yml":
        stack = [yaml.safe_load(text)]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                stack += node.values()
            elif isinstance(node, list):
                if all(isinstance(item, (str, int)) for item in node):
                    yield 0, frozenset(map(str, node))
                stack += node


def test_no_choice_list_outside_the_specs():
    choices = _scalar_choices()
    assert len(choices) >= 10
    files = [p for top in SOURCES for p in (REPO / top).rglob("*")
             if p.is_file() and p.suffix in (".yml", ".py", ".j2") and p.name != "argument_specs.yml"]
    again = [f"{p.relative_to(REPO)}:{line}: {choices[items]}" for p in files
             for line, items in _lists(p) if items in choices]
    assert again == []


def test_preflight_checks_every_choice_of_the_specs():
    found = hvc_spec_choices(str(REPO / "roles"))
    assert found["horovod_frameworks"] == ["pytorch", "tensorflow", "mxnet"]
    assert found["python_env_manager"] == ["venv", "conda"]
    assert set(_scalar_choices().values()) <= set(found)


def test_a_jobs_controllers_are_the_ones_horovod_can_be_built_with():
    # the CLI's --controller is written as a constant (reading the specs at import costs the CLI seconds)
    from horovod_cluster.job import CONTROLLERS

    assert sorted(CONTROLLERS) == sorted(hvc_spec_choices(str(REPO / "roles"))["horovod_controllers"])
