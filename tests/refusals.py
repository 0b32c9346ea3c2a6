"""The table of refusals in docs/refusals.md, generated from the tests' own case tables (so a case that is
added, renamed or removed changes the table, and tests/unit/test_refusals_table.py notices a stale copy).

    python tests/refusals.py > docs/refusals.md
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE / "integration", HERE / "unit", HERE.parent / "plugins" / "filter"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import test_injection_refused as injection  # noqa: E402
import test_preflight_bad_input as bad_input  # noqa: E402
import test_rootless as rootless  # noqa: E402
import test_settings_refused as settings  # noqa: E402

# Tests that are one refusal each (no case table): (what, where, test).
SINGLE = [
    ("two hosts with one address (also differing only in case or a root dot)", "preflight",
     "test_preflight_bad_input.py::test_duplicate_addresses_name_both_hosts, "
     "test_settings_refused.py::test_inventory_shape_refused_in_plan"),
    ("a host in two platform groups", "preflight", "test_settings_refused.py::test_inventory_shape_refused_in_plan"),
    ("no `cluster` group, or an empty one", "preflight",
     "test_settings_refused.py::test_inventory_without_cluster_refused_in_plan"),
    ("a host name given twice in a YAML inventory", "ansible.cfg duplicate_dict_key",
     "test_cli_outside_venv.py::test_host_listed_twice_is_refused"),
    ("a value of the wrong type in the preflight role's own options", "argument spec",
     "test_preflight_bad_input.py::test_argument_spec_refuses_wrong_type"),
    ("jupyterlab_root_dir a folder of the system itself (`/`, `/etc`, `/home`, `/srv`, `/Users`, ...)",
     "jupyterlab decide", "test_jupyterlab_plan.py::test_a_system_folder_as_root_dir_is_refused"),
    ("playbooks/slurm.yml with `--limit` (slurm.conf lists every node of the play)", "slurm decide",
     "test_slurm_plan.py::test_a_limited_play_is_refused"),
    ("a host whose reported hostname, address or CPU count is no plain slurm.conf value, or a host that is not of the"
     " Debian family (slurm role)", "slurm decide",
     "test_slurm_plan.py::test_refusals_name_the_variable_or_the_host"),
    ("a `python_env_pip_packages` item that is no PEP 508 requirement (`--index-url=...`, `-r file`, a path)",
     "python_env decide", "test_python_env_plan.py::test_bad_input_is_refused_naming_the_variable"),
    ("a `python_env_conda_env_name` or `python_env_conda_channels` item beyond a name (or channel URL)",
     "preflight, python_env decide (rules)", "test_role_rules.py::test_the_roles_check_names_the_variable_and_the_form"),
    ("an `nccl_version` that is no release (`2.27.7`, `2.27.7-1+cuda13.0`)", "preflight, nccl decide (rules)",
     "test_role_rules.py::test_the_roles_check_names_the_variable_and_the_form"),
    ("an `ssh_mesh_allow_from` item that is no IPv4 or IPv6 address or network (a name, `*`, a zone such as "
     "`fe80::1%eth0`)", "preflight, ssh_mesh decide (rules)",
     "test_role_rules.py::test_the_roles_check_names_the_variable_and_the_form, "
     "test_ssh_mesh_decide.py::test_the_roles_rules_refuse_naming_the_variable_and_the_form"),
]


def _first(fragments):
    return fragments[0].replace("|", "\\|")


def rows() -> list[tuple[str, str, str, str]]:
    """(what is refused, who refuses it, the message (a fragment), the test)."""
    out = []
    for case, _, host, _, fragments in bad_input.RECORDED_CASES:
        out.append((case, "preflight", _first(fragments[1:] or fragments),
                    f"test_preflight_bad_input.py::test_refused_over_recorded_facts[{case}]"))
    for extra, fragments in bad_input.LOCAL_CASES:
        name = next(iter(extra))
        out.append((f"{name} on a real host (apply and check mode)", "preflight", _first(fragments),
                    f"test_preflight_bad_input.py::test_refused_on_a_real_host[{name}]"))
    for case, (_, fragments) in settings.CASES.items():
        out.append((case.replace("-", " "), "preflight (settings)", _first(fragments),
                    f"test_settings_refused.py::test_refused_in_plan_naming_the_variable[{case}]"))
    for case, (_, fragments) in settings.COMBOS.items():
        out.append((f"combination {case}", "horovod decide", _first(fragments),
                    f"test_settings_refused.py::test_known_bad_combination_refused_in_plan[{case}]"))
    for case, (_, fragments) in settings.UNPINNED.items():
        out.append((case, "python_env decide", _first(fragments),
                    f"test_settings_refused.py::test_pip_requirement_refused_in_plan[{case}]"))
    for case, (_, _, variable) in settings.OWN_PLAYBOOK.items():
        out.append((f"a wrong type given as a {case} in a user's own playbook", "argument spec (role start)",
                    variable, f"test_settings_refused.py::test_role_params_and_play_vars_refused_by_argument_specs[{case}]"))
    for variable, (role, _, _) in injection.CASES.items():
        out.append((f"$(...), backticks, ; or a newline in {variable}", f"{role} decide", variable,
                    "test_injection_refused.py::test_refused_in_decide_naming_the_variable"))
    for case in injection.EXTRA:
        out.append((f"non-ASCII {case.split(':')[0]}", "hostfile decide", case.split(":")[0],
                    "test_injection_refused.py::test_refused_in_decide_naming_the_variable"))
    for kw, fragments in rootless.REFUSED:
        what = "cluster_rootless with " + ", ".join(f"{k}={v}" for k, v in (kw.get("values") or kw).items())
        out.append((what, "preflight (rootless)", _first(fragments),
                    f"test_rootless.py::test_refused_naming_the_variable[{what}]"))
    for missing, _ in rootless.MISSING:
        out.append((f"cluster_rootless on a host without {missing}", "preflight (rootless)",
                    f"the system package {missing} is not installed",
                    f"test_rootless.py::test_missing_package_refused_naming_it_and_the_way_out[{missing}]"))
    for what, who, test in SINGLE:
        out.append((what, who, "", test))
    return out


def markdown() -> str:
    table = rows()
    lines = [
        "# Refusals",
        "",
        "Bad input refused before any host changes (by `horovod-cluster plan`, `playbooks/plan.yml` and",
        "`site.yml`'s preflight stage), each naming the host, the variable and what is allowed. Generated from the",
        "tests' case tables by `python tests/refusals.py > docs/refusals.md`; every row is a test under",
        "`tests/integration/` or `tests/unit/`.",
        "",
        f"**{len(table)} refusals.**",
        "",
        "| # | refused | by | message (part) | test |",
        "|---|---|---|---|---|",
    ]
    for number, (what, who, message, test) in enumerate(table, 1):
        lines.append(f"| {number} | {what} | {who} | {message and '`' + message + '`'} | `{test}` |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
