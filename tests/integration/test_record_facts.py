"""playbooks/record_facts.yml writes what plan.yml reads, and keeps it to the user: the facts hold each
host's environment (ansible_env: proxy credentials, tokens), so the files are 0600 in a 0700 folder
(issue 45 item 7; they were 0644 in a 0755 folder)."""
from __future__ import annotations

import json
import stat

from ansible_run import local_inventory, run_playbook


def test_recorded_facts_are_the_users_own(tmp_path, monkeypatch):
    monkeypatch.setenv("HVC_TEST_PROXY", "http://user:5ecret@proxy.invalid:3128")
    record = tmp_path / "facts"
    run = run_playbook("record_facts.yml", local_inventory(tmp_path), extra_vars={"cluster_record_dir": str(record)})
    assert run.rc == 0, run.stderr[-3000:]
    written = json.loads((record / "localhost.json").read_text())
    assert written["hvc_platform"]["system"] and "ansible_env" in written  # what plan.yml reads
    assert written["ansible_env"]["HVC_TEST_PROXY"].endswith("@proxy.invalid:3128")
    assert stat.S_IMODE(record.stat().st_mode) == 0o700
    assert stat.S_IMODE((record / "localhost.json").stat().st_mode) == 0o600
    assert not [key for key in written if key.startswith("ansible_ssh_host_key_")]
