"""The hostfile role's discover-hosts (horovodrun's --host-discovery-script for elastic jobs), rendered from its
template and run against real sockets on this machine: only hosts whose SSH server sends its banner are listed,
a silent host costs one timeout however many there are, and a host that answered is not probed again until
--recheck has passed. `ssh -G` is a stand-in on PATH that gives each name's address and port (its real output
format: one `option value` per line)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import jinja2
import pytest

TEMPLATE = Path(__file__).resolve().parents[2] / "roles" / "hostfile" / "templates" / "discover-hosts.j2"


class Server:
    """A listening socket that greets each connection with `banner` (None: says nothing) and counts them."""

    def __init__(self, banner: bytes | None) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port, self.banner, self.accepted = self.sock.getsockname()[1], banner, 0
        threading.Thread(target=self.serve, daemon=True).start()

    def stop(self) -> None:
        """Stop listening (shutdown wakes the accept in the thread; close alone would not)."""
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()

    def serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:  # closed by the test: the host is gone
                return
            self.accepted += 1
            if self.banner is not None:
                connection.sendall(self.banner)
                connection.close()
            # a silent host keeps the connection open and says nothing


@pytest.fixture
def discover(tmp_path):
    """Run the rendered script with a fake `ssh -G` that maps names to ports of this machine."""
    script = tmp_path / "discover-hosts"
    hostfile = tmp_path / "hostfile"
    # Ansible's to_json is Jinja2's tojson here (a path of letters and slashes renders the same)
    rendered = jinja2.Environment().from_string(TEMPLATE.read_text().replace("| to_json", "| tojson"))
    script.write_text(rendered.render(hostfile_path=str(hostfile), ansible_managed="test"))
    ports: dict[str, int] = {}
    fake_ssh = tmp_path / "bin" / "ssh"
    fake_ssh.parent.mkdir()
    fake_ssh.write_text(f"#!{sys.executable}\nimport json, sys\nports = json.load(open({str(tmp_path / 'ports')!r}))\n"
                        "host = sys.argv[-1]\nassert sys.argv[1:3] == ['-G', '--'], sys.argv\n"
                        "print(f'user root\\nhostname 127.0.0.1\\nport {ports[host]}\\nbatchmode no')\n")
    fake_ssh.chmod(0o755)

    def run(*args: str, **servers: Server) -> tuple[list[str], float]:
        ports.update({name.replace("_", "-"): server.port for name, server in servers.items()})
        (tmp_path / "ports").write_text(json.dumps(ports))
        began = time.monotonic()
        done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, check=True,
                              env={**os.environ, "PATH": f"{fake_ssh.parent}:{os.environ['PATH']}"})
        return done.stdout.splitlines(), time.monotonic() - began

    run.hostfile = hostfile  # type: ignore[attr-defined]
    return run


def test_only_hosts_whose_ssh_server_answers_are_listed_with_their_slots(discover):
    up, web, gone = Server(b"SSH-2.0-OpenSSH_9.2p1\r\n"), Server(b"HTTP/1.1 400\r\n"), Server(None)
    gone.stop()  # refuses connections from now on
    hosts, _ = discover("node-a:2", "node-b:1", "node-c:4", node_a=up, node_b=web, node_c=gone)
    assert hosts == ["node-a:2"]


def test_silent_hosts_cost_one_timeout_together(discover):
    up = Server(b"SSH-2.0-OpenSSH_9.2p1\r\n")
    silent = {f"mute{i}": Server(None) for i in range(4)}
    hosts, took = discover("--timeout", "1.5", "node-a:1", *(f"{name}:1" for name in silent), node_a=up, **silent)
    assert hosts == ["node-a:1"]
    assert took < 4, took  # probed in parallel: about one timeout, not four


def test_without_arguments_the_hostfile_is_read(discover):
    up = Server(b"SSH-2.0-x\r\n")
    discover.hostfile.write_text("node-a slots=3\nnode-b\n")
    hosts, _ = discover(node_a=up, node_b=Server(b"SSH-2.0-y\r\n"))
    assert hosts == ["node-a:3", "node-b:1"]


def test_a_host_that_answered_is_probed_again_only_after_the_recheck(discover, tmp_path):
    up = Server(b"SSH-2.0-x\r\n")
    state = str(tmp_path / "state.json")
    for _ in range(3):
        assert discover("--state", state, "node-a:1", node_a=up)[0] == ["node-a:1"]
    assert up.accepted == 1  # one sshd log line, not one per call of horovodrun's every-second poll
    assert discover("--state", state, "--recheck", "0", "node-a:1", node_a=up)[0] == ["node-a:1"]
    assert up.accepted == 2
    up.stop()
    assert discover("--state", state, "--recheck", "0", "node-a:1", node_a=up)[0] == []
    assert json.loads(Path(state).read_text()) == {}  # a host that stopped answering is probed at every call
