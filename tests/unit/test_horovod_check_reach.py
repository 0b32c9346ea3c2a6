"""The launcher's reach script (roles/horovod_check/vars/main.yml): one ssh per host, all at once.

`ssh` here is a stand-in on PATH that answers per host name (the sandbox check tests reach real hosts,
and a stopped one: tests/integration/test_check_sandbox.py); what is tested is the script's own logic.
"""
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = yaml.safe_load((ROOT / "roles" / "horovod_check" / "vars" / "main.yml").read_text())[
    "__horovod_check_reach_script"]

# up*: reached after a second; now*: reached at once; hang*: never answers; anything else: ssh's own exit
# code for a failure. The host is the argument before the last ("true").
FAKE_SSH = """#!/bin/sh
host=$(eval echo \\${$(($# - 1))})
case "$host" in
  up*) sleep 1; exit 0 ;;
  now*) exit 0 ;;
  hang*) sleep 60 ;;
  *) exit 255 ;;
esac
"""


def _reach(tmp_path: Path, timeout: int, *hosts: str) -> tuple[dict, float]:
    ssh = tmp_path / "ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(timeout), *hosts], capture_output=True, text=True,
                         env={"PATH": f"{tmp_path}:/usr/bin:/bin"}, check=True)
    return json.loads(run.stdout), time.monotonic() - start


def test_each_host_reached_or_not_and_all_at_once(tmp_path):
    hosts = [f"up{n}" for n in range(6)] + ["down1"]
    reached, seconds = _reach(tmp_path, 5, *hosts)
    assert reached == {**{f"up{n}": True for n in range(6)}, "down1": False}
    assert seconds < 4, f"six 1-second connections took {seconds:.1f} s: not concurrent"


def test_a_hung_ssh_counts_as_not_reached(tmp_path):
    # The script waits for ssh its ConnectTimeout plus 30 s; a timeout of -29 makes that 1 s here.
    reached, seconds = _reach(tmp_path, -29, "hang1", "now1")
    assert reached == {"hang1": False, "now1": True}
    assert seconds < 10


def test_no_host_prints_an_empty_map(tmp_path):
    assert _reach(tmp_path, 5)[0] == {}
