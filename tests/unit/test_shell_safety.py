"""Lint-level guard of issue 15: no variable reaches a shell unquoted.

Every YAML task file under roles/, playbooks/ and molecule/ is parsed (yaml.safe_load; plays, blocks,
rescue and always are walked, as is any nesting). A task fails the test when it is

- `shell`, `raw`, `script`, or `command` given a string (free form or `cmd:`), and a Jinja expression in
  that string is anything but `<expr> | quote` at its top level (parsed with Jinja itself, so
  `a if c else b | quote` and `x | quote ~ '/bin'` do not pass); a `{% ... %}` statement in such a string
  fails too (it can emit unquoted text);
- any of them with an `executable:` that holds Jinja, unless it is `<expr> | quote` and every variable in
  it is validated by its role's decide step (VALIDATED_EXECUTABLE_VARS, checked against decide.yml or the
  role's plan filter that decide.yml calls).

`command` with `argv:` passes: no shell, no word splitting. Shell-script templates (`*.sh.j2`, sourced
by login shells) get the same rule, with the few expressions that cannot carry shell syntax listed
in SAFE_TEMPLATE_EXPRESSIONS with the reason.
"""
from __future__ import annotations

import re
from pathlib import Path

import jinja2
import jinja2.nodes as nodes
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCANNED = ("roles", "playbooks", "molecule")
# YAML that holds data, not tasks (defaults, vars, argument specs, molecule's own config).
DATA_PARTS = {"defaults", "vars", "meta"}

SHELL_MODULES = {"shell", "raw"}
STRING_MODULES = {"command", "script"}  # a string is split by shlex (command) or run by the remote shell (script)
PREFIXES = ("", "ansible.builtin.", "ansible.legacy.")
MODULES = {prefix + name: name for prefix in PREFIXES for name in SHELL_MODULES | STRING_MODULES}

# Variables allowed in an `executable:` (joined unquoted into the remote command line by the script
# action): each must be checked by its role's decide step against a strict path pattern.
VALIDATED_EXECUTABLE_VARS = {"cuda_toolkit_pip_prefix": "cuda_toolkit"}

# Expressions allowed unquoted in shell-script templates, with the reason.
SAFE_TEMPLATE_EXPRESSIONS = {
    "ansible_managed": "Ansible's own one-line header, in a comment",
    "cuda_toolkit_version": "in a comment; decide.yml refuses anything but MAJOR.MINOR digits",
    "__cuda_toolkit_plan['method']": "in a comment; decide.yml allows only nvidia_repo, distro, pip",
}

_JINJA = jinja2.Environment()
_EXPRESSION = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)


class _Loader(yaml.SafeLoader):
    """safe_load that tolerates Ansible's tags (!unsafe, !vault) as plain values."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node)
                              if isinstance(node, yaml.ScalarNode) else None)


def task_files() -> list[Path]:
    files = []
    for top in SCANNED:
        for path in sorted((REPO / top).rglob("*.y*ml")):
            rel = path.relative_to(REPO)
            if path.suffix in (".yml", ".yaml") and not DATA_PARTS & set(rel.parts[:-1]) \
                    and path.name not in ("molecule.yml", "requirements.yml"):
                files.append(path)
    return files


def walk_tasks(node):
    """Every mapping that calls one of MODULES, wherever it is nested (plays, blocks, rescue, always)."""
    if isinstance(node, list):
        for item in node:
            yield from walk_tasks(item)
    elif isinstance(node, dict):
        if any(key in MODULES for key in node):
            yield node
        for value in node.values():
            if isinstance(value, (list, dict)):
                yield from walk_tasks(value)


def is_quoted(expr: str) -> bool:
    """`expr` is `<anything> | quote` at its top level (Jinja's own parse, so precedence counts)."""
    parsed = _JINJA.parse("{{ " + expr.strip() + " }}").body[0].nodes[0]
    return isinstance(parsed, nodes.Filter) and parsed.name == "quote"


def unquoted_expressions(text: str) -> list[str]:
    """The Jinja expressions (and statements) in a command string that are not `... | quote` at top level."""
    bad = [f"{{% {stmt.strip()} %}}" for stmt in re.findall(r"\{%-?(.*?)-?%\}", text, re.S)]
    bad += ["{{ " + " ".join(expr.split()) + " }}" for expr in _EXPRESSION.findall(text) if not is_quoted(expr)]
    return bad


def referenced_names(expr: str) -> set[str]:
    parsed = _JINJA.parse("{{ " + expr + " }}")
    return {n.name for n in parsed.find_all(nodes.Name)}


def walk_tasks_all(node):
    """Every mapping, wherever it is nested."""
    if isinstance(node, list):
        for item in node:
            yield from walk_tasks_all(item)
    elif isinstance(node, dict):
        yield node
        for value in node.values():
            if isinstance(value, (list, dict)):
                yield from walk_tasks_all(value)


def _decide_validates(role: str, var: str) -> bool:
    """decide.yml of the role holds an assert whose condition matches the variable against a pattern."""
    decide = yaml.load((REPO / "roles" / role / "tasks" / "decide.yml").read_text(encoding="utf-8"), Loader=_Loader)
    for task in walk_tasks_all(decide):
        check = task.get("ansible.builtin.assert") or task.get("assert")
        if isinstance(check, dict):
            that = check.get("that")
            text = " ".join(that) if isinstance(that, list) else str(that)
            if var in text and re.search(r"\bis (regex|match|search)\b|\|\s*regex_search", text):
                return True
    return _plan_filter_validates(role, var)


def _plan_filter_validates(role: str, var: str) -> bool:
    """Or decide.yml hands the variable to the role's plan filter (plugins/filter/<role>_plan.py), where a line
    naming it calls a function that matches the value against a pattern (re.search or re.match)."""
    plugin = REPO / "plugins" / "filter" / f"{role}_plan.py"
    decide = (REPO / "roles" / role / "tasks" / "decide.yml").read_text(encoding="utf-8")
    if not plugin.is_file() or f"{role}_plan(" not in decide or "{{ %s }}" % var not in decide:
        return False
    source = plugin.read_text(encoding="utf-8")
    bodies = {m.group(1): m.group(0) for m in re.finditer(r"^def (\w+)\(.*?(?=^def |^class |\Z)", source, re.M | re.S)}
    calls = {name for line in source.splitlines() if f'"{var}"' in line for name in re.findall(r"(\w+)\(", line)}
    return any(re.search(r"\bre\.(search|match|fullmatch)\(", bodies.get(name, "")) for name in calls)


def violations_in(task: dict) -> list[str]:
    key = next(k for k in task if k in MODULES)
    module, value = MODULES[key], task[key]
    args = dict(task.get("args") or {})
    if isinstance(value, dict):
        args.update(value)
        command = args.get("cmd", args.get("_raw_params"))
    else:
        command = value
    found = []
    if isinstance(command, str) and (module in SHELL_MODULES or module in STRING_MODULES):
        found += [f"unquoted {expr}" for expr in unquoted_expressions(command)]
    executable = args.get("executable")
    if isinstance(executable, str) and ("{{" in executable or "{%" in executable):
        found += [f"executable: unquoted {expr}" for expr in unquoted_expressions(executable)]
        for expr in _EXPRESSION.findall(executable):
            for name in referenced_names(expr.strip()):
                role = VALIDATED_EXECUTABLE_VARS.get(name)
                if role is None or not _decide_validates(role, name):
                    found.append(f"executable: {name} is not validated by a role's decide step")
    return [f"{task.get('name', '<unnamed>')} ({key}): {v}" for v in found]


def all_violations() -> dict[str, list[str]]:
    report = {}
    for path in task_files():
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
        found = [v for task in walk_tasks(data) for v in violations_in(task)]
        if found:
            report[str(path.relative_to(REPO))] = found
    return report


def test_the_scan_sees_the_command_tasks():
    """The walker finds the project's command tasks (a broken walker would pass everything)."""
    tasks = [t for p in task_files() for t in walk_tasks(yaml.load(p.read_text(encoding="utf-8"), Loader=_Loader))]
    names = {t.get("name") for t in tasks}
    assert len(tasks) >= 40
    # one inside a block, one inside a rescue, one in a molecule play
    assert "Horovod | Compile with pip wheel" in names
    assert "Horovod | Read the failed build's errors" in names
    assert "Compile the allreduce test program with mpicc" in names


def test_no_expression_reaches_a_shell_unquoted():
    report = all_violations()
    assert report == {}, "\n".join(f"{path}: {v}" for path, found in report.items() for v in found)


@pytest.mark.parametrize(("task", "bad"), [
    ({"ansible.builtin.shell": 'cat "{{ path }}" > out'}, True),
    ({"ansible.builtin.shell": {"cmd": "cat {{ path | quote }} > {{ out | quote }}"}}, False),
    ({"shell": "echo {{ a if c else b | quote }}"}, True),
    ({"shell": "echo {{ (a if c else b) | quote }}"}, False),
    ({"shell": "echo {{ x | quote ~ '/bin' }}"}, True),
    ({"shell": "{% for x in xs %}{{ x | quote }}{% endfor %}"}, True),
    ({"ansible.builtin.command": "{{ nvcc }} --version"}, True),
    ({"ansible.builtin.command": {"argv": ["{{ nvcc }}", "--version"]}}, False),
    ({"ansible.builtin.command": "ldconfig"}, False),
    ({"ansible.builtin.raw": "echo {{ x }}"}, True),
    ({"ansible.builtin.script": {"cmd": "s.py {{ a | quote }}", "executable": "{{ p }}/bin/python"}}, True),
    ({"ansible.builtin.script": {"cmd": "s.py", "executable": "{{ (p ~ '/bin/python') | quote }}"}}, True),
    ({"ansible.builtin.script": {"cmd": "s.py",
                                 "executable": "{{ (cuda_toolkit_pip_prefix ~ '/venv/bin/python') | quote }}"}}, False),
    ({"ansible.builtin.command": "x", "args": {"executable": "{{ p }}"}}, True),
])
def test_the_rule_itself(task, bad):
    assert bool(violations_in({"name": "t", **task})) is bad, violations_in({"name": "t", **task})


def test_shell_templates_quote_every_value():
    """Shell scripts rendered from templates (profile.d) quote each value, or list why it need not."""
    templates = sorted((REPO / "roles").glob("*/templates/*.sh.j2"))
    assert REPO / "roles/cuda_toolkit/templates/cuda.sh.j2" in templates
    report = [f"{path.relative_to(REPO)}: {{{{ {' '.join(expr.split())} }}}}"
              for path in templates for expr in _EXPRESSION.findall(path.read_text(encoding="utf-8"))
              if not is_quoted(expr) and " ".join(expr.split()) not in SAFE_TEMPLATE_EXPRESSIONS]
    assert report == [], "\n".join(report)
