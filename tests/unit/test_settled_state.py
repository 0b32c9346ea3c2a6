"""site.yml's fast path: the state fingerprint (module hvc_state_fingerprint) changes with every drift the
sandbox's drift test makes and with nothing a working cluster does by itself; the inputs digest (action
hvc_state_inputs) changes with a host's project variables, the cluster's members and the collection, and not
with the settings that only steer a run."""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

import hvc_state_fingerprint as fp

REPO = Path(__file__).resolve().parents[2]


def _load_inputs():
    spec = importlib.util.spec_from_file_location("hvc_state_inputs", REPO / "plugins/action/hvc_state_inputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def host(tmp_path):
    """A host's folders as a rollout leaves them: a venv with an installed package, a marker, a status file."""
    prefix = tmp_path / "opt" / "horovod"
    package = prefix / "venv" / "lib" / "python3.11" / "site-packages" / "horovod"
    package.mkdir(parents=True)
    (package / "mpi_lib_v2.so").write_bytes(b"\x7fELF compiled")
    (package / "__init__.py").write_text("__version__ = '0.28.1'\n")
    (prefix / "venv" / "bin").mkdir()
    os.symlink("/usr/bin/python3", prefix / "venv" / "bin" / "python")
    (prefix / "venv" / ".horovod-platform-key.json").write_text('{"verified": {}}')
    status = tmp_path / "dpkg-status"
    status.write_text("Package: libuv1-dev\nStatus: install ok installed\nVersion: 1.44.2-1\n\n")
    return {"prefix": prefix, "package": package, "status": status, "paths": [str(prefix), str(status)]}


def _digest(host, **kwargs):
    return fp.fingerprint(host["paths"], **kwargs)["digest"]


def test_same_state_same_digest_and_absent_paths_count(host, tmp_path):
    first = fp.fingerprint(host["paths"] + [str(tmp_path / "absent")])
    assert first == fp.fingerprint(host["paths"] + [str(tmp_path / "absent")])
    assert first["files"] >= 6 and set(first["paths"]) == set(host["paths"]) | {str(tmp_path / "absent")}
    (tmp_path / "absent").write_text("now here")
    assert fp.fingerprint(host["paths"] + [str(tmp_path / "absent")])["digest"] != first["digest"]


@pytest.mark.parametrize("drift", ["package removed", "compiled file deleted", "marker deleted", "file rewritten",
                                   "mode changed", "link retargeted", "env deleted"])
def test_each_drift_changes_the_digest_and_names_its_path(host, drift):
    before = fp.fingerprint(host["paths"])
    prefix, package = host["prefix"], host["package"]
    if drift == "package removed":  # apt-get remove rewrites the status file
        host["status"].write_text("Package: libuv1-dev\nStatus: deinstall ok config-files\nVersion: 1.44.2-1\n\n")
    elif drift == "compiled file deleted":
        (package / "mpi_lib_v2.so").unlink()
    elif drift == "marker deleted":
        (prefix / "venv" / ".horovod-platform-key.json").unlink()
    elif drift == "file rewritten":  # same size, new time
        target = package / "__init__.py"
        target.write_text("__version__ = '0.28.2'\n")
        os.utime(target, ns=(1, 1))
    elif drift == "mode changed":
        (package / "mpi_lib_v2.so").chmod(0o600)
    elif drift == "link retargeted":
        (prefix / "venv" / "bin" / "python").unlink()
        os.symlink("/usr/bin/python3.12", prefix / "venv" / "bin" / "python")
    elif drift == "env deleted":
        shutil.rmtree(prefix / "venv")
    after = fp.fingerprint(host["paths"])
    assert after["digest"] != before["digest"]
    changed = [p for p in after["paths"] if after["paths"][p] != before["paths"][p]]
    assert changed == [str(host["status"] if drift == "package removed" else prefix)]


def test_byte_code_and_the_excluded_record_do_not_count(host):
    record = host["prefix"] / "rollout-state.json"
    before = _digest(host, exclude=[str(record)])
    cache = host["package"] / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-311.pyc").write_bytes(b"byte code")
    record.write_text('{"digest": "..."}')
    assert _digest(host, exclude=[str(record)]) == before
    assert _digest(host) != before  # the record counts where it is not excluded


def test_the_host_itself_counts(host, monkeypatch):
    before = _digest(host)
    monkeypatch.setattr(fp.os, "cpu_count", lambda: 1024)
    assert _digest(host) != before


def test_a_file_given_by_path_counts_by_content(host):
    status = host["status"]
    before = _digest(host)
    stat = status.stat()
    status.write_text(status.read_text().replace("1.44.2-1", "1.44.2-2"))  # same size
    os.utime(status, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same time
    assert _digest(host) != before


def test_inputs_follow_variables_members_and_content(tmp_path):
    inputs = _load_inputs()
    root = tmp_path / "collection"
    for part in ("roles/horovod/tasks", "roles/cluster_defaults/defaults", "roles/hostfile/tasks", "playbooks",
                 "plugins/modules"):
        (root / part).mkdir(parents=True)
    (root / "roles/horovod/tasks/main.yml").write_text("---\n")
    (root / "site.yml").write_text("---\n")
    task_vars = {"horovod_version": "0.28.1", "cluster_prefix": "/opt/horovod", "hostfile_slots": 2,
                 "proxy_env": {}, "ansible_host": "10.88.0.2", "inventory_hostname": "node1",
                 "unrelated": "x", "groups": {"cluster": ["node2", "node1"], "all": ["node1", "node2"]}}
    ignore = ["cluster_rollout_smoke"]
    base = inputs.inputs(task_vars, ignore, root)["digest"]
    same = [{"unrelated": "y"}, {"cluster_rollout_smoke": "always"}, {"inventory_hostname": "node1"},
            {"groups": {"cluster": ["node1", "node2"], "all": ["node1", "node2", "other"]}}]
    for change in same:
        inputs._CONTENT_DIGEST.clear()
        assert inputs.inputs({**task_vars, **change}, ignore, root)["digest"] == base, change
    differ = [{"horovod_version": "0.28.2"}, {"hostfile_slots": 4}, {"ansible_host": "10.88.0.9"},
              {"proxy_env": {"https_proxy": "http://proxy:3128"}}, {"cluster_serial": 1},
              {"groups": {"cluster": ["node1"]}}]
    for change in differ:
        assert inputs.inputs({**task_vars, **change}, ignore, root)["digest"] != base, change
    # A role's README is documentation, not read by a rollout; its tasks are.
    (root / "roles/horovod/README.md").write_text("# horovod, documented again\n")
    inputs._CONTENT_DIGEST.clear()
    assert inputs.inputs(task_vars, ignore, root)["digest"] == base
    (root / "roles/horovod/tasks/main.yml").write_text("---\n- name: edited\n")
    inputs._CONTENT_DIGEST.clear()
    edited = inputs.inputs(task_vars, ignore, root)
    assert edited["digest"] != base and edited["parts"]["variables"] == inputs.inputs(task_vars, ignore, root)[
        "parts"]["variables"]


def test_the_ignored_settings_are_project_settings():
    """Each name the fast path ignores is a real setting (a typo would make a steering setting count)."""
    import yaml

    from hvc_settings import known_names

    ignored = yaml.safe_load((REPO / "playbooks/vars/settled.yml").read_text())["__hvc_state_ignore"]
    assert set(ignored) <= set(known_names(str(REPO / "roles"))), set(ignored) - set(known_names(str(REPO / "roles")))


def test_an_unreadable_file_counts_by_its_size_mode_and_time(host, monkeypatch):
    """A rootless host may not read every path (a system file): the digest still comes, and still moves."""
    def refuse(path):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(fp, "_file_digest", refuse)
    before = _digest(host)
    host["status"].write_text("Package: libuv1-dev\nStatus: deinstall ok config-files\n")
    assert _digest(host) != before


def test_a_path_inside_another_listed_folder_is_walked_once(host):
    env = str(host["prefix"] / "venv")
    both = fp.fingerprint(host["paths"] + [env])
    assert both["digest"] == fp.fingerprint(host["paths"])["digest"] and env not in both["paths"]


def test_a_controller_without_the_mesh_key_or_the_records_is_named(tmp_path):
    """A host is settled only where the controller still holds the cluster keypair and the host's mesh and
    hostfile records (each role's defaults name them where the inventory does not): a controller that lacks them
    (another checkout, a wiped cache) rolls out in full, or a later --limit run would break the mesh."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    inputs = _load_inputs()
    cache, keys = tmp_path / "cache", tmp_path / "own-keys"
    task_vars = {"inventory_hostname": "node1", "cluster_records_dir": str(cache / "records" / "lab"),
                 "cluster_cache_dir": str(cache), "cluster_id": "lab"}
    templar = Templar(loader=DataLoader())
    wanted = [f"{cache}/ssh_mesh/lab/id_horovod_cluster", f"{cache}/ssh_mesh/lab/id_horovod_cluster.pub",
              f"{cache}/records/lab/ssh_mesh/node1.json", f"{cache}/records/lab/hostfile/node1.json"]
    assert inputs.controller_missing(task_vars, templar) == wanted
    for path in map(Path, wanted[1:]):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    assert inputs.controller_missing(task_vars, templar) == wanted[:1]
    Path(wanted[0]).write_text("key")
    assert inputs.controller_missing(task_vars, templar) == []
    # The inventory's own key folder counts, not the role's default.
    assert inputs.controller_missing({**task_vars, "ssh_mesh_key_dir": str(keys)}, templar) == [
        f"{keys}/id_horovod_cluster", f"{keys}/id_horovod_cluster.pub"]
