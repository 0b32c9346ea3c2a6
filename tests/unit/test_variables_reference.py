"""docs/variables.md is what tests/variables.py makes of the roles' argument specs and defaults now."""
from __future__ import annotations

import shutil

import variables
import yaml
from ansible_run import REPO


def test_variables_reference_is_current():
    assert (REPO / "docs" / "variables.md").read_text() == variables.markdown(), \
        "stale: run python tests/variables.py > docs/variables.md"


def test_every_role_and_every_option_is_listed():
    text = (REPO / "docs" / "variables.md").read_text()
    roles = sorted(p.name for p in (REPO / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())
    assert sorted(variables.role_order()) == roles
    for role in roles:
        specs = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
        assert f"\n## {role}\n" in text
        for name in (specs.get("main") or {}).get("options") or {}:
            assert f"| `{name}` |" in text, (role, name)


def test_a_changed_default_makes_the_copy_stale(tmp_path, monkeypatch):
    """The check can fail: the same generator over a role whose default changed gives another text."""
    before = variables.markdown()
    roles = tmp_path / "roles"
    shutil.copytree(REPO / "roles", roles, symlinks=True)
    defaults = roles / "cmake" / "defaults" / "main.yml"
    defaults.write_text(defaults.read_text().replace("cmake_method: auto", "cmake_method: pip", 1))
    monkeypatch.setattr(variables, "ROLES", roles)
    after = variables.markdown()
    assert after != before and "| `cmake_method` |" in after and "| `pip` |" in after
