"""The contract between roles (docs/architecture.md): each role has a decide entry point, its decide
step publishes one result, hvc_<role>, with the plan in it, and playbooks read no role's private
(__-prefixed) names."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ROLES = sorted(p.name for p in (REPO / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())


@pytest.mark.parametrize("role", ROLES)
def test_role_has_a_decide_entry_point(role):
    specs = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    assert {"main", "decide"} <= set(specs), f"{role}: entry points {sorted(specs)}"
    assert (REPO / "roles" / role / "tasks" / "decide.yml").is_file()


@pytest.mark.parametrize("role", ROLES)
def test_decide_publishes_the_roles_result_with_its_plan(role):
    tasks = yaml.safe_load((REPO / "roles" / role / "tasks" / "decide.yml").read_text())
    published = [t for t in tasks if f"hvc_{role}" in (t.get("ansible.builtin.set_fact") or {})]
    if role == "horovod_check":  # its results exist after the run; decide sets the plan they come from
        assert any("__horovod_check_plan" in (t.get("ansible.builtin.set_fact") or {}) for t in tasks)
        main = (REPO / "roles" / role / "tasks" / "main.yml").read_text()
        assert "hvc_horovod_check:" in main and "plan: \"{{ __horovod_check_plan }}\"" in main
        return
    assert published, f"roles/{role}/tasks/decide.yml does not publish hvc_{role}"
    value = published[-1]["ansible.builtin.set_fact"][f"hvc_{role}"]
    # published as plain data: without ansible-core's origin tags every host's result takes a third of the
    # controller's memory (plugins/filter/hvc_plain_data.py)
    plain = " | hvc.horovod_cluster.hvc_plain_data }}"
    if isinstance(value, str):
        assert value.strip() == f"{{{{ __{role}_result{plain}"
        result = yaml.safe_load((REPO / "roles" / role / "vars" / "main.yml").read_text())[f"__{role}_result"]
        assert result["plan"] == f"{{{{ __{role}_plan }}}}"
    else:
        assert value["plan"] == f"{{{{ __{role}_plan{plain}"


def _set_facts(tasks):
    """Every set_fact of a task list, blocks included."""
    for task in tasks or []:
        yield from _set_facts(task.get("block"))
        yield from _set_facts(task.get("rescue"))
        if isinstance(task.get("ansible.builtin.set_fact"), dict):
            yield task["ansible.builtin.set_fact"]


PLAN_ROLES = yaml.safe_load((REPO / "playbooks" / "plan.yml").read_text())[0]["vars"]["cluster_plan_roles"]


@pytest.mark.parametrize("role", [r for r in PLAN_ROLES if r in ROLES])
def test_decide_keeps_its_plan_as_plain_data(role):
    """A plan over many hosts keeps every host's internal plan too: set as plain data (no origin tags), the
    controller's memory per host stays small (docs/architecture.md, benchmarks/plan_scaleout.py)."""
    tasks = yaml.safe_load((REPO / "roles" / role / "tasks" / "decide.yml").read_text())
    values = [facts[f"__{role}_plan"] for facts in _set_facts(tasks) if f"__{role}_plan" in facts]
    if not values:  # set in the role's vars, read only through the published (plain) result
        assert f"__{role}_plan" in yaml.safe_load((REPO / "roles" / role / "vars" / "main.yml").read_text())
        return
    for value in values:
        assert isinstance(value, str) and value.strip().endswith(" | hvc.horovod_cluster.hvc_plain_data }}"), \
            f"roles/{role}/tasks/decide.yml sets __{role}_plan without hvc_plain_data: {value!r}"


def test_playbooks_read_no_private_names():
    private = re.compile(r"__(" + "|".join(ROLES) + r")_[a-z_]+")
    found = [f"{p.relative_to(REPO)}:{n}: {line.strip()}"
             for p in sorted((REPO / "playbooks").rglob("*.yml")) + [REPO / "site.yml"]
             for n, line in enumerate(p.read_text().splitlines(), 1) if private.search(line)]
    assert found == []


def test_roles_read_other_roles_only_through_their_results():
    """A role's files name another role's private variables nowhere (its hvc_<role> is the interface)."""
    found = []
    for role in ROLES:
        others = [r for r in ROLES if r != role and not r.startswith(role + "_") and not role.startswith(r + "_")]
        pattern = re.compile(r"\b__(" + "|".join(others) + r")_[a-z_]+")
        for path in sorted((REPO / "roles" / role).rglob("*.yml")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert found == []


def _applied_roles(tasks) -> list[str]:
    """Roles a task list applies whole (include_role/import_role without another tasks_from)."""
    names = []
    for task in tasks or []:
        names += _applied_roles(task.get("block")) + _applied_roles(task.get("rescue"))
        for key in ("ansible.builtin.include_role", "ansible.builtin.import_role"):
            if key in task and task[key].get("tasks_from", "main") == "main":
                names.append(task[key]["name"])
    return names


FQCN = "hvc.horovod_cluster."


def _play_roles(play: dict) -> list[str]:
    """The roles a play applies, in order: its `roles:`, then whole-role includes of its tasks."""
    names = [r["role"] if isinstance(r, dict) else r for r in play.get("roles", [])]
    return names + _applied_roles(play.get("tasks"))


def _site_plays() -> list[tuple[str, dict]]:
    return [(entry["ansible.builtin.import_playbook"], play) for entry in yaml.safe_load((REPO / "site.yml").read_text())
            for play in yaml.safe_load((REPO / entry["ansible.builtin.import_playbook"]).read_text())]


def _site_roles() -> list[str]:
    """The roles site.yml applies, in order (its imported playbooks' roles and whole-role includes)."""
    order: list[str] = []
    for book, play in _site_plays():
        names = _play_roles(play)
        # the playbooks call the collection's roles by FQCN (docs/collection.md)
        assert all(n.startswith(FQCN) for n in names), f"{book}: a role not called as {FQCN}<role>: {names}"
        for name in (n.removeprefix(FQCN) for n in names):
            if name not in order:
                order.append(name)
    return order


@pytest.mark.parametrize("role", sorted(p.parent.parent.name for p in (REPO / "roles").glob("*/meta/main.yml")))
def test_no_role_depends_on_another(role):
    """Reusable roles carry no rollout policy: the plays list cluster_defaults (and fast_path) themselves."""
    meta = yaml.safe_load((REPO / "roles" / role / "meta" / "main.yml").read_text()) or {}
    assert meta.get("dependencies") == []


def test_every_play_lists_the_shared_defaults_before_its_roles():
    """cluster_defaults comes first (its defaults are every role's); in site.yml fast_path comes before it,
    except in the settled play that decides what fast_path reads."""
    site = {(book, play["name"]) for book, play in _site_plays()}
    books = [REPO / "site.yml", *(REPO / "playbooks").glob("*.yml")]
    applied = [(path.name, play) for path in books for play in yaml.safe_load(path.read_text()) or []
               if "ansible.builtin.import_playbook" not in play]
    for book, play in applied:
        names = [n.removeprefix(FQCN) for n in _play_roles(play)]
        includes = [t for t in play.get("tasks") or [] if "ansible.builtin.include_role" in t]
        if not names and not includes:
            continue
        in_site = ("playbooks/" + book, play["name"]) in site and book != "settled.yml"
        head = ["fast_path", "cluster_defaults"] if in_site else ["cluster_defaults"]
        if book == "plan.yml":  # decide steps, cluster_defaults' first, each included public (as `roles:` are)
            include = yaml.safe_load((REPO / "playbooks/tasks/plan_role.yml").read_text())[0]["block"][0]
            assert play["vars"]["cluster_plan_roles"][0] == "cluster_defaults"
            assert include["ansible.builtin.include_role"]["public"] is True
            continue
        assert names[:len(head)] == head, (book, play["name"], names)


def test_plan_runs_the_decide_steps_in_site_order():
    plan = yaml.safe_load((REPO / "playbooks" / "plan.yml").read_text())[0]["vars"]["cluster_plan_roles"]
    # fast_path has nothing to decide (it only ends a play on a settled cluster); horovod_check is the check's
    site = [r for r in _site_roles() if r not in ("horovod_check", "fast_path")]
    assert plan == site
