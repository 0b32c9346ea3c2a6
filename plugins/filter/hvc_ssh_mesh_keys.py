# -*- coding: utf-8 -*-
# Apache-2.0
"""The mesh key's line in authorized_keys: `hvc_mesh_key_options` (where the key is accepted from) and
`hvc_mesh_stale_keys` (this cluster's earlier keys, still authorized after a rotation or the upgrade from one key
per controller).

The addresses come from the hosts (their facts, or the records kept of them): only IP address literals are kept,
so no host can widen the `from=` list with a pattern (`*`, `!`, a network) or add an option (`,` or `"`).
"""
from __future__ import annotations

import ipaddress
import os
import sys

from ansible.errors import AnsibleFilterError

try:  # under Ansible: the collection's own filter module
    from ansible_collections.hvc.horovod_cluster.plugins.filter.hvc_ssh_host_keys import KEY_TYPES
except ImportError:  # plain Python (unit tests): the file beside this one
    if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
        sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from hvc_ssh_host_keys import KEY_TYPES

COMMENT = "horovod-cluster mesh key"  # a key of this cluster's comment is COMMENT + " " + cluster_id
LOOPBACK = ("127.0.0.1", "::1")  # a host launching ranks on itself by its own name may connect over loopback


def _addresses(values) -> list[str]:
    """The IP address literals among values (a zone index such as %eth0 has no place in from=)."""
    kept = []
    for value in values or []:
        try:
            address = ipaddress.ip_address(str(value))
        except ValueError:
            continue
        if getattr(address, "scope_id", None) is None:
            kept.append(str(address))
    return kept


def _networks(allow_from, variable: str) -> list[str]:
    allow_from = [] if allow_from is None else allow_from
    if not isinstance(allow_from, (list, tuple)):
        raise AnsibleFilterError(f"{variable} must be a list of addresses or networks (CIDR), got {allow_from!r}")
    networks = []
    for value in allow_from:
        try:
            networks.append(str(ipaddress.ip_network(str(value), strict=False)))
        except ValueError:
            raise AnsibleFilterError(f"{variable} has {value!r}: expected an IP address or a network such as "
                                     "192.168.1.0/24") from None
    return networks


def hvc_mesh_key_options(members, allow_from=None, variable: str = "ssh_mesh_allow_from") -> str:
    """`restrict,from="..."` for the mesh key: the mesh hosts' addresses, loopback and allow_from, sorted."""
    sources = set(LOOPBACK) | set(_networks(allow_from, variable))
    for member in members or []:
        sources.update(_addresses(member.get("addresses")))
    return 'restrict,from="%s"' % ",".join(sorted(sources))


def hvc_mesh_stale_keys(authorized_keys: str, current: str, cluster_id: str) -> list[str]:
    """The `TYPE BASE64` of each line of authorized_keys that holds an earlier key of this cluster (its comment)
    or of the single controller-wide key of older releases (the bare comment), other than the current key."""
    current_blob = (current or "").split()[1] if len((current or "").split()) > 1 else ""
    ours = (f"{COMMENT} {cluster_id}", COMMENT)
    stale = []
    for line in (authorized_keys or "").splitlines():
        words = line.split()
        # options (no spaces in ours) may come first: the key type is the word before the blob
        for i, word in enumerate(words[:-1]):
            if word in KEY_TYPES:
                blob, comment = words[i + 1], " ".join(words[i + 2:])
                if comment in ours and blob != current_blob:
                    stale.append(f"{word} {blob}")
                break
    return stale


class FilterModule:
    def filters(self):
        return {"hvc_mesh_key_options": hvc_mesh_key_options, "hvc_mesh_stale_keys": hvc_mesh_stale_keys}
