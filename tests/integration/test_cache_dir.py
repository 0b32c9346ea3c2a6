"""HOROVOD_CLUSTER_CACHE moves everything the roles keep on the controller (issue 45 item 12): ssh_mesh's
keypair and its hosts' records, run for real on this machine, and where horovod collects the built wheels and
hostfile its records (each role's own defaults, read in a play)."""
from __future__ import annotations

import json
from pathlib import Path

from ansible_run import ansible_playbook_json, local_inventory


def test_the_cache_variable_moves_the_mesh_key_records_and_wheels(tmp_path):
    cache = tmp_path / "cache"
    roles = Path(__file__).resolve().parents[2] / "roles"
    (tmp_path / "play.yml").write_text(json.dumps([{
        "hosts": "all", "gather_facts": False, "roles": ["hvc.horovod_cluster.cluster_defaults"], "tasks": [
            {"ansible.builtin.include_role": {"name": "hvc.horovod_cluster.ssh_mesh", "tasks_from": "keypair",
                                              "public": True}},
            {"ansible.builtin.include_vars": {"file": str(roles / "horovod/defaults/main.yml")}},
            {"ansible.builtin.include_vars": {"file": str(roles / "hostfile/defaults/main.yml")}},
            {"name": "Show the folders", "ansible.builtin.debug": {"msg": {
                "key": "{{ ssh_mesh_key_dir }}", "mesh_records": "{{ ssh_mesh_record_dir }}",
                "wheels": "{{ horovod_artifacts_dir }}", "hostfile_records": "{{ hostfile_record_dir }}"}}}]}]))
    run = ansible_playbook_json([tmp_path / "play.yml", "-i", local_inventory(tmp_path)],
                                env={"HOROVOD_CLUSTER_CACHE": str(cache)})
    assert run.rc == 0, run.data
    shown = next(r["msg"] for _, name, r in run.results() if name == "Show the folders")
    records = shown["mesh_records"].rsplit("/", 1)[0]
    assert Path(records).parent == cache / "records", shown
    assert shown == {"key": f"{cache}/ssh_mesh", "mesh_records": f"{records}/ssh_mesh",
                     "wheels": f"{cache}/wheels", "hostfile_records": f"{records}/hostfile"}
    # The keypair and the records folder really made there, private to the user.
    assert (cache / "ssh_mesh" / "id_horovod_cluster").read_text().startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    assert (cache / "ssh_mesh" / "id_horovod_cluster").stat().st_mode & 0o077 == 0
    assert Path(records, "ssh_mesh").is_dir() and Path(records, "ssh_mesh").stat().st_mode & 0o077 == 0
