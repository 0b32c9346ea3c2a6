"""Issue 15: hostile values in the variables that reach a shell, a login script or ssh's config are refused
by the owning role's decide step (so `horovod-cluster plan` refuses them before any host changes), with a
message naming the variable; values that are legitimately free text run nothing.

Each variable gets `$(touch P)`, a backtick form, `;` and a newline (P: a file of this test's own tmp
folder). One ansible-playbook run covers every case: each case is a host of its own (local connection,
faked facts) that runs its role's decide step, so the cost is one run, not one per case.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_run import REPO, ansible_playbook_json
from horovod_cluster.results import failure_message

PAYLOADS = {
    "subst": "$(touch {p})",
    "backtick": "`touch {p}`",
    "semicolon": "; touch {p}",
    "newline": "\ntouch {p}",
}

FACTS = {
    "debian12": {"ansible_system": "Linux", "ansible_os_family": "Debian", "ansible_distribution": "Debian",
                 "ansible_distribution_major_version": "12", "ansible_distribution_version": "12.7",
                 "ansible_architecture": "x86_64", "ansible_python_version": "3.11.2",
                 "ansible_processor_vcpus": 2, "ansible_hostname": "node", "ansible_fqdn": "node",
                 "ansible_default_ipv4": {"address": "10.0.0.1"}, "ansible_user_dir": "/home/lab"},
    "ubuntu24": {"ansible_system": "Linux", "ansible_os_family": "Debian", "ansible_distribution": "Ubuntu",
                 "ansible_distribution_major_version": "24", "ansible_distribution_version": "24.04",
                 "ansible_architecture": "x86_64", "ansible_python_version": "3.12.3",
                 "ansible_processor_vcpus": 2, "ansible_hostname": "node", "ansible_fqdn": "node",
                 "ansible_default_ipv4": {"address": "10.0.0.2"}, "ansible_user_dir": "/home/lab"},
}

# variable -> (role, facts, host vars for a value (and the host's name), inventory host name for a value)
CASES = {
    "horovod_python": ("horovod", "debian12", lambda v, h: {"horovod_python": "/opt/venv/bin/python" + v}),
    "horovod_build_root": ("horovod", "debian12", lambda v, h: {"horovod_build_root": "/var/tmp/hb" + v}),
    "horovod_build_env_overrides": ("horovod", "debian12",
                                    lambda v, h: {"horovod_build_env_overrides": {"HOROVOD_X" + v: "1"}}),
    "cuda_toolkit_pip_prefix": ("cuda_toolkit", "debian12",
                                lambda v, h: {"cuda_toolkit_method": "pip", "cuda_toolkit_build_host": True,
                                              "cuda_toolkit_pip_prefix": "/opt/cuda" + v}),
    "cuda_toolkit_repo_home": ("cuda_toolkit", "ubuntu24",
                               lambda v, h: {"cuda_toolkit_method": "nvidia_repo", "cuda_toolkit_build_host": True,
                                             "cuda_toolkit_repo_home": "/usr/local/cuda" + v}),
    "ssh_mesh_aliases": ("ssh_mesh", "debian12", lambda v, h: {"ssh_mesh_aliases": ["gpu-a" + v],
                                                               "ssh_mesh_hosts": [h]}),
    "ansible_host": ("ssh_mesh", "debian12", lambda v, h: {"ansible_host": "node" + v, "ssh_mesh_hosts": [h]}),
    "hostfile_name": ("hostfile", "debian12", lambda v, h: {"hostfile_name": "node" + v, "hostfile_hosts": [h]}),
    # no hostfile_name: the inventory name itself goes into the hostfile
    "inventory name": ("hostfile", "debian12", lambda v, h: {"hostfile_hosts": [h]}),
    # paths and names written into a Lua or Tcl modulefile and a login script (playbooks/modules.yml)
    "hpc_modules_root": ("hpc_modules", "debian12", lambda v, h: {"hpc_modules_root": "/opt/modulefiles" + v}),
    "hpc_modules_env_path": ("hpc_modules", "debian12", lambda v, h: {"hpc_modules_env_path": "/opt/venv" + v}),
    "hpc_modules_version": ("hpc_modules", "debian12", lambda v, h: {"hpc_modules_version": "0.28.1" + v}),
    # paths and the address written into the systemd unit's ExecStart, WorkingDirectory, EnvironmentFile
    # (playbooks/jupyterlab.yml)
    "jupyterlab_root_dir": ("jupyterlab", "debian12", lambda v, h: {"jupyterlab_root_dir": "/srv/jupyterlab" + v}),
    "jupyterlab_env_path": ("jupyterlab", "debian12", lambda v, h: {"jupyterlab_env_path": "/opt/venv" + v}),
    "jupyterlab_token_file": ("jupyterlab", "debian12",
                              lambda v, h: {"jupyterlab_token_file": "/etc/jupyterlab/env" + v}),
    "jupyterlab_ip": ("jupyterlab", "debian12", lambda v, h: {"jupyterlab_ip": "127.0.0.1" + v}),
}
# How the refusal names what is wrong, when the host name itself is the bad value.
NEEDLES = {"inventory name": "its inventory name", "ansible_host": "ansible_host"}
# The non-ASCII host name: refused where it would go into the hostfile.
EXTRA = {"hostfile_name:non-ascii": ("extra-1", {"hostfile_name": "nöde", "hostfile_hosts": ["extra-1"]}),
         "inventory name:non-ascii": ("nöde", {"hostfile_hosts": ["nöde"]})}

# Free text: values of horovod_build_env_overrides reach the compile's environment (Ansible quotes them).
ENV_VALUES = {f"HVC_TEST_{name.upper()}": text for name, text in PAYLOADS.items()}

PLAYBOOK = [{
    "name": "Decide with hostile values", "hosts": "all", "gather_facts": False, "roles": ["cluster_defaults"],
    "tasks": [
        *({"name": f"Fake the {kind} facts", "when": f"__test_facts == '{kind}'",
           "ansible.builtin.set_fact": dict(facts, cacheable=True)} for kind, facts in FACTS.items()),
        *({"name": f"Decide {role}", "when": f"__test_role == '{role}'",
           "ansible.builtin.include_role": {"name": role, "tasks_from": "decide"}}
          for role in ("horovod", "cuda_toolkit", "ssh_mesh", "hostfile", "hpc_modules", "jupyterlab")),
        {"name": "Run a shell in the build environment, as the compile does",
         "when": "__test_case == 'env-values'",
         "ansible.builtin.shell": {
             "cmd": "{{ ansible_playbook_python | quote }} -c {{ __test_dump | quote }} > {{ __test_out | quote }}",
             "executable": "/bin/bash"},
         "environment": "{{ __horovod_plan['build_env'] }}",
         "vars": {"__test_dump": "import json, os; print(json.dumps({k: v for k, v in os.environ.items()"
                                 " if k.startswith('HVC_TEST_')}))"},
         "changed_when": False},
        {"name": "Write cuda.sh from a plan whose values decide would refuse (the template's own quoting)",
         "when": "__test_case == 'cuda-template'",
         "ansible.builtin.template": {"src": str(REPO / "roles/cuda_toolkit/templates/cuda.sh.j2"),
                                      "dest": "{{ __test_out }}", "mode": "0644"},
         "vars": {"cuda_toolkit_version": "13.0",
                  "__cuda_toolkit_plan": {"method": "pip", "home": "{{ __test_home }}",
                                          "host_compiler": "{{ __test_cxx }}"}}},
    ],
}]


def _cases(tmp: Path):
    """host name -> (case id, host vars); plus {case id: its pwned file}."""
    hosts, pwned = {}, {}
    for variable, (role, facts, host_vars) in CASES.items():
        for payload, template in PAYLOADS.items():
            case = f"{variable}:{payload}"
            pwned[case] = tmp / f"pwned-{len(pwned)}"
            value = template.format(p=pwned[case])
            name = ("node" + value) if variable == "inventory name" else f"case{len(pwned)}"
            hosts[name] = {"__test_case": case, "__test_role": role, "__test_facts": facts, **host_vars(value, name)}
    for case, (name, host_vars) in EXTRA.items():
        hosts[name] = {"__test_case": case, "__test_role": "hostfile", "__test_facts": "debian12", **host_vars}
    env_pwned = {key: tmp / f"pwned-env-{key}" for key in ENV_VALUES}
    hosts["env-values"] = {
        "__test_case": "env-values", "__test_role": "horovod", "__test_facts": "debian12",
        "__test_out": str(tmp / "env.json"), "python_env_torch_version": "2.13.0",  # a plan needs torch pinned
        "horovod_build_env_overrides": {key: text.format(p=env_pwned[key]) for key, text in ENV_VALUES.items()}}
    home, cxx = "/opt/cuda$(touch {p})\ntouch {p}; `touch {p}`", "/usr/bin/g++ ; touch {p}"
    pwned["cuda-template"] = tmp / "pwned-template"
    hosts["cuda-template"] = {
        "__test_case": "cuda-template", "__test_out": str(tmp / "cuda.sh"),
        "__test_home": home.format(p=pwned["cuda-template"]), "__test_cxx": cxx.format(p=pwned["cuda-template"])}
    pwned.update({f"env-values:{k}": v for k, v in env_pwned.items()})
    return hosts, pwned


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("injection")
    hosts, pwned = _cases(tmp)
    (tmp / "inventory.json").write_text(json.dumps({"all": {
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                 "__test_case": "", "__test_role": "", "__test_facts": ""},
        "hosts": hosts}}, ensure_ascii=False), encoding="utf-8")
    (tmp / "play.yml").write_text(json.dumps(PLAYBOOK), encoding="utf-8")
    result = ansible_playbook_json(["-i", tmp / "inventory.json", tmp / "play.yml"], timeout=300,
                                   env={"ANSIBLE_GATHERING": "explicit"})
    by_case = {}
    for host, task, res in result.results():
        case = hosts.get(host, {}).get("__test_case", host)
        entry = by_case.setdefault(case, {"failed": "", "tasks": []})
        entry["tasks"].append(task)
        if res.get("failed"):  # a check in a loop (hpc_modules) fails with its item's message
            entry["failed"] = failure_message(res)
    return {"tmp": tmp, "hosts": hosts, "pwned": pwned, "by_case": by_case, "result": result}


REFUSED = [f"{variable}:{payload}" for variable in CASES for payload in PAYLOADS] + list(EXTRA)


@pytest.mark.parametrize("case", REFUSED)
def test_refused_in_decide_naming_the_variable(run, case):
    variable = case.split(":")[0]
    outcome = run["by_case"].get(case)
    assert outcome, f"{case}: no result at all:\n{json.dumps(run['result'].data)[-3000:]}"
    message = outcome["failed"]
    assert message, f"{case} was not refused; tasks run: {outcome['tasks']}"
    assert NEEDLES.get(variable, variable) in message
    assert "expected" in message or "; allowed: " in message  # the allowed form follows (rules engine: allowed)
    assert "\n" not in message  # one line: a newline in the value is shown as \n, not printed
    # refused in the decide step, before the shell and template tasks
    assert not any(t.startswith(("Run a shell", "Write cuda.sh")) for t in outcome["tasks"])
    if case in run["pwned"]:
        assert not run["pwned"][case].exists()


def test_the_messages_show_the_bad_value_and_the_form(run):
    message = run["by_case"]["cuda_toolkit_pip_prefix:subst"]["failed"]
    pwned = run["pwned"]["cuda_toolkit_pip_prefix:subst"]
    assert message.startswith(f'cuda_toolkit_pip_prefix is "/opt/cuda$(touch {pwned})"; expected an absolute path'
                              " of letters, digits and . _ - + /"), message
    assert "\\ntouch" in run["by_case"]["horovod_build_root:newline"]["failed"]  # a newline shown, not printed
    assert "ssh_mesh_aliases" in run["by_case"]["ssh_mesh_aliases:newline"]["failed"]
    assert "nöde" in run["by_case"]["inventory name:non-ascii"]["failed"]


def test_env_values_are_free_text_and_run_nothing(run, tmp_path):
    """The values of horovod_build_env_overrides pass decide and reach the compile's shell verbatim."""
    outcome = run["by_case"]["env-values"]
    assert not outcome["failed"], outcome
    got = json.loads((run["tmp"] / "env.json").read_text())
    expected = {key: text.format(p=run["pwned"][f"env-values:{key}"]) for key, text in ENV_VALUES.items()}
    assert got == expected
    assert not [case for case, path in run["pwned"].items() if case.startswith("env-values") and path.exists()]


def test_cuda_sh_quotes_what_decide_would_refuse(run):
    """Belt and braces: cuda.sh rendered from hostile values, sourced by bash, sets them literally."""
    script = run["tmp"] / "cuda.sh"
    hosts = run["hosts"]["cuda-template"]
    shown = subprocess.run(["bash", "-c", f'. {script} && printf "%s|%s|%s" "$CUDA_HOME" "$CUDAHOSTCXX" "$NVCC_CCBIN"'],
                           capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    assert shown.stdout == f"{hosts['__test_home']}|{hosts['__test_cxx']}|{hosts['__test_cxx']}"
    assert not run["pwned"]["cuda-template"].exists()


def test_nothing_anywhere_ran(run):
    assert not [p.name for p in run["tmp"].iterdir() if p.name.startswith("pwned")]
