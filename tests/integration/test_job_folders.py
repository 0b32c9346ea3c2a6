"""playbooks/tasks/prune_jobs.yml, run.yml's step after it creates a job folder: each `run` made one under
~/.cache/horovod-cluster/jobs and none was ever removed (issue 45). Now the newest __job_keep stay, the job's own
among them, and nothing that is not named as a job id is touched."""
from __future__ import annotations

import json

from ansible_run import REPO, ansible_playbook_json, local_inventory


def test_only_the_newest_job_folders_stay(tmp_path):
    jobs = tmp_path / "jobs"
    old = [f"202611{day:02d}-010203-0000abcd" for day in range(1, 26)]  # 25 earlier jobs, by start time
    for name in old + ["notes", "20261101-010203-nothex!"]:
        (jobs / name).mkdir(parents=True)
    current = jobs / "20261101-000000-00000000"  # sorts first: its own folder is kept whatever its name
    current.mkdir()
    playbook = tmp_path / "prune.yml"
    playbook.write_text(json.dumps([{"hosts": "cluster", "gather_facts": False, "tasks": [
        {"ansible.builtin.include_tasks": str(REPO / "playbooks" / "tasks" / "prune_jobs.yml")}]}]))
    run = ansible_playbook_json([playbook, "-i", local_inventory(tmp_path), "-e",
                                 json.dumps({"__job_dir": str(current), "__job_keep": 5})])
    assert run.rc == 0, run.stderr[-3000:]
    kept = [current.name, *old[-4:], "notes", "20261101-010203-nothex!"]
    assert sorted(p.name for p in jobs.iterdir()) == sorted(kept)
