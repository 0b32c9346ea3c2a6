"""HOROVOD_CLUSTER_CACHE moves everything the roles keep on the controller (issue 45 item 12): ssh_mesh's
keypair and its hosts' records, run for real on this machine, and where horovod collects the built wheels and
hostfile its records (each role's own defaults, read in a play)."""
from __future__ import annotations

import json
from pathlib import Path

from ansible_run import ansible_playbook_json, local_inventory


def _folders(tmp_path: Path, cache: Path, inventory: Path) -> dict:
    """Run ssh_mesh's keypair tasks for real with the cache variable set; the folders the roles' defaults give."""
    roles = Path(__file__).resolve().parents[2] / "roles"
    (tmp_path / "play.yml").write_text(json.dumps([{
        "hosts": "all", "gather_facts": False, "roles": ["hvc.horovod_cluster.cluster_defaults"], "tasks": [
            {"ansible.builtin.include_role": {"name": "hvc.horovod_cluster.ssh_mesh", "tasks_from": "keypair",
                                              "public": True}},
            {"ansible.builtin.include_vars": {"file": str(roles / "horovod/defaults/main.yml")}},
            {"ansible.builtin.include_vars": {"file": str(roles / "hostfile/defaults/main.yml")}},
            {"name": "Show the folders", "ansible.builtin.debug": {"msg": {
                "key": "{{ ssh_mesh_key_dir }}", "mesh_records": "{{ ssh_mesh_record_dir }}",
                "wheels": "{{ horovod_artifacts_dir }}", "hostfile_records": "{{ hostfile_record_dir }}",
                "cluster_id": "{{ cluster_id }}"}}}]}]))
    run = ansible_playbook_json([tmp_path / "play.yml", "-i", inventory], env={"HOROVOD_CLUSTER_CACHE": str(cache)})
    assert run.rc == 0, run.data
    return next(r["msg"] for _, name, r in run.results() if name == "Show the folders")


def test_the_cache_variable_moves_the_mesh_key_records_and_wheels(tmp_path):
    cache = tmp_path / "cache"
    shown = _folders(tmp_path, cache, local_inventory(tmp_path))
    cluster = shown.pop("cluster_id")
    records = cache / "records" / cluster
    assert shown == {"key": f"{cache}/ssh_mesh/{cluster}", "mesh_records": f"{records}/ssh_mesh",
                     "wheels": f"{cache}/wheels", "hostfile_records": f"{records}/hostfile"}
    # The keypair and the records folder really made there, private to the user; the key names its cluster.
    key = cache / "ssh_mesh" / cluster / "id_horovod_cluster"
    assert key.read_text().startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    assert key.stat().st_mode & 0o077 == 0
    assert key.with_suffix(".pub").read_text().split()[2:] == ["horovod-cluster", "mesh", "key", cluster]
    assert Path(records, "ssh_mesh").is_dir() and Path(records, "ssh_mesh").stat().st_mode & 0o077 == 0


def test_two_inventories_in_one_folder_share_no_key_and_no_records(tmp_path):
    """Issue 45 items 3 and 12: the key and the records are the cluster's (its inventory sources), not the
    controller's nor the inventory folder's (records were keyed by the folder, the key by nothing)."""
    cache = tmp_path / "cache"
    first = local_inventory(tmp_path)
    second = first.with_name("other.json")
    second.write_text(first.read_text())
    one, two = _folders(tmp_path, cache, first), _folders(tmp_path, cache, second)
    assert one["cluster_id"] != two["cluster_id"]
    assert one["key"] != two["key"] and one["mesh_records"] != two["mesh_records"]
    keys = [Path(shown["key"], "id_horovod_cluster").read_text() for shown in (one, two)]
    assert keys[0] != keys[1], "one keypair per cluster"
