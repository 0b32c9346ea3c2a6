"""hvc_plain_data: the roles publish their results without ansible-core's origin tags (a third of the
controller's memory per host in a 200-host plan), and the data stays equal."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hvc_plain_data import plain_data

REPO = Path(__file__).resolve().parents[2]


def test_plain_builtins_come_back_equal_and_plain():
    class Tagged(str):
        """Stands in for ansible-core's tagged str (a str subclass)."""

    value = {Tagged("plan"): {"action": Tagged("build"), "slots": 4, "ok": True, "ratio": 0.5, "none": None,
                              "list": (Tagged("a"), 1)}}
    plain = plain_data(value)
    assert plain == {"plan": {"action": "build", "slots": 4, "ok": True, "ratio": 0.5, "none": None,
                              "list": ["a", 1]}}
    kinds = {type(k) for k in plain} | {type(v) for v in plain["plan"].values()} | {type(plain["plan"]["list"][0])}
    assert kinds == {str, int, bool, float, type(None), list}
    assert plain["plan"]["ok"] is True


def test_a_templated_value_loses_its_tags_in_ansible():
    """The real thing: ansible-core tags what it loads from YAML (a role's defaults, a task's set_fact);
    after the filter no nested value is tagged."""
    script = r'''
import json
from ansible.parsing.yaml.loader import AnsibleLoader
from hvc_plain_data import plain_data
data = AnsibleLoader("x:\n  a: text\n  b: [one, 2]\n").get_single_data()
def kinds(v, out):
    out.add(type(v).__name__)
    for item in (v.values() if isinstance(v, dict) else v if isinstance(v, list) else []):
        kinds(item, out)
    return out
print(json.dumps({"before": sorted(kinds(data["x"], set())), "after": sorted(kinds(plain_data(data["x"]), set()))}))
'''
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO / "plugins" / "filter")}).stdout
    kinds = json.loads(out)
    assert any(k.startswith("_AnsibleTagged") for k in kinds["before"]), kinds
    assert kinds["after"] == ["dict", "int", "list", "str"], kinds
