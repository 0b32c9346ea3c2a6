"""The sandbox on real podman: up, up again (nothing changes, fast), status, down (nothing left).

Uses its own prefix and network, so the main sandbox (hvc-node*) is left alone.
"""
import os
import shutil
import subprocess
import time

import pytest
import yaml

from horovod_cluster.sandbox import Sandbox, node_image

pytestmark = pytest.mark.skipif(
    shutil.which("podman") is None
    or subprocess.run(["podman", "image", "exists", node_image("amd64")]).returncode != 0,
    reason="needs podman and the amd64 sandbox image (horovod-cluster sandbox build)")


def _podman_names(kind: str) -> str:
    fmt = "{{.Names}}" if kind == "ps" else "{{.Name}}"
    cmd = ["podman", "ps", "-a", "--format", fmt] if kind == "ps" else ["podman", "network", "ls", "--format", fmt]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def test_up_twice_status_and_down(tmp_path):
    box = Sandbox(prefix="hvc-lifecycle", network="hvc-lifecycle", inventory_dir=tmp_path / "inv",
                  state_dir=tmp_path / "state")
    try:
        hosts = box.up(count=2)
        assert [h.name for h in hosts] == ["hvc-lifecycle1", "hvc-lifecycle2"]
        assert all(h.address for h in hosts)
        inventory = (tmp_path / "inv" / "hosts.yml").read_text()
        ids = subprocess.run(["podman", "ps", "-q", "--filter", "name=hvc-lifecycle"],
                             capture_output=True, text=True).stdout.split()

        start = time.monotonic()
        again = box.up(count=2)
        elapsed = time.monotonic() - start
        assert elapsed < 15, f"second up took {elapsed:.1f} s"
        assert again == hosts
        assert (tmp_path / "inv" / "hosts.yml").read_text() == inventory
        assert subprocess.run(["podman", "ps", "-q", "--filter", "name=hvc-lifecycle"],
                              capture_output=True, text=True).stdout.split() == ids

        # Ansible reaches both hosts over SSH with host key checking on.
        ping = subprocess.run(["ansible", "-i", str(tmp_path / "inv"), "all", "-m", "ansible.builtin.ping"],
                              capture_output=True, text=True,
                              env={**os.environ, "ANSIBLE_CACHE_PLUGIN": "memory"})
        assert ping.returncode == 0, ping.stdout + ping.stderr
        assert ping.stdout.count("SUCCESS") == 2
        data = yaml.safe_load(inventory)
        assert "StrictHostKeyChecking=yes" in data["all"]["vars"]["ansible_ssh_common_args"]

        assert [h.name for h in box.status()] == ["hvc-lifecycle1", "hvc-lifecycle2"]
    finally:
        removed = box.down()
    assert removed == ["hvc-lifecycle1", "hvc-lifecycle2"]
    assert "hvc-lifecycle" not in _podman_names("ps")
    assert "hvc-lifecycle" not in _podman_names("network")
    assert box.status() == []
    assert not (tmp_path / "inv" / "hosts.yml").exists()


def test_up_replaces_a_host_whose_processes_are_gone(tmp_path):
    """A machine image or reboot can keep podman's record "running" for a container whose
    processes are gone (CI once failed so: sshd never answered). `up` must replace such a host."""
    box = Sandbox(prefix="hvc-stale", network="hvc-stale", inventory_dir=tmp_path / "inv",
                  state_dir=tmp_path / "state")
    try:
        box.up(count=1)
        state = subprocess.run(["podman", "inspect", "hvc-stale1", "--format",
                                "{{.Id}} {{.State.ConmonPid}} {{.State.Pid}}"],
                               capture_output=True, text=True, check=True).stdout.split()
        old_id, conmon, pid = state[0], int(state[1]), int(state[2])
        os.kill(conmon, 9)  # conmon first, so podman is not told the container exited
        os.kill(pid, 9)
        time.sleep(1)

        hosts = box.up(count=1)
        new_id = subprocess.run(["podman", "inspect", "hvc-stale1", "--format", "{{.Id}}"],
                                capture_output=True, text=True, check=True).stdout.strip()
        assert new_id != old_id
        ping = subprocess.run(["ansible", "-i", str(tmp_path / "inv"), "all", "-m", "ansible.builtin.ping"],
                              capture_output=True, text=True,
                              env={**os.environ, "ANSIBLE_CACHE_PLUGIN": "memory"})
        assert ping.returncode == 0, ping.stdout + ping.stderr
        assert hosts[0].address in (tmp_path / "inv" / "hosts.yml").read_text()
    finally:
        box.down()
    assert "hvc-stale" not in _podman_names("ps")
