"""playbooks/modules.yml on the rolled-out sandbox: `module load horovod/<version>` in a login shell gives the
Horovod environment's python and horovodrun, and without it the system python has no horovod (so the test
fails when the module does nothing).

hvc-node1 gets the Lmod Lua modulefile; hvc-node2 the Tcl one, read there by Lmod too (Lmod reads Tcl
modulefiles; Debian's Tcl environment-modules package conflicts with lmod, so it cannot share the host). The
same Tcl file is then loaded by Tcl Environment Modules itself in a throwaway container of the sandbox's image.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ansible_run import run_playbook
from horovod_cluster.sandbox import NETWORK, node_image

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
VERSION = "0.28.1"  # the sandbox's Horovod (roles/horovod defaults)
MODULE = f"horovod/{VERSION}"
TREE = "/opt/horovod/modulefiles"
FORMATS = {"hvc-node1": ("lua", f"{TREE}/{MODULE}.lua"), "hvc-node2": ("tcl", f"{TREE}/{MODULE}")}

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                       reason="slow (an optional playbook: Lmod and environment modules on two hosts, 1.5 min): set HVC_SLOW=1"),
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def login_shell(host: str, script: str, timeout: int = 60) -> subprocess.CompletedProcess:
    """`script` in a login shell on the host, as a user's session or batch job runs it."""
    return subprocess.run(["podman", "exec", host, "bash", "-lc", script], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def rollout(tmp_path_factory):
    """modules.yml on hvc-node1 (lua) and hvc-node2 (tcl), installing Lmod; then a second run (idempotence)."""
    formats = tmp_path_factory.mktemp("modules") / "formats.yml"
    formats.write_text("all:\n  hosts:\n" + "".join(f"    {host}:\n      hpc_modules_format: {fmt}\n"
                                                  for host, (fmt, _) in FORMATS.items()))
    args = ("-i", str(formats), "--limit", ",".join(FORMATS))
    first = run_playbook("modules.yml", SANDBOX, *args, extra_vars={"hpc_modules_install_lmod": True})
    second = run_playbook("modules.yml", SANDBOX, *args, extra_vars={"hpc_modules_install_lmod": True})
    return first, second


def test_the_playbook_runs_and_is_idempotent(rollout):
    first, second = rollout
    assert first.rc == 0, "\n".join(first.failure_messages(h) for h in FORMATS) + first.stderr[-2000:]
    assert set(first.stats) == set(FORMATS)
    assert second.rc == 0 and second.changed() == 0, second.stats


@pytest.mark.parametrize("host", FORMATS)
def test_module_load_gives_the_horovod_environment(rollout, host):
    fmt, path = FORMATS[host]
    shown = subprocess.run(["podman", "exec", host, "cat", path], capture_output=True, text=True, check=True).stdout
    assert shown.startswith("#%Module") if fmt == "tcl" else "setenv(\"VIRTUAL_ENV\"" in shown
    run = login_shell(host, f'module load {MODULE} && command -v python horovodrun && echo "VENV=$VIRTUAL_ENV" '
                            '&& python -c "import horovod.torch, horovod; print(horovod.__version__)"')
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.split() == ["/opt/horovod/venv/bin/python", "/opt/horovod/venv/bin/horovodrun",
                                  "VENV=/opt/horovod/venv", VERSION]
    # what the module says of itself
    about = login_shell(host, f"module whatis {MODULE}; module help {MODULE}")
    assert f"Version: {VERSION}" in about.stdout + about.stderr
    assert "horovodrun -np <slots> --hostfile /etc/horovod/hostfile" in about.stdout + about.stderr


@pytest.mark.parametrize("host", FORMATS)
def test_without_the_module_there_is_no_horovod(rollout, host):
    """The system python has no horovod, and horovodrun is not on PATH: the module is what brings them."""
    run = login_shell(host, 'command -v horovodrun; python3 -c "import horovod"')
    assert run.returncode != 0 and "No module named 'horovod'" in run.stderr, run.stdout + run.stderr
    assert "horovodrun" not in run.stdout
    # unloading takes it away again
    run = login_shell(host, f'module load {MODULE} && module unload horovod && echo "VENV=$VIRTUAL_ENV" '
                            '&& command -v horovodrun')
    assert "VENV=\n" in run.stdout and "horovodrun" not in run.stdout


def test_the_tcl_modulefile_loads_in_tcl_environment_modules(rollout, tmp_path):
    """Tcl Environment Modules itself (Debian's environment-modules), in a throwaway container of the sandbox's
    image on its network: the file hvc-node2 got sets VIRTUAL_ENV and PATH, and unloading restores them."""
    tcl = tmp_path / VERSION
    subprocess.run(["podman", "cp", f"hvc-node2:{FORMATS['hvc-node2'][1]}", str(tcl)], check=True)
    script = ("export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq environment-modules >/dev/null 2>&1 || "
              "{ apt-get update -qq && apt-get install -y -qq environment-modules >/dev/null; } || exit 3; "
              "exec bash -lc 'module use /mf && module load horovod/" + VERSION + " && echo \"VENV=$VIRTUAL_ENV\" "
              "&& echo \"PATH=$PATH\" && module unload horovod && echo \"AFTER=$VIRTUAL_ENV\"'")
    run = subprocess.run(["podman", "run", "--rm", "--network", NETWORK, "-v", f"{tcl}:/mf/horovod/{VERSION}:ro,Z",
                          node_image("amd64"), "bash", "-c", script], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert "VENV=/opt/horovod/venv" in lines and "AFTER=" in lines
    assert next(line for line in lines if line.startswith("PATH=")).startswith("PATH=/opt/horovod/venv/bin:")
