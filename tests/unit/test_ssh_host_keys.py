"""Issue 45, item 1: a host's host key files become known_hosts entries on every mesh host only when each
is one public key line of a host key type whose blob names that type (the filter the ssh_mesh role uses)."""
from __future__ import annotations

import base64
import subprocess

import pytest
from ansible.errors import AnsibleFilterError

from hvc_ssh_host_keys import hvc_ssh_host_keys


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Real public key lines made by ssh-keygen: {type: line}."""
    folder = tmp_path_factory.mktemp("keys")
    lines = {}
    for kind, extra in (("ed25519", []), ("ecdsa", ["-b", "384"]), ("rsa", ["-b", "2048"])):
        subprocess.run(["ssh-keygen", "-q", "-t", kind, *extra, "-N", "", "-C", "root@node3",
                        "-f", str(folder / kind)], check=True)
        lines[kind] = (folder / f"{kind}.pub").read_text()
    return lines


def _slurped(path, text):
    return {"source": path, "content": base64.b64encode(text.encode()).decode()}


def test_one_key_per_file_is_kept_without_its_comment(keys):
    files = [_slurped(f"/etc/ssh/ssh_host_{kind}_key.pub", line) for kind, line in sorted(keys.items())]
    entries = hvc_ssh_host_keys(files)
    assert entries == [" ".join(line.split()[:2]) for _, line in sorted(keys.items())]
    assert [e.split()[0] for e in entries] == ["ecdsa-sha2-nistp384", "ssh-ed25519", "ssh-rsa"]


def test_a_second_line_trusting_any_host_is_refused_naming_the_file(keys):
    """The issue's attack: hvc-node3's root adds a file whose second line trusts a key for every host."""
    planted = keys["ed25519"] + "* " + " ".join(keys["rsa"].split()[:2]) + "\n"
    with pytest.raises(AnsibleFilterError) as refused:
        hvc_ssh_host_keys([_slurped("/etc/ssh/ssh_host_zz_key.pub", planted)])
    message = str(refused.value)
    assert message.startswith("/etc/ssh/ssh_host_zz_key.pub holds 2 lines; expected one line 'TYPE BASE64 [comment]'")
    assert "ssh-ed25519" in message and "refused" in message


@pytest.mark.parametrize("text, why", [
    ("@cert-authority * {ed}", "the line '@cert-authority * ssh-ed25519"),
    ("* {ed}", "the line '* ssh-ed25519"),
    ("ssh-ed25519", "the line 'ssh-ed25519'"),
    ("ssh-foo AAAAC3NzaC1lZDI1NTE5AAAAI", "the type 'ssh-foo'"),
    ("ssh-rsa {ed_blob}", "a key that is not a ssh-rsa key"),
    ("ssh-ed25519 not*base64", "the line"),
    ("", "0 lines"),
])
def test_other_forms_are_refused(keys, text, why):
    ed = " ".join(keys["ed25519"].split()[:2])
    text = text.format(ed=ed, ed_blob=ed.split()[1])
    with pytest.raises(AnsibleFilterError) as refused:
        hvc_ssh_host_keys([_slurped("/etc/ssh/ssh_host_x_key.pub", text)])
    assert "/etc/ssh/ssh_host_x_key.pub holds " + why in str(refused.value)


def test_a_recorded_key_is_checked_too_naming_the_record(keys):
    """A record the controller kept from an earlier run (before the check) holds plain key lines."""
    good = " ".join(keys["ed25519"].split()[:2])
    assert hvc_ssh_host_keys([good], "/records/hvc-node3.json") == [good]
    with pytest.raises(AnsibleFilterError, match=r"^/records/hvc-node3.json holds 2 lines"):
        hvc_ssh_host_keys([good + "\n* " + good], "/records/hvc-node3.json")
