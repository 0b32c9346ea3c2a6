"""hvc_platform_facts' dpkg_interrupted, run by Ansible itself over a dpkg journal folder of the test's own."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_run import module_env

REPO = Path(__file__).resolve().parents[2]
ANSIBLE = shutil.which("ansible") or str(Path(sys.executable).parent / "ansible")

pytestmark = pytest.mark.skipif(not Path(ANSIBLE).exists(), reason="ansible CLI not installed")


def dpkg_interrupted(updates: Path) -> bool:
    env = module_env()
    proc = subprocess.run(
        [ANSIBLE, "localhost", "-c", "local", "-i", "localhost,", "--check", "-m", "hvc_platform_facts",
         "-a", json.dumps({"dpkg_updates_path": str(updates), "nvidia_smi": "/nonexistent/nvidia-smi"})],
        env=env, capture_output=True, text=True, cwd=updates.parent, timeout=120)
    result = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]
    assert not result.get("failed") and result["changed"] is False, result
    return result["ansible_facts"]["hvc_platform"]["dpkg_interrupted"]


def test_journal_files_mean_interrupted_unless_dpkg_holds_its_lock(tmp_path):
    updates = tmp_path / "updates"
    updates.mkdir()
    (tmp_path / "lock").write_bytes(b"")
    assert dpkg_interrupted(updates) is False
    (updates / "tmp.i").write_bytes(b"")  # dpkg's scratch file: apt ignores it too
    assert dpkg_interrupted(updates) is False
    (updates / "0000").write_bytes(b"Package: libuv1-dev\n")
    assert dpkg_interrupted(updates) is True
    # dpkg (or apt) running now holds the lock (fcntl, as they take it): not interrupted, the apt tasks wait
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; h = open(sys.argv[1], 'r+b'); "
                               "fcntl.lockf(h, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
                               str(tmp_path / "lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert dpkg_interrupted(updates) is False
    finally:
        holder.kill()
        holder.wait()
