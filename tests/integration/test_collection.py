"""The repository root as the Ansible collection hvc.horovod_cluster, as a user gets it: built with
`ansible-galaxy collection build`, installed into a fresh collections path, used from a folder that is
not the checkout (so nothing comes from the checkout's ansible.cfg, roles or plugin paths).

- the artifact carries the collection's content and nothing of the checkout's tooling;
- `ansible-playbook hvc.horovod_cluster.site --syntax-check` finds every playbook, role and module;
- the plan playbook runs for real over a recorded host: the roles' filters (plugins/filter and the
  cuda_toolkit role's) resolve inside the installed collection too;
- `ansible-doc` reads every module, filter and role of the installed collection
  (tests/unit/test_module_docs.py checks the modules' option docs from the checkout).
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from ansible_run import PLAN_INVENTORY, Run

REPO = Path(__file__).resolve().parents[2]
FQCN = "hvc.horovod_cluster"
_BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    return shutil.which(name, path=str(_BIN)) or shutil.which(name) or name


def _filter_names() -> list[str]:
    """Every filter the collection's filter plugins define (FilterModule.filters())."""
    names = []
    for path in sorted((REPO / "plugins" / "filter").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_hvc_filter_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        names += module.FilterModule().filters()
    return sorted(names)


MODULES = sorted(p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if not p.name.startswith("_"))
ROLES = sorted(p.parent.parent.name for p in (REPO / "roles").glob("*/meta/argument_specs.yml"))
FILTERS = _filter_names()
CALLBACKS = sorted(p.stem for p in (REPO / "plugins" / "callback").glob("*.py") if not p.name.startswith("_"))


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    """(tarball, run): built and installed once for this module's tests; run(tool, *args) runs from a folder
    that is not the checkout, with only the fresh collections path (and the venv's own collections)."""
    base = tmp_path_factory.mktemp("collection")
    work = base / "work"  # not the checkout: no ansible.cfg, no roles/ here
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update({"ANSIBLE_COLLECTIONS_PATH": str(base / "collections"), "ANSIBLE_CACHE_PLUGIN": "memory",
                "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_RETRY_FILES_ENABLED": "0"})

    def run(*args, check=True, extra_env=None):
        done = subprocess.run([_tool(args[0]), *map(str, args[1:])], cwd=work, env={**env, **(extra_env or {})},
                              capture_output=True, text=True, timeout=300, check=False)
        if check:
            assert done.returncode == 0, f"{' '.join(map(str, args))}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    run("ansible-galaxy", "collection", "build", "--output-path", base / "dist", REPO)
    (tarball,) = (base / "dist").glob("hvc-horovod_cluster-*.tar.gz")
    # The dependencies of galaxy.yml must be met by the collections already installed (the `ansible`
    # package's): no Galaxy here, and a range they miss would send ansible-galaxy to it.
    run("ansible-galaxy", "collection", "install", tarball, "-p", base / "collections")
    return tarball, run


def test_version_matches_pyproject():
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text(encoding="utf-8"))
    pyproject = re.search(r'(?m)^version\s*=\s*"([^"]+)"', (REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert galaxy["version"] == pyproject.group(1)
    assert f"{galaxy['namespace']}.{galaxy['name']}" == FQCN


def test_requirements_list_the_collection_dependencies():
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text(encoding="utf-8"))
    requirements = yaml.safe_load((REPO / "requirements.yml").read_text(encoding="utf-8"))
    listed = {c["name"]: c.get("version") for c in requirements["collections"]}
    for name, version in galaxy["dependencies"].items():
        assert listed.get(name) == version, f"requirements.yml: {name} {listed.get(name)} vs galaxy.yml {version}"


def test_every_fqcn_the_content_calls_is_a_declared_dependency():
    """A module or filter called by FQCN from a collection requirements.yml does not list is missing on a
    user's ansible-core (community.crypto once was)."""
    requirements = yaml.safe_load((REPO / "requirements.yml").read_text(encoding="utf-8"))
    listed = {c["name"] for c in requirements["collections"]} | {"ansible.builtin", "ansible.legacy", FQCN}
    used = set()
    for folder in ("roles", "playbooks", "molecule"):
        for path in (REPO / folder).rglob("*.yml"):
            used |= set(re.findall(r"\b([a-z0-9_]+\.[a-z0-9_]+)\.[a-z0-9_]+:", path.read_text(encoding="utf-8")))
    used = {name for name in used if name.split(".")[0] in ("ansible", "community", "containers", "hvc")}
    assert used - listed == set()


def test_the_artifact_carries_the_collection_only(collection):
    tarball, _ = collection
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"MANIFEST.json", "FILES.json", "LICENSE", "README.md", "CHANGELOG.md", "requirements.yml",
                    "site.yml", "meta", "docs", "playbooks", "plugins", "roles"}
    assert "playbooks/site.yml" in names and "meta/runtime.yml" in names
    for role in ROLES:
        assert f"roles/{role}/meta/argument_specs.yml" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".keep"))]
    # docs/ and the CHANGELOG grow with the project (400.8 kB on 2026-12-08); what this guards against, a venv,
    # the test fixtures or a cache swept in, is megabytes
    assert tarball.stat().st_size < 500_000, f"{tarball.stat().st_size} bytes"


def test_site_playbook_by_fqcn_syntax_check(collection):
    _, run = collection
    done = run("ansible-playbook", f"{FQCN}.site", "-i", REPO / "inventories" / "lab", "--syntax-check")
    assert "ansible_collections/hvc/horovod_cluster/playbooks/site.yml" in done.stdout
    # roles resolve inside the collection, not through a roles path
    tasks = run("ansible-playbook", f"{FQCN}.site", "-i", REPO / "inventories" / "lab", "--list-tasks").stdout
    assert f"{FQCN}.preflight : " in tasks and f"{FQCN}.horovod : " in tasks


def test_plan_runs_from_the_installed_collection(collection):
    """Every decide step over one recorded host (the GPU one: CUDA, NCCL and Horovod filters), no connection."""
    _, run = collection
    done = run("ansible-playbook", f"{FQCN}.plan", "-i", PLAN_INVENTORY, "-l", "gpu-ubuntu2404", check=False,
               extra_env={"ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json", "ANSIBLE_SHOW_CUSTOM_STATS": "1"})
    result = Run(done.returncode, json.loads(done.stdout[done.stdout.index("{"):]), done.stderr)
    assert result.rc == 0, result.failure_messages("gpu-ubuntu2404") or done.stderr[-3000:]
    plan = result.plan["gpu-ubuntu2404"]
    assert plan["preflight"]["action"] == "pass"
    assert {"cuda_toolkit", "nccl", "horovod"} <= set(plan)


def _doc_json(run, plugin_type: str, names: list[str]) -> dict:
    done = run("ansible-doc", "-t", plugin_type, "--json", *[f"{FQCN}.{n}" for n in names], check=False)
    assert done.returncode == 0 and "ERROR" not in done.stderr, done.stderr
    docs = json.loads(done.stdout)
    assert sorted(docs) == sorted(f"{FQCN}.{n}" for n in names), done.stderr
    return docs


def test_ansible_doc_reads_every_module(collection):
    _, run = collection
    for name, entry in _doc_json(run, "module", MODULES).items():
        assert entry["doc"]["short_description"] and entry["doc"]["description"], name
        assert entry["examples"].strip(), f"{name}: no EXAMPLES"


def test_ansible_doc_reads_every_filter(collection):
    _, run = collection
    assert FILTERS, "no filter plugins found"
    docs = _doc_json(run, "filter", FILTERS)
    for name, entry in docs.items():
        doc = entry["doc"]
        assert doc["name"] == name.rsplit(".", 1)[1], f"{name}: DOCUMENTATION names {doc['name']}"
        assert doc["short_description"] and doc["description"], name
        assert "_input" in doc["options"], f"{name}: _input undocumented"
        for option, spec in doc["options"].items():
            assert spec.get("description") and spec.get("type"), f"{name}: option {option}"
        for option in re.split(r"\s*,\s*", doc.get("positional", "")) if doc.get("positional") else []:
            assert option in doc["options"], f"{name}: positional {option} undocumented"
        assert f"{FQCN}.{doc['name']}" in entry["examples"], f"{name}: EXAMPLES do not use the filter by FQCN"
        assert entry["return"]["_value"]["description"], f"{name}: RETURN _value"


def test_ansible_doc_reads_every_callback(collection):
    _, run = collection
    assert CALLBACKS, "no callback plugins found"
    for name, entry in _doc_json(run, "callback", CALLBACKS).items():
        assert entry["doc"]["short_description"] and entry["doc"]["description"], name


def test_ansible_doc_reads_every_role(collection):
    _, run = collection
    for name, entry in _doc_json(run, "role", ROLES).items():
        assert "main" in entry["entry_points"], name
        for point, spec in entry["entry_points"].items():
            assert spec.get("short_description"), f"{name}/{point}"
            for option, option_spec in (spec.get("options") or {}).items():
                assert option_spec.get("description") and option_spec.get("type"), f"{name}/{point}: {option}"
