"""scripts/setup.sh: it stops naming the step that failed, and it sets up a bare Debian 12.

The fast test runs setup.sh against a throwaway venv with pip cut off from every index.
The slow one (HVC_SLOW=1) runs it as root in a fresh minbase Debian 12 container, then brings up
a one-host sandbox inside (podman in podman) and pings that host with Ansible over SSH.
"""
import os
import secrets
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from horovod_cluster.sandbox import base_image

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "setup.sh"


def test_setup_fails_naming_the_step_when_pip_install_fails(tmp_path):
    # apt-get is a stub that fails: this test never changes the machine's packages.
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "apt-get").write_text('#!/bin/sh\necho "stub apt-get $*" >&2\nexit 100\n')
    (stub / "apt-get").chmod(0o755)
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    venv = tmp_path / "venv"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env.update(PATH=f"{stub}:{env.get('PATH', '/usr/bin:/bin')}", HVC_VENV=str(venv),
               # pip finds nothing: no index, an empty links folder, not the machine's pip.conf.
               PIP_NO_INDEX="1", PIP_FIND_LINKS=str(empty), PIP_CONFIG_FILE="/dev/null")
    run = subprocess.run(["bash", str(SETUP)], env=env, capture_output=True, text=True, timeout=120)
    out = run.stdout + run.stderr
    if "FAILED at step 'system packages" in out:
        pytest.skip(f"system packages missing (run scripts/setup.sh as root first): {out.strip()}")
    assert run.returncode != 0, out
    assert "FAILED at step 'pip install -e .[dev]'" in out, out
    assert "setup: ok" not in out, out
    # It stopped at pip itself: the import check after pip never ran (`pip ... || true` would).
    assert "ModuleNotFoundError" not in out, out
    assert (venv / "bin" / "python").is_file(), out
    assert not (venv / ".hvc-installed").exists(), "a failed install must not leave the stamp"


# ---- the bare-system test -------------------------------------------------------------------
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
INNER_ROOT = "/root/horovod-cluster"


def _host(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True, **kwargs)


def _inner(name: str, cmd: str, timeout: int, log: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run `cmd` as root in the container's checkout, bounded by `timeout` inside it (killing the
    podman client would leave the command running); stream and keep its output."""
    env_args = [arg for key, value in (env or {}).items() for arg in ("-e", f"{key}={value}")]
    print(f"\n--- [{name}] {cmd}", flush=True)
    start = time.monotonic()
    proc = subprocess.Popen(["podman", "exec", *env_args, "-w", INNER_ROOT, name,
                             "timeout", "-k", "10", str(timeout), "bash", "-c", cmd],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    with log.open("a") as out:
        out.write(f"--- {cmd}\n")
        for line in proc.stdout:
            lines.append(line)
            out.write(line)
            print("    " + line, end="", flush=True)
    code = proc.wait()
    print(f"--- exit {code} after {time.monotonic() - start:.0f} s", flush=True)
    return code, "".join(lines)


def _wait_for_image(image: str, timeout: float) -> None:
    """The base image comes from `horovod-cluster sandbox build --arch amd64`, which may still be
    running; building it here concurrently would race it."""
    deadline = time.monotonic() + timeout
    while subprocess.run(["podman", "image", "exists", image]).returncode != 0:
        if time.monotonic() > deadline:
            pytest.fail(f"{image} did not appear in {timeout:.0f} s; build it with "
                        "`horovod-cluster sandbox build --arch amd64`")
        time.sleep(10)


def _checkout_tar(dest: Path) -> Path:
    """The working tree's tracked files (uncommitted edits included: they are what is tested)."""
    listed = _host(["git", "-C", str(ROOT), "ls-files", "-z"], 60).stdout.split("\0")
    with tarfile.open(dest, "w") as tar:
        for rel in filter(None, listed):
            if (ROOT / rel).exists():
                tar.add(ROOT / rel, arcname=rel, recursive=False)
    return dest


@pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1", reason="slow (10-20 min): set HVC_SLOW=1")
@pytest.mark.skipif(os.geteuid() != 0, reason="starts a privileged podman container: needs root")
def test_setup_then_sandbox_up_on_a_bare_debian12(tmp_path):
    image = base_image("amd64")  # the sandbox's own minbase debootstrap: no python, no podman
    _wait_for_image(image, timeout=1200)
    name = f"hvc-bare-{secrets.token_hex(4)}"
    log = tmp_path / "inner.log"
    print(f"\ncontainer {name}, output kept in {log}")
    try:
        _host(["podman", "network", "create", name], 60)
        # --privileged: the inner podman mounts, makes cgroups and iptables rules like on a host.
        # /var/lib/containers is a volume so the inner overlay storage sits on the host's disk,
        # not on the outer container's overlay (overlay on overlay is refused).
        _host(["podman", "run", "-d", "--name", name, "--hostname", name, "--network", name,
               "--privileged", "-v", "/var/lib/containers", image, "sleep", "infinity"], 120)
        with _checkout_tar(tmp_path / "checkout.tar").open("rb") as tar:
            _host(["podman", "exec", "-i", name, "sh", "-c", f"mkdir -p {INNER_ROOT} && tar -x -C {INNER_ROOT}"],
                  120, stdin=tar)
        # Behind a TLS-inspecting proxy pip needs its CA, as any user there does; nothing else of
        # this machine's pip setup (its config, its local wheel folders) goes in.
        _host(["podman", "cp", str(CA_BUNDLE), f"{name}:/root/proxy-ca.crt"], 60)
        pip_ca = {"PIP_CERT": "/root/proxy-ca.crt", "REQUESTS_CA_BUNDLE": "/root/proxy-ca.crt"}

        code, out = _inner(name, "bash scripts/setup.sh", 1200, log, env=pip_ca)
        assert code == 0 and "setup: ok" in out, out
        code, out = _inner(name, "bash scripts/setup.sh", 120, log, env=pip_ca)
        assert code == 0 and "apt-get install" not in out and "pip install" not in out, \
            f"a second run should find everything in place:\n{out}"

        code, out = _inner(name, ".venv/bin/horovod-cluster sandbox up --hosts 1", 1200, log)
        assert code == 0, out
        code, out = _inner(name, ".venv/bin/ansible -i inventories/sandbox all -m ansible.builtin.ping",
                           300, log)
        assert code == 0 and "hvc-node1 | SUCCESS" in out and "pong" in out, out
    finally:
        # The inner hosts first, so their cgroups (on the host's hierarchy) go with them.
        subprocess.run(["podman", "exec", name, "podman", "rm", "-f", "-t", "1", "--all"],
                       capture_output=True, timeout=120)
        subprocess.run(["podman", "rm", "-f", "-v", "-t", "1", name], capture_output=True, timeout=120)
        subprocess.run(["podman", "network", "rm", "-f", name], capture_output=True, timeout=60)
