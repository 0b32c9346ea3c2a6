"""Every roles/<role>/README.md from one skeleton, generated from the role's meta/argument_specs.yml (entry
points, variables: the same table as docs/variables.md, tests/variables.py), meta/main.yml (platforms),
the set_fact tasks that publish hvc_<role> and the molecule scenarios that apply the role. What the specs
cannot say is hand-written between markers (<!-- notes: hand-written, kept by tests/role_readmes.py -->
... <!-- end notes -->, likewise `result` and `tests`), which a run keeps as it is;
tests/unit/test_role_readmes.py fails on a stale README.

    python tests/role_readmes.py            # rewrite every role's README
    python tests/role_readmes.py --check    # name the stale ones (exit 1), write nothing
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import variables  # noqa: E402  (the variables table: one code path for docs/variables.md and the READMEs)

REPO = variables.REPO
COLLECTION = "hvc.horovod_cluster"
COMMAND = "python tests/role_readmes.py"
BLOCKS = ("result", "tests", "notes")  # the hand-written parts, in the order the skeleton places them
# The play a README shows: cluster_defaults first, as every play of site.yml and playbooks/ lists it
# (docs/collection.md); fast_path first of all, as site.yml's later plays list it.
EXAMPLE = {"cluster_defaults": ["cluster_defaults", "horovod"], "fast_path": ["fast_path", "cluster_defaults", "horovod"]}


def begin(block: str) -> str:
    return f"<!-- {block}: hand-written, kept by tests/role_readmes.py -->"


def end(block: str) -> str:
    return f"<!-- end {block} -->"


def roles() -> list[str]:
    return sorted(p.name for p in variables.ROLES.iterdir() if (p / "meta" / "main.yml").is_file())


def _yaml(path: Path):
    return yaml.safe_load(path.read_text()) if path.is_file() else None


def _specs(role: str) -> dict:
    return (_yaml(variables.ROLES / role / "meta" / "argument_specs.yml") or {}).get("argument_specs") or {}


def _prose(text) -> str:
    """An argument spec's text as markdown: a list is one line each, Ansible's C()/V()/O() markup as code."""
    lines = text if isinstance(text, list) else [text] if text else []
    return "\n\n".join(re.sub(r"\b[CVO]\(([^()]*)\)", r"`\1`", " ".join(str(line).split())) for line in lines)


def hand_written(text: str) -> dict[str, str]:
    """The hand-written blocks of a README (stripped; a block it lacks is empty)."""
    found = {}
    for block in BLOCKS:
        match = re.search(re.escape(begin(block)) + r"\n(.*?)" + re.escape(end(block)), text, re.S)
        found[block] = match.group(1).strip("\n") if match else ""
    return found


def _block(block: str, kept: dict[str, str]) -> list[str]:
    return [begin(block)] + ([kept[block]] if kept[block] else []) + [end(block)]


def _set_facts(tasks) -> list[dict]:
    """Every set_fact of a task list, in blocks, rescues and always too."""
    found = []
    for task in tasks or []:
        for part in ("block", "rescue", "always"):
            found += _set_facts(task.get(part))
        if isinstance(task.get("ansible.builtin.set_fact"), dict):
            found.append(task["ansible.builtin.set_fact"])
    return found


def published(role: str) -> tuple[list[str], list[str]]:
    """(task files, keys) of the role's result hvc_<role>: each set_fact of it, as a dict of keys, as the role's
    __<role>_result (vars/main.yml), or as a combine({'key': ...}) of the result so far."""
    name, files, keys, added = f"hvc_{role}", [], [], []
    result = (_yaml(variables.ROLES / role / "vars" / "main.yml") or {}).get(f"__{role}_result") or {}
    for path in sorted((variables.ROLES / role / "tasks").glob("*.yml")):
        for facts in _set_facts(_yaml(path)):
            if name not in facts:
                continue
            value = facts[name]
            files.append(f"tasks/{path.name}")
            if isinstance(value, dict) or f"__{role}_result" in value:
                keys += list(value if isinstance(value, dict) else result)
            else:
                added += re.findall(r"combine\(\{'(\w+)'", value)
    return sorted(set(files)), list(dict.fromkeys(keys + added))


def scenarios(role: str) -> list[str]:
    """The molecule scenarios whose converge playbook applies the role (roles:, include_role/import_role)."""
    found = []
    for config in sorted((REPO / "molecule").glob("*/molecule.yml")):
        playbook = ((_yaml(config).get("provisioner") or {}).get("playbooks") or {}).get("converge", "converge.yml")
        applied = []
        for play in _yaml(config.parent / playbook) or []:
            applied += [r["role"] if isinstance(r, dict) else r for r in play.get("roles") or []]
            for task in [t for part in ("pre_tasks", "tasks", "post_tasks") for t in play.get(part) or []]:
                for key in ("ansible.builtin.include_role", "ansible.builtin.import_role"):
                    if key in task:
                        named = task[key]["name"]
                        applied += task.get("loop", []) if named == "{{ item }}" else [named]
        if role in {r.removeprefix(COLLECTION + ".") for r in applied}:
            found.append(config.parent.name)
    return found


def rules(role: str) -> list[str]:
    """The role's meta/rules.yml (read by the settings engine in preflight), one line each."""
    path = variables.ROLES / role / "meta" / "rules.yml"
    data = (_yaml(path) if path.is_file() else None) or {}
    rootless = data.get("rootless") or {}
    lines = ["- `%s`: %s" % (name, rule["form"]) for name, rule in (data.get("patterns") or {}).items()]
    lines += ["- `%s` changed from its default needs %s given too%s" % (
        pin["var"], ", ".join(f"`{n}`" for n in pin["with"]),
        " (unless `%s` is %s)" % (pin["unless"]["var"], " or ".join(pin["unless"]["values"])) if pin.get("unless")
        else "") for pin in data.get("pins") or []]
    lines += [f"- `{name}` must name a file on the controller" for name in data.get("controller_files") or []]
    lines += ["- with `cluster_rootless`, `%s` may be %s" % (name, ", ".join(values))
              for name, values in (rootless.get("methods") or {}).items()]
    if rootless.get("paths"):
        lines.append("- with `cluster_rootless`, %s, when set, must lie under the user's home"
                     % ", ".join(f"`{n}`" for n in rootless["paths"]))
    when = {"always": "", "mpi": " (with the MPI controller)", "gloo": " (with Gloo)"}
    lines += ["- with `cluster_rootless`, a %s-family host must already have %s%s, for %s" % (
        family, ", ".join(f"`{n}`" for n in need["packages"]), when[need["when"]], need["for"])
        for family, needs in (rootless.get("needs") or {}).items() for need in needs]
    if not lines:
        return ["None: its argument spec's types and choices are all (`meta/rules.yml` adds none)."]
    return ["From `meta/rules.yml`, checked in preflight before any host changes ([docs/refusals.md]"
            "(../../docs/refusals.md)):", ""] + lines


def _platforms(galaxy: dict) -> str:
    return "; ".join("%s %s" % (p["name"], ", ".join(map(str, p.get("versions") or ["all"])))
                     for p in galaxy.get("platforms") or [])


def readme(role: str, current: str = "") -> str:
    """The README of a role, keeping the hand-written blocks of `current` (the README as it is)."""
    kept = hand_written(current)
    specs = _specs(role)
    meta = _yaml(variables.ROLES / role / "meta" / "main.yml") or {}
    galaxy = meta.get("galaxy_info") or {}
    main = specs.get("main") or {}
    out = [f"# {COLLECTION}.{role}", "", _prose(main.get("short_description") or galaxy.get("description")).rstrip(".")
           + ".", ""]
    if main.get("description"):
        out += [_prose(main["description"]), ""]
    out += [f"<!-- generated by {COMMAND} from the role's meta/, defaults/, tasks/ and molecule/: edit those or "
            "the hand-written blocks, then run it again -->", "",
            "## Requirements", "",
            "- ansible-core >= %s (`meta/main.yml`)" % galaxy.get("min_ansible_version", "?"),
            "- Platforms: %s" % _platforms(galaxy),
            "- Role dependencies: %s" % (", ".join(f"`{d}`" for d in meta.get("dependencies") or [])
                                         or "none; a play lists the roles it needs itself, as the example below"),
            "", "## Entry points", ""]
    if specs:
        out += ["| entry point | what |", "|---|---|"]
        out += ["| `%s` | %s |" % (entry, variables._cell(_prose(spec.get("short_description", ""))))
                for entry, spec in specs.items()]
    else:
        out.append("`main` (`tasks/main.yml`); no `meta/argument_specs.yml`.")
    out += ["", "## Variables", ""]
    if specs:
        table = variables.table(role)
        out += ["%d, from `meta/argument_specs.yml` (type, choices, description) and `defaults/main.yml` "
                "(default); all roles' in [docs/variables.md](../../docs/variables.md#%s)." % (len(table) - 2, role),
                ""] + table
    else:
        out.append("None.")
    out += ["", "## Rules beyond the spec", ""] + rules(role)
    files, keys = published(role)
    out += ["", "## Published result", "",
            "`hvc_%s`, set by %s: %s." % (role, ", ".join(f"`{f}`" for f in files), ", ".join(f"`{k}`" for k in keys))
            if files else f"None: no task sets `hvc_{role}`.", ""]
    out += _block("result", kept)
    out += ["", "## Example playbook", "", "```yaml", "- hosts: cluster", "  roles:"]
    out += [f"    - {COLLECTION}.{name}" for name in EXAMPLE.get(role, ["cluster_defaults", role])]
    out += ["```", "", "## Tests", ""]
    applied = scenarios(role)
    out.append("Molecule scenarios that apply it (`molecule test -s <name>`): %s." % ", ".join(
        f"[`{name}`](../../molecule/{name}/molecule.yml)" for name in applied) if applied else
               "No molecule scenario applies it.")
    out += [""] + _block("tests", kept) + ["", "## Notes", ""] + _block("notes", kept)
    return "\n".join(out) + "\n"


def stale() -> list[str]:
    return [role for role in roles() if not (variables.ROLES / role / "README.md").is_file()
            or (variables.ROLES / role / "README.md").read_text() != readme(role, _current(role))]


def _current(role: str) -> str:
    path = variables.ROLES / role / "README.md"
    return path.read_text() if path.is_file() else ""


def write() -> None:
    for role in roles():
        (variables.ROLES / role / "README.md").write_text(readme(role, _current(role)))


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        names = stale()
        print("stale: %s; run %s" % (", ".join(names), COMMAND) if names else "every role README is current")
        sys.exit(1 if names else 0)
    if sys.argv[1:]:
        sys.exit(__doc__)
    write()
