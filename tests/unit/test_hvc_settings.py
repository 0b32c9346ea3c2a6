"""plugins/filter/hvc_settings.py as pure functions: values as written against the roles' argument specs."""
from __future__ import annotations

import pytest

import hvc_settings as hs
from ansible_run import REPO

ROLES = str(REPO / "roles")


@pytest.mark.parametrize("value,spec,why", [
    (2, {"type": "bool"}, "is the number 2; allowed: true or false"),
    ("ture", {"type": "bool"}, "is the string 'ture'; allowed: true or false"),
    (3.1, {"type": "str"}, "is the number 3.1 (YAML reads an unquoted 3.10"),
    ("pytorch", {"type": "list", "elements": "str"}, "is the string 'pytorch'; allowed: a list"),
    (["a", 8.6], {"type": "list", "elements": "str"}, "item 2 is the number 8.6"),
    ("x", {"type": "int"}, "allowed: a whole number"),
    ("svn", {"type": "str", "choices": ["pypi", "git"]}, "is 'svn'; allowed values: pypi, git"),
])
def test_type_error(value, spec, why):
    assert why in hs.type_error(value, spec)


@pytest.mark.parametrize("value,spec", [
    (True, {"type": "bool"}), ("yes", {"type": "bool"}), (1, {"type": "bool"}), ("3.11", {"type": "str"}),
    (12, {"type": "str"}), (["a"], {"type": "list", "elements": "str"}), ("4", {"type": "int"}), (None, {"type": "int"}),
])
def test_type_ok(value, spec):
    assert hs.type_error(value, spec) is None


@pytest.mark.parametrize("value,ok", [(1, True), ("30%", True), ("1,50%", True), ([2, "100%"], True), (0, False),
                                      ("abc", False), ("0%", False), ("101%", False), (True, False), ([], False)])
def test_serial(value, ok):
    assert (hs.serial_error(value) is None) is ok


def test_misspelt_name_and_known_names():
    found = hs.settings_findings({"horovod_verison": "0.28.1", "hvc_platform": {}, "my_own_thing": 1,
                                  "python_env_facts": {}}, "h", ROLES)
    assert found == {"errors": [], "checked": [], "warnings": [
        "host h: horovod_verison is not a variable of any role nor a project setting; did you mean horovod_version?"]}


def test_the_given_spec_variables_are_named_as_checked():
    """Preflight checks no choice again for these: each bad value is named once."""
    found = hs.settings_findings({"horovod_source": "svn", "my_own_thing": 1, "python_env_manager": "venv"}, "h", ROLES)
    assert found["checked"] == ["horovod_source", "python_env_manager"] and len(found["errors"]) == 1


def test_every_role_spec_is_read():
    specs = hs.load_specs(ROLES)
    for name in ("horovod_version", "python_env_manager", "hostfile_slots", "cmake_method", "cluster_serial",
                 "preflight_nvidia_smi"):
        assert name in specs
