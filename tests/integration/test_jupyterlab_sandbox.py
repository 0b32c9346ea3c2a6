"""playbooks/jupyterlab.yml on the rolled-out sandbox's launcher (hvc-node1 only): JupyterLab runs as a systemd
service in the Horovod environment, listens on 127.0.0.1:8888 alone, answers the REST API only with the token
(which is in no command line, log or play output), and a kernel it starts imports horovod.torch and runs
hvd.init(). torch and numpy keep their versions; a second run changes nothing and keeps the token.

The kernel is driven the way JupyterLab drives it: POST /api/kernels, then an execute_request over the kernel's
websocket channel (Jupyter messaging protocol), by a short script run on hvc-node1 with the environment's python
(tornado's websocket client comes with jupyter_server). The script reads the token from the token file there.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from ansible_run import run_playbook

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
HOST = "hvc-node1"  # the launcher: the first host of the play
ENV = "/opt/horovod/venv"  # the sandbox's Horovod environment (python_env defaults)
TOKEN_FILE = "/etc/jupyterlab/jupyterlab.env"  # the role's default
VERSION = "0.28.1"  # the sandbox's Horovod (roles/horovod defaults)
CODE = "import horovod, horovod.torch as hvd; hvd.init(); print(hvd.size(), horovod.__version__)"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                       reason="slow (an optional playbook: JupyterLab set up, then its token replaced, 2.5 min): set HVC_SLOW=1"),
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]

# Run on hvc-node1 by the environment's python: the REST API with and without the token, then a kernel started
# through the service executes CODE; prints one JSON line.
CLIENT = r'''
import asyncio, json, sys, uuid
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

BASE = "127.0.0.1:8888"
TOKEN = next(line.strip().split("=", 1)[1] for line in open(sys.argv[1]) if line.startswith("JUPYTER_TOKEN="))
AUTH = {"Authorization": "token " + TOKEN}


async def main():
    client, out = AsyncHTTPClient(), {}
    for key, headers in (("without_token", {}), ("with_token", AUTH)):
        try:
            out[key] = (await client.fetch(f"http://{BASE}/api/kernels", headers=headers)).code
        except HTTPClientError as error:
            out[key] = error.code
    made = await client.fetch(f"http://{BASE}/api/kernels", method="POST", body=json.dumps({"name": "python3"}),
                              headers={**AUTH, "Content-Type": "application/json"})
    kernel, session, msg_id = json.loads(made.body)["id"], uuid.uuid4().hex, uuid.uuid4().hex
    ws = await websocket_connect(HTTPRequest(f"ws://{BASE}/api/kernels/{kernel}/channels?session_id={session}",
                                             headers=AUTH))
    ws.write_message(json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": session, "msg_type": "execute_request",
                   "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": sys.argv[2], "silent": False, "store_history": False, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True}}))
    stdout, stderr, reply, idle = [], [], None, False
    while reply is None or not idle:
        raw = await asyncio.wait_for(ws.read_message(), 120)
        if raw is None:
            break
        msg = json.loads(raw)
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            (stdout if content["name"] == "stdout" else stderr).append(content["text"])
        elif kind == "error":
            stderr.append("\n".join(content["traceback"]))
        elif kind == "execute_reply":
            reply = content["status"]
        elif kind == "status" and content["execution_state"] == "idle":
            idle = True
    ws.close()
    await client.fetch(f"http://{BASE}/api/kernels/{kernel}", method="DELETE", headers=AUTH)
    print(json.dumps({**out, "reply": reply, "stdout": "".join(stdout), "stderr": "".join(stderr)}))


asyncio.run(main())
'''


# GET /api/kernels on hvc-node1 with the token read from stdin; prints the status code.
STATUS = r'''
import sys, urllib.error, urllib.request
request = urllib.request.Request("http://127.0.0.1:8888/api/kernels",
                                 headers={"Authorization": "token " + sys.stdin.read().strip()})
try:
    print(urllib.request.urlopen(request, timeout=30).status)
except urllib.error.HTTPError as error:
    print(error.code)
'''


def on_host(*argv: str, stdin: str | None = None, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", "exec", "-i", HOST, *argv], input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def versions() -> str:
    """torch's and numpy's versions in the environment."""
    return on_host(f"{ENV}/bin/python", "-c", "import torch, numpy; print(torch.__version__, numpy.__version__)",
                   timeout=120).stdout.strip()


def api_status(token: str) -> int:
    script = on_host(f"{ENV}/bin/python", "-c", STATUS, stdin=token)
    assert script.returncode == 0, script.stderr
    return int(script.stdout)


def token_digest() -> str:
    return hashlib.sha256(on_host("cat", TOKEN_FILE).stdout.encode()).hexdigest()


@pytest.fixture(scope="module")
def rollout():
    """jupyterlab.yml on the launcher, twice; torch/numpy versions and the token file's digest around them."""
    before = versions()
    start = time.monotonic()
    first = run_playbook("jupyterlab.yml", SANDBOX, "--limit", HOST)
    took = time.monotonic() - start
    token_first = token_digest()
    second = run_playbook("jupyterlab.yml", SANDBOX, "--limit", HOST)
    dry = run_playbook("jupyterlab.yml", SANDBOX, "--limit", HOST, "--check")
    return {"first": first, "second": second, "dry": dry, "took": took, "before": before, "after": versions(),
            "tokens": (token_first, token_digest())}


def test_the_playbook_runs_and_publishes_how_to_reach_it(rollout):
    first = rollout["first"]
    assert first.rc == 0, first.failure_messages(HOST) + first.stderr[-2000:]
    assert set(first.stats) == {HOST}
    published = next(r["ansible_facts"]["hvc_jupyterlab"] for h, task, r in first.results()
                     if task.endswith("Publish the server (hvc_jupyterlab)"))
    address = subprocess.run(["ansible-inventory", "-i", str(SANDBOX), "--host", HOST], capture_output=True,
                             text=True, check=True)
    target = json.loads(address.stdout)["ansible_host"]
    assert published["action"] == "install" and published["host"] == HOST
    assert published["tunnel"] == f"ssh -N -L 8888:127.0.0.1:8888 root@{target}"
    assert published["url"] == "http://localhost:8888/lab" and published["port"] == 8888
    assert published["token_file"] == TOKEN_FILE and published["service"] == "jupyterlab"
    print(f"first run: {rollout['took']:.0f} s")


def test_torch_and_numpy_keep_their_versions(rollout):
    assert rollout["before"] and rollout["after"] == rollout["before"]


def test_a_second_run_changes_nothing_and_keeps_the_token(rollout):
    second, dry = rollout["second"], rollout["dry"]
    assert second.rc == 0 and second.changed() == 0, second.stats
    assert rollout["tokens"][0] == rollout["tokens"][1]
    assert dry.rc == 0 and dry.changed() == 0, dry.stats  # nor would a dry run (check mode)


def test_a_dry_run_of_a_new_service_writes_nothing(rollout):
    """Check mode with another user, folder, token file, unit and port: it plans the changes, and the host
    has none of them afterwards (no user, folders, token or unit; nothing listens on the port)."""
    names = {"jupyterlab_user": "hvcdry", "jupyterlab_root_dir": "/srv/hvcdry",
             "jupyterlab_token_file": "/etc/hvcdry/env", "jupyterlab_service": "hvcdry", "jupyterlab_port": 8899}
    dry = run_playbook("jupyterlab.yml", SANDBOX, "--limit", HOST, "--check", extra_vars=names)
    assert dry.rc == 0, dry.failure_messages(HOST)
    assert dry.changed() > 0
    left = on_host("bash", "-c", "id hvcdry; ls -d /srv/hvcdry /etc/hvcdry /etc/systemd/system/hvcdry.service; "
                   "ss -ltnH | grep -w 8899; true")
    assert "no such user" in left.stderr and left.stdout == "", left.stdout + left.stderr


def test_the_service_is_active_on_loopback_only(rollout):
    assert on_host("systemctl", "is-active", "jupyterlab").stdout.strip() == "active"
    listening = {line.split()[3] for line in on_host("ss", "-ltnH").stdout.splitlines()
                 if line.split()[3].endswith(":8888")}
    assert listening == {"127.0.0.1:8888"}
    shown = on_host("stat", "-c", "%U %a", TOKEN_FILE).stdout.split()
    assert shown == ["root", "600"]


def test_the_token_is_in_no_command_line_log_or_play_output(rollout):
    token = on_host("cat", TOKEN_FILE).stdout.strip().removeprefix("JUPYTER_TOKEN=")
    assert len(token) >= 32
    assert token not in on_host("ps", "-eo", "args").stdout
    assert token not in on_host("journalctl", "-u", "jupyterlab", "--no-pager").stdout
    assert token not in json.dumps(rollout["first"].data) + json.dumps(rollout["second"].data)


def test_the_api_wants_the_token_and_a_kernel_runs_horovod(rollout):
    run = on_host(f"{ENV}/bin/python", "-", TOKEN_FILE, CODE, stdin=CLIENT, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["without_token"] == 403 and got["with_token"] == 200
    assert got["reply"] == "ok", got["stderr"]
    assert got["stdout"].split() == ["1", VERSION]


def test_a_given_token_replaces_the_file_and_restarts_the_server(rollout):
    """Last (it changes the token): jupyterlab_token is written to the file and the handler restarts the
    server, so the new token works and the old one no longer does; then, the file removed, a run generates a
    fresh one again."""
    old = on_host("cat", TOKEN_FILE).stdout.strip().removeprefix("JUPYTER_TOKEN=")
    given = "given-" + secrets.token_hex(16)
    run = run_playbook("jupyterlab.yml", SANDBOX, "--limit", HOST, extra_vars={"jupyterlab_token": given})
    assert run.rc == 0, run.failure_messages(HOST)
    assert any(task.endswith("Restart JupyterLab") and r.get("changed") for _, task, r in run.results())
    assert given not in json.dumps(run.data)
    assert (api_status(given), api_status(old)) == (200, 403)
    assert on_host("rm", TOKEN_FILE).returncode == 0
    again = run_playbook("jupyterlab.yml", SANDBOX, "--limit", HOST)
    assert again.rc == 0, again.failure_messages(HOST)
    fresh = on_host("cat", TOKEN_FILE).stdout.strip().removeprefix("JUPYTER_TOKEN=")
    assert len(fresh) >= 32 and fresh not in (given, old)
    assert (api_status(fresh), api_status(given)) == (200, 403)
