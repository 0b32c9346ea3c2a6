"""Every role README is what tests/role_readmes.py makes of the role's specs now, hand-written blocks kept."""
from __future__ import annotations

import shutil

import role_readmes
import variables
from ansible_run import REPO


def test_every_role_has_a_readme():
    roles = sorted(p.name for p in (REPO / "roles").iterdir() if p.is_dir())
    assert role_readmes.roles() == roles
    assert [r for r in roles if not (REPO / "roles" / r / "README.md").is_file()] == []


def test_every_role_readme_is_current():
    names = role_readmes.stale()
    assert names == [], f"stale role READMEs ({', '.join(names)}): run {role_readmes.COMMAND}"


def test_a_changed_spec_makes_the_readme_stale_and_a_run_keeps_the_notes(tmp_path, monkeypatch):
    roles = tmp_path / "roles"
    shutil.copytree(REPO / "roles", roles, symlinks=True)
    monkeypatch.setattr(variables, "ROLES", roles)
    role_readmes.write()  # current, whatever the checkout's state
    specs = roles / "gloo" / "meta" / "argument_specs.yml"
    specs.write_text(specs.read_text().replace("description: ", "description: Changed. ", 1))
    assert role_readmes.stale() == ["gloo"]
    notes = role_readmes.hand_written((roles / "gloo" / "README.md").read_text())
    role_readmes.write()
    assert role_readmes.stale() == []
    text = (roles / "gloo" / "README.md").read_text()
    assert "Changed. " in text and role_readmes.hand_written(text) == notes and notes["notes"]
