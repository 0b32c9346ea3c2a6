"""The argument specs carry every option's real default (what `ansible-doc -t role` shows): for a role
variable, the value of the role's defaults/main.yml, exactly."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SPECS = sorted((REPO / "roles").glob("*/meta/argument_specs.yml"))
# Project-wide settings whose default the playbook computes from other results (described in the spec).
COMPUTED = {"cluster_plan_roles", "cluster_check_python"}


def _options(spec_file: Path):
    for entry, body in yaml.safe_load(spec_file.read_text())["argument_specs"].items():
        for name, spec in (body.get("options") or {}).items():
            yield entry, name, spec


@pytest.mark.parametrize("spec_file", SPECS, ids=lambda p: p.parent.parent.name)
def test_every_option_has_its_real_default(spec_file):
    defaults_file = spec_file.parent.parent / "defaults" / "main.yml"
    defaults = yaml.safe_load(defaults_file.read_text()) if defaults_file.is_file() else {}
    for entry, name, spec in _options(spec_file):
        if spec.get("required") or name in COMPUTED:
            continue
        assert "default" in spec, f"{entry}.{name}: no default in the spec"
        if name in (defaults or {}):
            assert spec["default"] == defaults[name], f"{entry}.{name}: spec and defaults/main.yml differ"
