"""Issue 45 on the sandbox's real hosts (after the main job): one host's files make no other host trust a key,
the cluster's private key reaches no output nor artifact under --diff, a proxy variable's name runs nothing, and
`run` starts no rank where a host's key changed, with Gloo (whose launcher turns host key checking off) as with MPI.

Each test puts back what it changed (the planted file removed, the mesh key restored by its own rollout).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from horovod_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
KNOWN_HOSTS = "/etc/ssh/ssh_known_hosts"  # the mesh's known-hosts file on Debian (ssh_mesh's default)
PLANTED = "/etc/ssh/ssh_host_zz_key.pub"
MESH_KEY = "/root/.ssh/id_horovod_cluster"
CONTROLLER_KEY = Path.home() / ".cache/horovod-cluster/sandbox/ssh_mesh/id_horovod_cluster"  # hosts.yml, `sandbox up`

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
]


def _key_digest(text: str) -> str:
    """A private key's digest: what the asserts compare, so that a failure prints no key."""
    return hashlib.sha256(text.encode()).hexdigest()


def _exec(host: str, *argv: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", "exec", "-i", host, *argv], input=stdin, capture_output=True, text=True,
                          check=check)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI as a user runs it, its artifacts under tmp_path."""
    env = {**os.environ, "HOROVOD_CLUSTER_ARTIFACTS": str(tmp_path / "runs")}
    return subprocess.run([sys.executable, "-m", "horovod_cluster.cli", *args], capture_output=True, text=True,
                          env=env, timeout=900, cwd=tmp_path)


def test_a_planted_host_key_line_reaches_no_other_host(tmp_path):
    """hvc-node3's root adds a host key file whose second line trusts an attacker's key for every host: the
    rollout refuses that host naming the file, and the other hosts still trust hvc-node3's real key only."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "attacker")], check=True)
    attacker = " ".join((tmp_path / "attacker.pub").read_text().split()[:2])
    real = _exec("hvc-node3", "cat", "/etc/ssh/ssh_host_ed25519_key.pub").stdout
    _exec("hvc-node3", "tee", PLANTED, stdin=f"{real}* {attacker}\n")
    try:
        result = Cluster(SANDBOX, artifacts_dir=tmp_path / "runs").rollout(tags="ssh_mesh")
    finally:
        _exec("hvc-node3", "rm", "-f", PLANTED)
    assert result.failed_hosts == ["hvc-node3"], result.to_json()
    message = result.hosts["hvc-node3"].failure.message
    assert f"{PLANTED} holds 2 lines; expected one line 'TYPE BASE64 [comment]'" in message, message
    real_entry = " ".join(real.split()[:2])
    for host in ("hvc-node1", "hvc-node2", "hvc-node3"):
        known = _exec(host, "cat", KNOWN_HOSTS).stdout
        assert attacker.split()[1] not in known, f"{host} trusts the planted key"
        assert real_entry in known, f"{host} no longer trusts hvc-node3's real key (its record)"


def test_the_mesh_key_reaches_no_output_nor_artifact_under_diff(tmp_path):
    """With hvc-node2's copy of the cluster key gone, `rollout -t ssh_mesh -C -D -v` (the dry run) and then
    `-D -v` (which puts it back) print nothing of it, and leave nothing of it in their artifacts."""
    body = CONTROLLER_KEY.read_text().splitlines()[1]  # the first line of the key's base64
    _exec("hvc-node2", "rm", "-f", MESH_KEY)
    dry = _cli(tmp_path, "rollout", "-i", str(SANDBOX), "-t", "ssh_mesh", "-C", "-D", "-v", "--json", "-")
    real = _cli(tmp_path, "rollout", "-i", str(SANDBOX), "-t", "ssh_mesh", "-D", "-v", "--json", "-")
    assert real.returncode == 0, real.stderr[-3000:]
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert json.loads(real.stdout)["hosts"]["hvc-node2"]["changed"] >= 1
    assert _key_digest(_exec("hvc-node2", "cat", MESH_KEY).stdout) == _key_digest(CONTROLLER_KEY.read_text()), \
        "the key is back"
    leaks = [name for name, text in (("dry run output", dry.stdout + dry.stderr),
                                     ("run output", real.stdout + real.stderr)) if "PRIVATE KEY" in text or body in text]
    for path in (tmp_path / "runs").rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            if "PRIVATE KEY" in text or body in text:
                leaks.append(str(path.relative_to(tmp_path)))
    assert not leaks, f"the cluster's private key is in {leaks}"


SECRETS = {"become password": "become-5ecret-k", "vault password": "vault-5ecret-v", "vaulted value": "vaulted-5ecret-x",
           "proxy credentials": "pr0xy-5ecret-p", "index token": "1ndex-5ecret-i", "-e value": "extra-5ecret-e"}


def test_planted_secrets_reach_no_output_artifact_report_or_world_readable_file(tmp_path):
    """Issue 45: known secrets given the ways a user gives them (a become password and a vault password at their
    prompts, a value the vault opens, proxy credentials, an index URL's token, a -e value), then `plan`, a rollout of
    python_env and `check` with its JSON and HTML reports on one host: none of them is in what these print, in the
    artifacts, in the reports or in a world-readable file of the host."""
    from ansible.parsing.vault import VaultLib, VaultSecret

    vault = tmp_path / "vaulted.yml"
    vault.write_bytes(VaultLib([("default", VaultSecret(SECRETS["vault password"].encode()))]).encrypt(
        f"hvc_vaulted_token: {SECRETS['vaulted value']}\n".encode()))
    given = json.dumps({
        "proxy_env": {"HVC_PROXY_PROBE": f"http://bob:{SECRETS['proxy credentials']}@10.255.255.1:3128"},
        "python_env_torch_cpu_index_url": f"https://alice:{SECRETS['index token']}@pypi.example/simple",
        "hvc_unused_token": SECRETS["-e value"]})
    common = ["-i", str(SANDBOX), "-l", "hvc-node1", "-e", f"@{vault}", "-e", given, "--ask-vault-pass", "-b", "-K"]
    answers = f"{SECRETS['become password']}\n{SECRETS['vault password']}\n"
    env = {**os.environ, "HOROVOD_CLUSTER_ARTIFACTS": str(tmp_path / "runs")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "horovod_cluster.cli", *args, *common], input=answers,
                              capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)

    runs = [cli("plan", "--json", str(tmp_path / "plan.json")),
            cli("rollout", "-t", "python_env", "--json", str(tmp_path / "rollout.json")),
            cli("check", "--no-smoke", "--json", str(tmp_path / "check.json"), "--html", str(tmp_path / "check.html"))]
    # (the check's exit code is 1 where it finds a problem: what matters here is what it wrote)
    assert [run.returncode for run in runs][:2] == [0, 0] and runs[2].returncode in (0, 1), \
        [run.stderr[-2000:] for run in runs]

    leaks = [f"output of {run.args[3]}: {name}" for run in runs for name, secret in SECRETS.items()
             if secret in run.stdout + run.stderr]
    leaks += [f"{path.relative_to(tmp_path)}: {name}" for path in tmp_path.rglob("*") if path.is_file()
              and path != vault for name, secret in SECRETS.items() if secret.encode() in path.read_bytes()]
    found = _exec("hvc-node1", "sh", "-c", "find / -xdev -type f -perm -o+r -size -20M 2>/dev/null "
                  "| grep -v -E '^/(proc|sys|usr|lib)/' | xargs -r grep -l -F -e 5ecret 2>/dev/null", check=False)
    leaks += [f"hvc-node1:{path}" for path in found.stdout.split()]
    assert not leaks, leaks


def test_a_proxy_variable_name_with_shell_text_is_refused(tmp_path):
    """ansible-core quotes environment values, not names: this name ran `touch` as root on every host."""
    pwned = "/tmp/hvc-proxy-pwned"
    bad = {"proxy_env": {f"X=1 touch {pwned};Y": "z"}}
    refused = _cli(tmp_path, "rollout", "-i", str(SANDBOX), "-e", json.dumps(bad), "--json", "-")
    assert refused.returncode == 1, refused.stderr[-3000:]
    hosts = json.loads(refused.stdout)["hosts"]
    for host in ("hvc-node1", "hvc-node2", "hvc-node3"):
        assert f"proxy_env has the key 'X=1 touch {pwned};Y'" in hosts[host]["failure"]["message"]
        assert _exec(host, "test", "-e", pwned, check=False).returncode == 1, f"{pwned} was created on {host}"


def _address(host: str) -> str:
    return _exec(host, "hostname", "-I").stdout.split()[0]


def _mesh_ssh(host: str, key: str = MESH_KEY) -> subprocess.CompletedProcess:
    """From host as root to hvc-node1 with this private key alone (no ssh config, whose key would be tried too)."""
    return _exec(host, "ssh", "-F", "/dev/null", "-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                 "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=20", "root@hvc-node1", "true", check=False)


def test_the_mesh_key_logs_in_only_from_the_cluster(tmp_path):
    """A copy of the cluster key taken off the cluster (a lost Pi's SD card) logs in nowhere: its authorized_keys
    line is restricted and accepted only from the mesh hosts' addresses. This machine holds the key but is not
    one of them; hvc-node2 still reaches hvc-node1 with it."""
    line = next(line for line in _exec("hvc-node1", "cat", "/root/.ssh/authorized_keys").stdout.splitlines()
                if CONTROLLER_KEY.with_suffix(".pub").read_text().split()[1] in line)
    assert line.startswith('restrict,from="'), line
    for host in ("hvc-node1", "hvc-node2", "hvc-node3"):
        assert _address(host) in line.split('"')[1].split(","), line
    outside = subprocess.run(
        ["ssh", "-i", str(CONTROLLER_KEY), "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=no", "-o", f"UserKnownHostsFile={tmp_path / 'known'}",
         f"root@{_address('hvc-node1')}", "true"], capture_output=True, text=True, timeout=60)
    assert outside.returncode == 255 and "Permission denied" in outside.stderr, outside
    inside = _mesh_ssh("hvc-node2")
    assert inside.returncode == 0, inside.stderr


def test_a_host_leaves_then_rotate_key_replaces_the_cluster_key_on_every_host(tmp_path):
    """`horovod-cluster remove-host hvc-node3` takes the mesh off it (key, this cluster's authorized key, mesh
    blocks; the sandbox's own access key stays). `rotate-key` (hvc-node3 is still in the inventory, so it comes
    back): a new keypair on every host, the old one authorized nowhere (tried from a mesh host, where its from=
    would have let it in), and the mesh works with the new one."""
    old_private, old_public = CONTROLLER_KEY.read_text(), CONTROLLER_KEY.with_suffix(".pub").read_text()
    authorized_before = _exec("hvc-node3", "cat", "/root/.ssh/authorized_keys").stdout.splitlines()
    left = _cli(tmp_path, "remove-host", "hvc-node3", "-i", str(SANDBOX), "--json", "-")
    assert left.returncode == 0, left.stderr[-3000:]
    assert _exec("hvc-node3", "test", "-e", MESH_KEY, check=False).returncode == 1, "the key is still on hvc-node3"
    authorized = _exec("hvc-node3", "cat", "/root/.ssh/authorized_keys").stdout.splitlines()
    assert authorized == [line for line in authorized_before if old_public.split()[1] not in line], authorized
    assert len(authorized) == len(authorized_before) - 1, "only the mesh key went"
    assert "horovod-cluster ssh_mesh" not in _exec("hvc-node3", "cat", KNOWN_HOSTS).stdout
    assert _mesh_ssh("hvc-node2").returncode == 0, "the others are untouched"
    rotated = _cli(tmp_path, "rotate-key", "-i", str(SANDBOX), "--json", "-")
    assert rotated.returncode == 0, rotated.stderr[-3000:]
    new_public = CONTROLLER_KEY.with_suffix(".pub").read_text()
    assert new_public.split()[1] != old_public.split()[1], "a new keypair"
    for host in ("hvc-node1", "hvc-node2", "hvc-node3"):
        authorized = _exec(host, "cat", "/root/.ssh/authorized_keys").stdout
        assert new_public.split()[1] in authorized and old_public.split()[1] not in authorized, (host, authorized)
        assert _key_digest(_exec(host, "cat", MESH_KEY).stdout) == _key_digest(CONTROLLER_KEY.read_text()), \
            f"{host} holds the new key"
    _exec("hvc-node2", "sh", "-c", "umask 077 && cat > /root/old-mesh-key", stdin=old_private)
    try:
        assert _mesh_ssh("hvc-node2", "/root/old-mesh-key").returncode == 255, "the old key still logs in"
    finally:
        _exec("hvc-node2", "rm", "-f", "/root/old-mesh-key")
    for host in ("hvc-node2", "hvc-node3"):
        assert _mesh_ssh(host).returncode == 0, f"{host} no longer reaches hvc-node1 with the new key"


@pytest.fixture(scope="module")
def rekeyed_host():
    """hvc-node2 with new SSH host keys that the mesh never learnt (the controller's own connection is told
    the new key, so that Ansible still reaches it); the old keys are put back after the module's tests."""
    host = "hvc-node2"
    controller_known = Path.home() / ".cache/horovod-cluster/sandbox/known_hosts"
    before = controller_known.read_text()
    _exec(host, "sh", "-c", "mkdir -p /root/hostkeys.saved && cp -a /etc/ssh/ssh_host_* /root/hostkeys.saved/ && "
                            "rm /etc/ssh/ssh_host_* && ssh-keygen -A && systemctl restart ssh")
    address = _address(host)
    new_key = " ".join(_exec(host, "cat", "/etc/ssh/ssh_host_ed25519_key.pub").stdout.split()[:2])
    controller_known.write_text(before + f"{address} {new_key}\n")
    try:
        yield host
    finally:
        _exec(host, "sh", "-c", "cp -a /root/hostkeys.saved/ssh_host_* /etc/ssh/ && rm -r /root/hostkeys.saved && "
                                "systemctl restart ssh")
        controller_known.write_text(before)


@pytest.mark.parametrize("controller", ["gloo", "mpi"])
def test_run_refuses_a_host_whose_host_key_changed(rekeyed_host, controller, tmp_path):
    """horovodrun's Gloo launcher passes -o StrictHostKeyChecking=no; run puts ssh_mesh's ssh first on its PATH,
    which keeps the checking on: no rank starts on the rekeyed host and the job fails, with Gloo as with MPI.
    (Gloo starts the launcher's own ranks, which need no ssh, and ends them when the rekeyed host's fail.)"""
    run = _cli(tmp_path, "run", "-i", str(SANDBOX), "--controller", controller, "--",
               "python", "-c", "import socket; print('rank ' + 'ran on', socket.gethostname())")
    output = run.stdout + run.stderr
    assert run.returncode != 0, output
    assert "Host key verification failed" in output, output
    assert f"rank ran on {rekeyed_host}" not in output, output
