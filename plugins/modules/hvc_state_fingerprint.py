#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module hvc_state_fingerprint."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: hvc_state_fingerprint
short_description: A digest of what a rollout put on a host, to tell whether anything changed since
description:
  - Reads the given paths and the host's hardware and OS identity and returns one digest; changes nothing.
  - "A file given by path counts with its content. A folder counts with every file, link and folder below
    it, not following links: each file's relative path, size, mode and modification time, each link's
    target. Byte code (C(__pycache__) folders) and folders' own times are left out, as running Python
    writes them without changing what was installed. An absent path counts as absent."
  - The host part is the processor count, the NVIDIA GPUs the driver lists (C(/proc/driver/nvidia/gpus)),
    the kernel release and C(/etc/os-release), so a host rebuilt or given another GPU is never taken for
    the same.
  - site.yml records the digest at the end of a rollout (C(cluster_state_file)) and compares it at the
    start of the next one (playbooks/settled.yml).
options:
  paths:
    description: >-
      Files and folders to digest (C(~user) is expanded on the host). A path inside another listed folder
      is counted once, as part of that folder.
    type: list
    elements: str
    required: true
  exclude:
    description: Paths left out of the walk (the record file itself, which lies under a digested folder).
    type: list
    elements: str
    default: []
author:
  - horovod-cluster
"""

EXAMPLES = r"""
- name: Digest the project's folder and the package database
  hvc_state_fingerprint:
    paths: [/opt/horovod, /var/lib/dpkg/status]
    exclude: [/opt/horovod/rollout-state.json]
"""

RETURN = r"""
digest:
  description: sha256 over every path's digest and the host part.
  type: str
  returned: always
paths:
  description: Each path (as given) with its own digest, so a caller can name what changed (not the paths
    inside another listed folder).
  type: dict
  returned: always
files:
  description: How many files and links were read or listed.
  type: int
  returned: always
"""

import hashlib
import os
import platform
import stat

from ansible.module_utils.basic import AnsibleModule

_SKIP_DIRS = frozenset(("__pycache__",))
_CHUNK = 1 << 20


def _file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _entry(path, st):
    """One line for a walked entry: a file's size, mode and time, a folder's mode, a link's target."""
    if stat.S_ISLNK(st.st_mode):
        return "l %s" % os.readlink(path)
    if stat.S_ISDIR(st.st_mode):  # its entries count one by one; its size and time follow them
        return "d %o" % stat.S_IMODE(st.st_mode)
    return "f %d %o %d" % (st.st_size, stat.S_IMODE(st.st_mode), st.st_mtime_ns)


def path_digest(path, exclude=frozenset()):
    """(digest, entries read) of one path: absent, a file by content, or a folder walked without links."""
    try:
        top = os.lstat(path)
    except OSError:
        return hashlib.sha256(b"absent").hexdigest(), 0
    if stat.S_ISLNK(top.st_mode):
        target = os.readlink(path)
        inner, count = path_digest(os.path.join(os.path.dirname(path), target), exclude) \
            if os.path.exists(path) else (hashlib.sha256(b"absent").hexdigest(), 0)
        return hashlib.sha256(("link %s %s" % (target, inner)).encode()).hexdigest(), count + 1
    if not stat.S_ISDIR(top.st_mode):
        try:
            content = _file_digest(path)
        except OSError:  # not readable by this user (a rootless host): its size, mode and time stand in
            content = _entry(path, top)
        return hashlib.sha256(("file %o %s" % (stat.S_IMODE(top.st_mode), content)).encode()).hexdigest(), 1
    digest = hashlib.sha256(b"folder")
    count = 0
    for root, dirs, files in os.walk(path, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and os.path.join(root, d) not in exclude)
        names = sorted(dirs) + sorted(f for f in files if os.path.join(root, f) not in exclude)
        for name in names:
            full = os.path.join(root, name)
            try:
                line = _entry(full, os.lstat(full))
            except OSError:  # removed while walking
                continue
            digest.update(("%s\0%s\n" % (os.path.relpath(full, path), line)).encode("utf-8", "surrogateescape"))
            count += 1
    return digest.hexdigest(), count


def host_identity():
    """The processor count, the GPUs the NVIDIA driver lists, the kernel and the OS release."""
    gpus_dir = "/proc/driver/nvidia/gpus"
    gpus = sorted(os.listdir(gpus_dir)) if os.path.isdir(gpus_dir) else []
    try:
        with open("/etc/os-release", "rb") as handle:
            os_release = hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        os_release = platform.mac_ver()[0] or "unknown"
    return "cpus=%s gpus=%s kernel=%s os=%s" % (os.cpu_count(), ",".join(gpus), platform.release(), os_release)


def fingerprint(paths, exclude=()):
    """{digest, paths: {path: digest}, files} of the given paths and this host's identity."""
    excluded = frozenset(os.path.expanduser(p) for p in exclude)
    full = {path: os.path.normpath(os.path.expanduser(path)) for path in set(paths)}
    per_path, files = {}, 0
    for path in sorted(full):
        if any(other != full[path] and full[path].startswith(other.rstrip("/") + "/") for other in full.values()):
            continue  # inside another listed folder, which counts it already
        per_path[path], count = path_digest(full[path], excluded)
        files += count
    digest = hashlib.sha256(host_identity().encode())
    for path in sorted(per_path):
        digest.update(("%s\0%s\n" % (path, per_path[path])).encode("utf-8", "surrogateescape"))
    return {"digest": digest.hexdigest(), "paths": per_path, "files": files}


def main():
    module = AnsibleModule(
        argument_spec={"paths": {"type": "list", "elements": "str", "required": True},
                       "exclude": {"type": "list", "elements": "str", "default": []}},
        supports_check_mode=True,
    )
    module.exit_json(changed=False, **fingerprint(module.params["paths"], module.params["exclude"]))


if __name__ == "__main__":
    main()
