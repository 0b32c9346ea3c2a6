"""Rootless mode (cluster_rootless, issue 14 item 5) on a real host: site.yml as a user without root or sudo.

A sandbox of this module's own (hvc-root1 on the network hvc-root, its own key and inventory). As root, through
`podman exec`, the test plays the site admin of an HPC login node: it installs the system packages such a node
has (compiler, Python headers and venv, Open MPI), removes sudo and creates `hvcuser` with the sandbox's
key. Then `Cluster(...).rollout()` runs as hvcuser with `ansible_become: false`, `cluster_rootless: true`, and the
test asserts the host's real state: everything under /home/hvcuser, owned by hvcuser, no package installed, no
system folder of the project. Last, with python3-venv removed by the admin, plan and rollout are refused by
preflight naming the package, and nothing changes. Horovod comes from the controller's wheel cache when it has
the amd64 key (the sandbox run before the sandbox tests fills it). Slow tier (HVC_SLOW=1): 126 s for both tests on
a quiet machine with the wheel cached; 8 to 10 min in CI under load (setup 65 s, rollout + check 494 s, the
refusals 33 s). Without a cached wheel a compile would add ~11 min.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from horovod_cluster import Cluster
from own_sandbox import own_sandbox

ROOT = Path(__file__).resolve().parents[2]
HOST = "hvc-root1"
USER = "hvcuser"
HOME = f"/home/{USER}"
# What an HPC login node has and what preflight asks for (each role's meta/rules.yml); iperf3 is left
# out on purpose: the rollout must not install it (the check then has no link bandwidth).
ADMIN_PACKAGES = ["build-essential", "python3-dev", "python3-venv", "openmpi-bin", "libopenmpi-dev"]
# Folders a root rollout writes (hostfile, venv, build, check scripts, tool prefix): a rootless one never.
SYSTEM_PATHS = ["/opt/horovod", "/etc/horovod", "/var/tmp/horovod-build", "/opt/horovod-cluster",
                "/var/log/horovod-build-*"]
# Pruned from the file listings: the kernel's, systemd's and logging's own churn, and /tmp (Ansible's
# remote_tmp is ~/.ansible/tmp; the listings themselves go to /root).
PRUNE = ["/proc", "/sys", "/dev", "/run", "/tmp", "/var/log", "/var/lib/systemd", "/var/cache", "/root"]

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("podman") is None, reason="needs podman (scripts/setup.sh)"),
    pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                       reason="slow (a rollout of a host of its own, 8-10 min): set HVC_SLOW=1"),
]


def root_sh(script: str, check: bool = True) -> str:
    """A shell command as root on the host: the admin's hand, never the rollout's."""
    run = subprocess.run(["podman", "exec", HOST, "sh", "-c", script], capture_output=True, text=True)
    if check and run.returncode != 0:
        raise AssertionError(f"{script!r} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    return run.stdout


def packages() -> list[str]:
    return root_sh("dpkg-query -W -f '${Package} ${Version} ${Status}\\n' | sort").splitlines()


def files() -> dict[str, str]:
    """Every path on the host's root file system but the pruned ones: {path: owner}."""
    prune = " -o ".join(f"-path {p}" for p in PRUNE)
    out = root_sh(f"find / -xdev \\( {prune} \\) -prune -o -printf '%u %p\\n'")
    return {line.split(" ", 1)[1]: line.split(" ", 1)[0] for line in out.splitlines() if " " in line}


def apt_install(names: list[str]) -> None:
    names = " ".join(names)
    root_sh("export DEBIAN_FRONTEND=noninteractive; "
            f"apt-get install -y -qq --no-install-recommends {names} >/dev/null 2>&1 || "
            f"{{ apt-get update -qq && apt-get install -y -qq --no-install-recommends {names} >/dev/null; }}")


@pytest.fixture(scope="module")
def rootless(tmp_path_factory):
    """The one-host sandbox, set up by its 'admin', and an inventory for hvcuser: (inventory, runs folder)."""
    root = tmp_path_factory.mktemp("rootless")
    with own_sandbox(root, "hvc-root", count=1, inventory="sandbox") as (sandbox, (host,)):
        apt_install(ADMIN_PACKAGES)
        root_sh("export DEBIAN_FRONTEND=noninteractive SUDO_FORCE_REMOVE=yes; apt-get purge -y -qq sudo >/dev/null")
        root_sh(f"useradd -m -s /bin/bash {USER} && install -d -m 700 -o {USER} -g {USER} {HOME}/.ssh && "
                f"install -m 600 -o {USER} -g {USER} /root/.ssh/authorized_keys {HOME}/.ssh/authorized_keys")
        assert root_sh("command -v sudo || true").strip() == "", "sudo must be absent"

        inventory = root / "inventory"
        shutil.copytree(ROOT / "inventories" / "sandbox" / "group_vars", inventory / "group_vars")
        # The sandbox's root settings (the hostfile in /etc, the mesh for root) would be refused rootless.
        for name in ("hostfile.yml", "ssh_mesh.yml"):
            (inventory / "group_vars" / "all" / name).unlink()
        hosts = {"all": {
            "vars": {
                "ansible_user": USER,
                "ansible_become": False,
                "cluster_rootless": True,
                "ansible_ssh_private_key_file": str(sandbox.key_file),
                "ansible_ssh_common_args": f"-o UserKnownHostsFile={sandbox.known_hosts} -o StrictHostKeyChecking=yes",
                "ssh_mesh_key_dir": str(root / "ssh_mesh"),
            },
            "children": {"cluster": {"children": {"cpu_nodes": {"hosts": {HOST: {"ansible_host": host.address}}}}}},
        }}
        (inventory / "hosts.yml").write_text("---\n" + yaml.safe_dump(hosts, sort_keys=False))
        yield inventory, root / "runs"


def test_rollout_as_a_user_without_root(rootless):
    inventory, runs = rootless
    before_packages, before_files = packages(), files()

    result = Cluster(inventory, artifacts_dir=runs).rollout()
    assert result.ok, result.to_json()

    # the environment, with Horovod importable as the user, and the marker the horovod role writes last
    venv = f"{HOME}/.horovod/venv"
    probe = root_sh(f"su - {USER} -c '{venv}/bin/python -c \"import horovod.torch, torch; print(horovod.__version__)\"'")
    assert probe.strip() == "0.28.1", probe
    root_sh(f"test -s {venv}/.horovod-platform-key.json")
    # nothing of a root rollout, no package installed or removed
    assert root_sh(f"ls -d {' '.join(SYSTEM_PATHS)} 2>/dev/null || true").strip() == ""
    assert packages() == before_packages
    # every path the run made is in the user's home and the user's
    after = files()
    new = {path: owner for path, owner in after.items() if path not in before_files}
    assert new, "the rollout made no file?"
    outside = sorted(path for path in new if not path.startswith(HOME + "/"))
    assert outside == [], outside
    not_mine = sorted(path for path, owner in after.items() if path.startswith(HOME) and owner != USER)
    assert not_mine == [], not_mine
    assert f"{HOME}/.horovod/hostfile" in new and f"{HOME}/.ssh/id_horovod_cluster" in new

    report = Cluster(inventory, artifacts_dir=runs).check(smoke=True)
    assert report.ok, report.to_json()


def test_missing_system_package_refused_before_any_change(rootless):
    """After the rollout: the admin removes python3-venv; plan and rollout name it, and nothing changes."""
    inventory, runs = rootless
    root_sh("export DEBIAN_FRONTEND=noninteractive; apt-get remove -y -qq python3-venv python3.11-venv >/dev/null")
    before_packages, before_files = packages(), files()

    plan = Cluster(inventory, artifacts_dir=runs).plan()
    assert not plan.ok
    reason = plan.hosts[HOST]["preflight"]["reason"]
    for fragment in ("cluster_rootless is true and the system package python3-venv is not installed",
                     "allowed: ask the admin to install python3-venv"):
        assert fragment in reason, reason

    refused = Cluster(inventory, artifacts_dir=runs).rollout()
    assert not refused.ok and refused.failed_hosts == [HOST], refused.to_json()
    assert "python3-venv" in refused.hosts[HOST].failure.message
    assert "CMake" not in refused.plays, refused.plays  # stopped in preflight
    assert packages() == before_packages
    changed = sorted(p for p in set(files()) ^ set(before_files) if not p.startswith(f"{HOME}/.ansible"))
    assert changed == [], changed
