# -*- coding: utf-8 -*-
# Apache-2.0
"""`hvc_ssh_host_keys`: a host's SSH host key files (slurp results) as the `TYPE BASE64` entries every
mesh host writes into its known_hosts, each file checked first.

The files come from the host: whatever they hold reaches every other host's known_hosts. A file
that is not exactly one public key line (a second line `* ssh-ed25519 ...` or `@cert-authority *`
would trust a key for any destination), whose type is not an SSH host key type, or whose key blob
does not decode to that type is refused, naming the file. The comment is dropped.
"""
from __future__ import annotations

import base64
import binascii
import re
import struct

from ansible.errors import AnsibleFilterError

KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
             "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "ssh-dss")
_LINE = re.compile(r"\A(\S+) ([A-Za-z0-9+/]+={0,2})(?: [^\r\n]*)?\Z")
FORM = "one line 'TYPE BASE64 [comment]', TYPE one of " + ", ".join(KEY_TYPES)


def _blob_type(blob: str) -> str | None:
    """The key type the blob itself names (its first length-prefixed string), or None if it names none."""
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) < 4:
        return None
    (size,) = struct.unpack(">I", raw[:4])
    return raw[4:4 + size].decode("ascii", "replace") if 0 < size <= len(raw) - 4 else None


def host_key_entry(text: str, source: str) -> str:
    """'TYPE BASE64' of one public key file's text, or an error naming the file."""
    lines = [line for line in text.replace("\t", " ").splitlines() if line.strip()]
    why = None
    if len(lines) != 1:
        why = "%d lines" % len(lines)
    else:
        found = _LINE.match(lines[0].strip())
        if not found:
            why = "the line %r" % lines[0][:80]
        elif found.group(1) not in KEY_TYPES:
            why = "the type %r" % found.group(1)[:40]
        elif _blob_type(found.group(2)) != found.group(1):
            why = "a key that is not a %s key" % found.group(1)
        else:
            return "%s %s" % (found.group(1), found.group(2))
    raise AnsibleFilterError("%s holds %s; expected %s. Every mesh host would trust what it holds, so it is "
                             "refused: remove or repair the file" % (source, why, FORM))


def hvc_ssh_host_keys(files, source="a host key record"):
    """slurp results (`content`, `source`) or plain key lines (a record kept on the controller, named by
    `source`) -> their known_hosts entries, in the order given."""
    entries = []
    for item in files or []:
        if isinstance(item, str):
            entries.append(host_key_entry(item, str(source)))
        else:
            text = base64.b64decode(item["content"]).decode("utf-8", "replace")
            entries.append(host_key_entry(text, str(item.get("source", source))))
    return entries


class FilterModule:
    """hvc_ssh_host_keys."""

    def filters(self):
        return {"hvc_ssh_host_keys": hvc_ssh_host_keys}
