"""Issue 15: the variables a user gives are checked as written, on the controller, by preflight's decide step
(so `plan` and plain `ansible-playbook site.yml` refuse them before any host changes), naming the host, the
variable and the allowed values or form; a misspelt name is a warning naming the closest real one; and every
value the project's own inventories and molecule scenarios use passes.

One plan run covers every case: each case is a host of its own with the recorded facts of cpu-debian12.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from ansible_run import PLAN_INVENTORY, REPO, ansible_playbook_json, plan_preflight

FACTS = PLAN_INVENTORY.parent.parent / "facts"
OTHER_VERSION = "0.28.0"
PINNED = {"horovod_sdist_url": "https://example.invalid/h.tar.gz", "horovod_sdist_sha256": "0" * 64}

# case -> (host vars, fragments the refusal must hold: the variable, the value, the allowed form)
CASES = {
    "bool-int": ({"horovod_force_rebuild": 2},
                 ["horovod_force_rebuild is the number 2", "allowed: true or false"]),
    "bool-typo": ({"python_env_offline": "ture"},
                  ["python_env_offline is the string 'ture'", "allowed: true or false"]),
    "unquoted-3.10": ({"python_env_python_version": 3.10},
                      ["python_env_python_version is the number 3.1", 'quoted as written ("3.10", not 3.10)']),
    "string-for-list": ({"horovod_frameworks": "pytorch"},
                        ["horovod_frameworks is the string 'pytorch'", "allowed: a list"]),
    "list-item-type": ({"horovod_cuda_cc_list": [8.6]},
                       ["horovod_cuda_cc_list item 1 is the number 8.6", "allowed: a string"]),
    "int-not-number": ({"horovod_make_jobs": "many"}, ["horovod_make_jobs is the string 'many'", "a whole number"]),
    "dict-for-str": ({"cluster_ca_bundle": {"path": "/x"}}, ["cluster_ca_bundle is a mapping", "allowed: a string"]),
    "choices": ({"horovod_source": "svn"}, ["horovod_source is 'svn'", "allowed values: pypi, git, path"]),
    "version-trailing-junk": ({"horovod_version": "0.28.1.post1; rm", **PINNED},
                              ["horovod_version is '0.28.1.post1; rm'", "allowed: a release like 0.28.1"]),
    "torch-version-form": ({"python_env_torch_version": "2.13"},
                           ["python_env_torch_version is '2.13'", "a release like 2.13.0"]),
    # issue 46 item 5: torch pinned twice, the default python_env_torch_version (2.13.0) against a pip item
    "torch-pinned-twice": ({"python_env_pip_packages": ["torch==2.14.1"]},
                           ["python_env_pip_packages has the item 'torch==2.14.1' but python_env_torch_version is "
                            "'2.13.0'", 'allowed: the same version in both, or python_env_torch_version: ""']),
    # issue 45 item 9: a newline in the requirements file would start another pip option
    "index-url-newline": ({"python_env_torch_cpu_index_url": "https://pypi.example/simple\n--trusted-host evil"},
                          ["python_env_torch_cpu_index_url is 'https://pypi.example/simple",
                           "allowed: an http(s) URL without spaces or newlines, or empty"]),
    "sha256-form": ({**PINNED, "horovod_sdist_sha256": "abc", "horovod_version": OTHER_VERSION},
                    ["horovod_sdist_sha256 is 'abc'", "64 lowercase hex digits"]),
    "cmake-hashes-form": ({"cmake_pip_hashes": ["sha256:1234"]},
                          ["cmake_pip_hashes has the item 'sha256:1234'", "a list of sha256 values"]),
    "pins-together": ({"horovod_version": OTHER_VERSION},
                      [f"horovod_version is '{OTHER_VERSION}'", "horovod_sdist_url and horovod_sdist_sha256 are still "
                       "the defaults, made for horovod_version 0.28.1",
                       "allowed: set horovod_version, horovod_sdist_url, horovod_sdist_sha256 together"]),
    "pins-half": ({"horovod_version": OTHER_VERSION, "horovod_sdist_url": "https://example.invalid/h.tar.gz"},
                  ["horovod_sdist_sha256 is still the default, made for horovod_version 0.28.1"]),
    "cmake-pin": ({"cmake_pip_version": "3.30.0"}, ["cmake_pip_version is '3.30.0'", "cmake_pip_hashes is still"]),
    "ca-bundle-missing": ({"cluster_ca_bundle": "/nonexistent/ca.pem"},
                          ["cluster_ca_bundle is '/nonexistent/ca.pem', which is not a file on the controller"]),
    "serial-zero": ({"cluster_serial": 0}, ["cluster_serial is 0", "allowed: a positive number of hosts per batch"]),
    "serial-word": ({"cluster_serial": "abc"}, ["cluster_serial is 'abc'", "a percentage 1%-100%"]),
    "serial-percent": ({"cluster_serial": "150%"}, ["cluster_serial is '150%'"]),
    "max-fail": ({"cluster_max_fail_percentage": "lots"}, ["cluster_max_fail_percentage is the string 'lots'"]),
    # issue 45 item 6: ansible-core quotes environment values, not names: this one ran `touch` as root
    "proxy-env-key": ({"proxy_env": {"X=1 touch /tmp/x;Y": "z"}},
                      ["proxy_env has the key 'X=1 touch /tmp/x;Y'", "allowed: environment variable names"]),
    "rollout-smoke": ({"cluster_rollout_smoke": "sometimes"},
                      ["cluster_rollout_smoke is 'sometimes'", "allowed values: changed, always, never"]),
    "fast-path": ({"cluster_rollout_fast_path": "maybe"},
                  ["cluster_rollout_fast_path is the string 'maybe'", "allowed: true or false"]),
    "state-file": ({"cluster_state_file": "state.json"},
                   ["cluster_state_file is 'state.json'", "allowed: an absolute path"]),
    # names the mesh key's and the records' folders on the controller (issue 45 items 3, 12)
    "cluster-id": ({"cluster_id": "../lab"}, ["cluster_id is '../lab'", "allowed: a name: letters, digits"]),
    # Renamed settings: the old name would be ignored without a word, so it is refused with the new one.
    "renamed-serial": ({"hvc_serial": 1}, ["hvc_serial is no longer read; allowed: cluster_serial"]),
    "renamed-ca": ({"python_env_ca_bundle": "/etc/ssl/certs/ca-certificates.crt"},
                   ["python_env_ca_bundle is no longer read; allowed: cluster_ca_bundle"]),
}
# Values that must pass (each a host too): the forms people write.
ACCEPTED = {
    "ok-bool-words": {"horovod_force_rebuild": "yes", "python_env_offline": "false", "horovod_verify": 1},
    "ok-int-string": {"horovod_make_jobs": "4", "cluster_serial": "2,50%", "cluster_max_fail_percentage": 20},
    "ok-serial-list": {"cluster_serial": [1, "30%"]},
    "ok-fast-path": {"cluster_rollout_fast_path": "no", "cluster_state_file": "/var/lib/horovod/rollout-state.json"},
    "ok-pins": {"horovod_version": OTHER_VERSION, **PINNED},
    "ok-git": {"horovod_version": "0.28.2", "horovod_source": "git", "horovod_git_commit": "a" * 40},
    "ok-quoted": {"python_env_python_version": "3.10", "python_env_torch_version": ""},
    "ok-index-credentials": {"python_env_torch_cpu_index_url": "https://alice:s3cr3t@pypi.example/simple"},
    "ok-torch-pinned-twice-alike": {"python_env_pip_packages": ["torch==2.13.0", "torchvision==0.28.0"]},
}
MISSPELT = {"horovod_verison": ("0.28.1", "horovod_version"), "python_env_manger": ("conda", "python_env_manager"),
            "hostfile_slot": (2, "hostfile_slots")}


def _facts_dir(tmp_path: Path, hosts) -> Path:
    facts = tmp_path / "facts"
    facts.mkdir()
    for host in hosts:
        shutil.copy(FACTS / "cpu-debian12.json", facts / f"{host}.json")
    return facts


def _inventory(tmp_path: Path, hosts: dict) -> Path:
    inv = tmp_path / "hosts.yml"
    inv.write_text(yaml.safe_dump({"all": {
        "vars": {"cluster_facts_dir": str(_facts_dir(tmp_path, hosts)), "ansible_connection": "ssh",
                 "ansible_ssh_executable": "/nonexistent/plan-must-not-connect"},
        "children": {"cluster": {"hosts": {h: dict(v, ansible_host=f"{h}.invalid") for h, v in hosts.items()}}}}}))
    return inv


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("settings")
    hosts = {**{f"bad-{c}": v for c, (v, _) in CASES.items()}, **ACCEPTED,
             "misspelt": {name: value for name, (value, _) in MISSPELT.items()}}
    # 3.10 must reach the inventory as YAML's float, as a user's unquoted value does
    inv = _inventory(tmp, hosts)
    assert "python_env_python_version: 3.1\n" in inv.read_text()
    return plan_preflight(inv)


@pytest.mark.parametrize("case", CASES)
def test_refused_in_plan_naming_the_variable(run, case):
    host = f"bad-{case}"
    assert run.stats[host]["failures"] == 1 and run.stats[host]["unreachable"] == 0
    message = run.failure_messages(host)
    assert f"host {host}: " in message
    for fragment in CASES[case][1]:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    assert run.plan[host]["preflight"]["action"] == "fail"
    # exactly the one finding: the check does not trip over the case's other (good) values
    assert len(run.plan[host]["preflight"]["errors"]) == 1, run.plan[host]["preflight"]["errors"]


@pytest.mark.parametrize("host", [*ACCEPTED, "misspelt"])
def test_accepted(run, host):
    assert run.stats[host]["failures"] == 0, run.failure_messages(host)
    assert run.plan[host]["preflight"]["action"] == "pass"


def test_misspelt_names_warn_with_the_closest_name(run):
    assert run.rc == 2 and run.changed() == 0
    warnings = [w for h, _, r in run.results() if h == "misspelt" for w in r.get("warnings", [])]
    for name, (_, real) in MISSPELT.items():
        assert any(f"{name} is not a variable of any role nor a project setting; did you mean {real}?" in w
                   for w in warnings), warnings
    others = [w for h, _, r in run.results() if h != "misspelt" for w in r.get("warnings", [])]
    assert not [w for w in others if "not a variable" in w], others


# Every value the project's own inventories and scenarios give passes the check, without a warning.
def _molecule_inventories(tmp_path: Path):
    for scenario in sorted((REPO / "molecule").glob("*/molecule.yml")):
        data = yaml.safe_load(re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", scenario.read_text()))
        inventory = (data.get("provisioner") or {}).get("inventory") or {}
        hosts = {p["name"]: {} for p in data.get("platforms") or []}
        for name, values in (inventory.get("host_vars") or {}).items():
            hosts.setdefault(name, {}).update(values or {})
        groups = {}
        for platform in data.get("platforms") or []:
            for group in platform.get("groups") or []:
                groups.setdefault(group, {"hosts": {}})["hosts"][platform["name"]] = {}
        for group, values in (inventory.get("group_vars") or {}).items():
            if group != "all":
                groups.setdefault(group, {"hosts": {}})["vars"] = values
        folder = tmp_path / scenario.parent.name
        folder.mkdir()
        path = folder / "hosts.yml"
        path.write_text(yaml.safe_dump({"all": {"vars": (inventory.get("group_vars") or {}).get("all") or {},
                                                "hosts": hosts, "children": groups}}))
        yield scenario.parent.name, path


def test_project_inventories_and_scenarios_pass(tmp_path):
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "group_vars").symlink_to(REPO / "inventories" / "sandbox" / "group_vars")
    (sandbox / "hosts.yml").write_text("all:\n  children:\n    cluster:\n      hosts:\n        node-1:\n")
    sources = [("lab", REPO / "inventories" / "lab"), ("sandbox", sandbox), ("plan fixture", PLAN_INVENTORY),
               *_molecule_inventories(tmp_path)]
    play = tmp_path / "play.yml"
    play.write_text(json.dumps([{"name": "Check", "hosts": "all", "gather_facts": False, "tasks": [{
        "name": "Findings", "ansible.builtin.debug": {
            "msg": "{{ hostvars[inventory_hostname] | hvc.horovod_cluster.hvc_settings_findings("
                   "inventory_hostname, '%s') }}" % (REPO / "roles")}}]}]))
    checked = 0
    for name, source in sources:
        run = ansible_playbook_json([play, "-i", source, "-e", "ansible_connection=local"])
        assert run.rc == 0, (name, run.stderr)
        for host, _, result in run.results():
            assert (result["msg"]["errors"], result["msg"]["warnings"]) == ([], []), (name, host, result["msg"])
            checked += 1
    assert checked >= 15


def test_python_env_refusal_reaches_the_plan_as_the_role_wrote_it():
    """python_env checks its variables with one assert over its failed checks (no loop, whose own msg is "One or
    more items failed" and whose items each ansible-core marks its own way): the plan and the failed task's msg
    carry the role's message."""
    run = plan_preflight(PLAN_INVENTORY, "--limit", "cpu-debian12",
                         extra_vars={"cluster_plan_roles": ["preflight", "python_env"], "python_env_offline": True,
                                     "python_env_wheelhouse": ""})
    assert run.rc == 2
    plan = run.plan["cpu-debian12"]["python_env"]
    assert plan["action"] == "fail"
    wanted = "python_env_offline is true but python_env_wheelhouse is empty"
    assert wanted in plan["reason"] and "One or more items failed" not in plan["reason"]
    assert wanted in run.failure_messages("cpu-debian12")


def _shape_run(tmp_path, inventory: dict):
    def walk(group):
        yield from group.get("hosts", {})
        for child in group.get("children", {}).values():
            yield from walk(child)

    hosts = sorted(set(walk(inventory["all"])))
    inventory["all"]["vars"] = {"cluster_facts_dir": str(_facts_dir(tmp_path, hosts)), "ansible_connection": "ssh",
                                "ansible_ssh_executable": "/nonexistent/plan-must-not-connect"}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return plan_preflight(path)


def test_inventory_shape_refused_in_plan(tmp_path):
    """Two platform groups, addresses differing only in case (and a root dot), in one inventory."""
    run = _shape_run(tmp_path, {"all": {"children": {"cluster": {"children": {
        "cpu_nodes": {"hosts": {"a": {"ansible_host": "Node1.lab.example"}, "both": {"ansible_host": "both.invalid"}}},
        "pis": {"hosts": {"b": {"ansible_host": "node1.LAB.example."}, "both": {}}}}}}}})
    assert run.rc == 2 and run.changed() == 0
    assert "host both: is in the platform groups cpu_nodes and pis; allowed: exactly one of " \
           "preflight_platform_groups" in run.failure_messages("both")
    assert "host a: ansible_host Node1.lab.example is also the address of b" in run.failure_messages("a")
    assert "host b: ansible_host node1.LAB.example. is also the address of a" in run.failure_messages("b")


@pytest.mark.parametrize("shape", ["no cluster group", "empty cluster group"])
def test_inventory_without_cluster_refused_in_plan(tmp_path, shape):
    inventory = {"all": {"hosts": {"a": {"ansible_host": "a.invalid"}}}}
    if shape == "empty cluster group":
        inventory["all"]["children"] = {"cluster": {"hosts": {}}}
    run = _shape_run(tmp_path, inventory)
    assert run.rc == 2
    assert "host a: the inventory has no `cluster` group or it is empty" in run.failure_messages("a")
    assert "preflight" in run.plan["a"] and run.plan["a"]["preflight"]["action"] == "fail"


# Known-bad combinations, refused in plan by horovod's decide step (the compatibility matrix), with the versions
# python_env will install when nothing is installed yet to ask: one full plan run, a host per case. Every host
# pins torch 2.13.0 (python_env's default, written out) unless its case says otherwise.
TF = {"horovod_frameworks": ["pytorch", "tensorflow"]}
MASTER = {"horovod_source": "git", "horovod_git_commit": "2626dc87a3a8eb8fb7d2216198ce45bce0f9e65a"}
COMBOS = {
    "torch-9.9.9": ({"python_env_torch_version": "9.9.9"},
                    ["[torch-newer-than-tested]", "pin python_env_torch_version to 2.13.0, 2.14.1 or 2.15.0"]),
    "torch-unpinned": ({"python_env_torch_version": ""},
                       ["horovod_frameworks lists pytorch without a version",
                        'for pytorch, python_env_torch_version pinned (e.g. "2.13.0")']),
    "tf-unpinned": (TF, ["horovod_frameworks lists tensorflow without a version",
                         "an item tensorflow==2.15.1 in python_env_pip_packages"]),
    # Keras 3 (TensorFlow >= 2.16 without tf-keras) breaks horovod.tensorflow.keras
    "tf-2.16.1": ({**TF, "python_env_pip_packages": ["tensorflow==2.16.1"]},
                  ["[tensorflow-keras-3] horovod 0.28.1 with tensorflow 2.16.1",
                   "pin tf-keras of the same minor beside it", "https://github.com/horovod/horovod/issues/4290"]),
    "tf-2.19.1": ({**TF, "python_env_pip_packages": ["tensorflow==2.19.1", "tf-keras==2.19.0"]},
                  ["[tensorflow-2.19] horovod 0.28.1 with tensorflow 2.19.1",
                   "pin tensorflow==2.18.1 with tf-keras==2.18.0",
                   "https://github.com/horovod/horovod/pull/4302"]),
    "tf-2.18.1-tf-keras-2.17.0": ({**TF, "python_env_pip_packages": ["tensorflow==2.18.1", "tf-keras==2.17.0"]},
                                  ["[tf-keras-minor] horovod 0.28.1 with tensorflow 2.18.1, tf-keras 2.17.0",
                                   "https://pypi.org/simple/tf-keras/"]),
    "tf-cpu-2.18.1-tf-keras": ({**TF, "python_env_pip_packages": ["tensorflow-cpu==2.18.1", "tf-keras==2.18.0"]},
                               ["[tf-keras-tensorflow-cpu]", "pin tensorflow==X instead of tensorflow-cpu==X"]),
    # TensorFlow 2.15.1 has no wheel for Python 3.12 (2.16 to 2.18 have, with tf-keras), none of 2.16-2.18 for 3.13
    "tf-2.15.1-python-3.12": ({**TF, "python_env_pip_packages": ["tensorflow==2.15.1"], "python_env_manager": "conda",
                               "python_env_python_version": "3.12"},
                              ["[tensorflow-2.12-python] horovod 0.28.1 with tensorflow 2.15.1, Python 3.12",
                               "wheels for Python 3.11 at most", "tensorflow==2.18.1 with tf-keras==2.18.0",
                               "https://pypi.org/simple/tensorflow/"]),
    "tf-2.18.1-python-3.13": ({**TF, "python_env_pip_packages": ["tensorflow==2.18.1", "tf-keras==2.18.0"],
                               "python_env_manager": "conda", "python_env_python_version": "3.13"},
                              ["[tensorflow-2.16-python] horovod 0.28.1 with tensorflow 2.18.1, Python 3.13",
                               "wheels for Python 3.12 at most", "https://pypi.org/simple/tensorflow/"]),
    "mxnet": ({"horovod_frameworks": ["pytorch", "mxnet"], "horovod_allow_untested": True},
              ["[mxnet-retired] horovod 0.28.1", "https://attic.apache.org/projects/mxnet.html"]),
    "torch-1.4.0": ({"python_env_torch_version": "1.4.0"},
                    ["[pytorch-range] horovod 0.28.1 with torch 1.4.0", "0.28.1 builds with torch >=1.5.0,<2.1"]),
    "master-torch-2.14.1": ({**MASTER, "python_env_torch_version": "2.14.1"},
                            ["[torch-2.14-on-master] horovod 0.28.1 (commit 2626dc87a3a8) with torch 2.14.1",
                             "torch 2.14 needs C++20", "https://github.com/horovod/horovod/pull/3998"]),
    "commit-not-in-matrix": ({"horovod_source": "git", "horovod_git_commit": "a" * 40},
                             ["[horovod-not-in-matrix] horovod 0.28.1 (commit aaaaaaaaaaaa): from git, not in the compatibility matrix",
                              "or set horovod_allow_untested true"]),
}
COMBOS_OK = {"tf-2.15.1": {**TF, "python_env_pip_packages": ["tensorflow==2.15.1"]},
             # issue 47: Keras 2 from tf-keras, the role's backend patch (the key's tfkeras tag)
             "tf-2.18.1-tf-keras": {**TF, "python_env_pip_packages": ["tensorflow==2.18.1", "tf-keras==2.18.0"]},
             "torch-2.14.1": {"python_env_torch_version": "2.14.1"},
             # torch 2.1 to 2.12 fails with 0.28.1's C++14 (horovod #3996, #4014): the plan patches C++17 in
             "torch-2.5.1": {"python_env_torch_version": "2.5.1"},
             # master has PR #3998: its own CMake sets C++17, nothing to patch
             "master-torch-2.13.0": MASTER,
             "torch-pinned-in-pip-packages": {"python_env_torch_version": "", "python_env_pip_packages": ["torch==2.14.1"]},
             # issue 46: Debian's own torch (python3-torch), in a venv that sees it
             "torch-distro": {"python_env_torch_source": "distro", "python_env_torch_version": "2.6.0"},
             # the user's own environment: the rollout's probe asks it for its torch
             "own-environment": {"python_env_torch_version": "", "horovod_python": "/opt/mine/bin/python"}}
# A framework in python_env_pip_packages without ==: Horovod would be built against whatever pip picks that day;
# a training package that is not a plain requirement. Refused by python_env's decide step, in the same plan run.
UNPINNED = {
    "torch>=2.1 in python_env_pip_packages": ({"python_env_pip_packages": ["torch>=2.1"]},
                                              ['python_env_pip_packages lists ["torch>=2.1"] without an exact version',
                                               "a pin with == (e.g. torch==2.13.0"]),
    "tensorflow in python_env_pip_packages": ({**TF, "python_env_pip_packages": ["numpy==1.26.4", "TensorFlow[and-cuda]"]},
                                              ['python_env_pip_packages lists ["TensorFlow[and-cuda]"] without an exact']),
    # Training packages reach pip's argv and a marker file's name: requirements only, never a pip option.
    "pip option in python_env_training_packages": (
        {"python_env_training_packages": ["numpy", "--index-url=http://evil.invalid/simple"]},
        ['python_env_training_packages lists ["--index-url=http://evil.invalid/simple"]',
         "allowed: a package name with optional extras and version"]),
    "shell text in python_env_training_packages": (
        {"python_env_training_packages": ["numpy; touch /tmp/pwned"]},
        ['python_env_training_packages lists ["numpy; touch /tmp/pwned"]']),
    # issue 46: the OS's torch is seen by a venv only, and pip must not install another one over it
    "distro torch in conda": (
        {"python_env_torch_source": "distro", "python_env_torch_version": "2.6.0", "python_env_manager": "conda"},
        ["python_env_torch_source is distro, which a venv sees (--system-site-packages) but a conda environment"
         " does not"]),
    "distro torch and a torch pin in pip packages": (
        {"python_env_torch_source": "distro", "python_env_torch_version": "2.6.0",
         "python_env_pip_packages": ["torch==2.6.0"]},
        ['python_env_pip_packages lists ["torch==2.6.0"] but python_env_torch_source is distro']),
}


@pytest.fixture(scope="module")
def combos(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("combos")
    cases = {**{c: v for c, (v, _) in COMBOS.items()}, **COMBOS_OK,
             **{f"unpinned-{n}": v for n, (v, _) in enumerate(UNPINNED.values())}}
    inv = _inventory(tmp, {c: {"python_env_torch_version": "2.13.0", **v} for c, v in cases.items()})
    return ansible_playbook_json([REPO / "playbooks" / "plan.yml", "-i", inv])


@pytest.mark.parametrize("case", COMBOS)
def test_known_bad_combination_refused_in_plan(combos, case):
    plan = combos.plan[case]
    assert plan["horovod"]["action"] == "fail", plan["horovod"]
    for fragment in COMBOS[case][1]:
        assert fragment in plan["horovod"]["reason"], plan["horovod"]["reason"]
    assert combos.stats[case]["failures"] == 1 and combos.changed() == 0


@pytest.mark.parametrize("case", UNPINNED)
def test_pip_requirement_refused_in_plan(combos, case):
    host = f"unpinned-{list(UNPINNED).index(case)}"
    plan = combos.plan[host]
    assert plan["python_env"]["action"] == "fail", plan
    for fragment in UNPINNED[case][1]:
        assert fragment in plan["python_env"]["reason"], plan["python_env"]["reason"]
    assert "horovod" not in plan  # refused before any later role plans


@pytest.mark.parametrize("case", COMBOS_OK)
def test_good_combination_planned(combos, case):
    assert combos.stats[case]["failures"] == 0, combos.failure_messages(case)
    assert combos.plan[case]["horovod"]["action"] in ("build", "install_wheel")  # one builder per platform key
    # the pinned torch is known in plan: the matrix's C++ standard for its range shows, and the key names it
    plan = combos.plan[case]["horovod"]
    # the release's GCC 13 / 14 source patches, and the torch wait that blocks (issue 50)
    compiler = ["gcc13_headers", "flatbuffers_span", "gloo_cstdint", "torch_wait_blocks"]
    want = {"tf-2.15.1": ("20", ["cxx20"] + compiler, "-pytorch2.13.0_cpu-tensorflow2.15.1-cpu-"),
            "tf-2.18.1-tf-keras": ("20", ["cxx20", "tf_keras_backend"] + compiler,
                                   "-pytorch2.13.0_cpu-tensorflow2.18.1-cpu-"),
            "torch-2.14.1": ("20", ["cxx20"] + compiler, "-pytorch2.14.1"),
            "torch-2.5.1": ("17", ["cxx17"] + compiler, "-pytorch2.5.1"),
            # what Debian's build reports, as the environment's probe will: the plan's key is the rollout's
            "torch-distro": ("17", ["cxx17"] + compiler, "-pytorch2.6.0_debian-cpu-"),
            "master-torch-2.13.0": ("", ["flatbuffers_span", "torch_wait_blocks"], "hvd0.28.1_2626dc87a3a8-")}.get(case)
    if want:
        assert (str(plan["cxx_standard"]), plan["fixes"]) == want[:2], plan
        assert want[2] in plan["platform_key"], plan["platform_key"]


# A user's own playbook can give values as role params or play vars, which the inventory-level settings check
# above does not see. Those are refused by the role's argument specs when the role starts (Ansible's own
# validation of the entry point), naming the variable, before any of the role's tasks runs.
OWN_PLAYBOOK = {
    "role param": ({"role": "horovod", "horovod_force_rebuild": 2}, {}, "horovod_force_rebuild"),
    "play var": ({"role": "python_env"}, {"python_env_offline": "ture"}, "python_env_offline"),
}


@pytest.mark.parametrize("case", OWN_PLAYBOOK)
def test_role_params_and_play_vars_refused_by_argument_specs(tmp_path, case):
    role, play_vars, variable = OWN_PLAYBOOK[case]
    playbook = tmp_path / "mine.yml"
    playbook.write_text(yaml.safe_dump([{"name": "Mine", "hosts": "cluster", "gather_facts": False,
                                         "vars": play_vars, "roles": ["cluster_defaults", role]}]))
    inventory = tmp_path / "hosts.json"
    inventory.write_text(json.dumps({"all": {"vars": {"ansible_connection": "local"},
                                             "children": {"cluster": {"hosts": {"localhost": {}}}}}}))
    run = ansible_playbook_json([playbook, "-i", inventory], env={"ANSIBLE_ROLES_PATH": str(REPO / "roles")})
    assert run.rc == 2
    results = list(run.results())
    # the play lists cluster_defaults first (as the collection's docs ask): it is validated, then the role;
    # of the role, nothing but argument validation ran
    ran = [name for _, name, result in results]
    assert ran and all("Validating arguments against arg spec 'main'" in name for name in ran), ran
    assert any(name.startswith("cluster_defaults") for name in ran), ran
    message = run.failure_messages("localhost")
    assert variable in message and "bool" in message, message
    assert run.changed() == 0
