# -*- coding: utf-8 -*-
# Apache-2.0
"""Action plugin: a digest of everything a rollout of one host is made from, on the controller.

A rollout's result on a host follows from three inputs: the host's project variables as written (any
role's prefix, proxy_env, the connection's user, address, become and interpreter), the members of the
`cluster` group (ssh_mesh and hostfile list them all), and the collection itself (roles, playbooks,
plugins: an edited role is never taken for settled), run by one ansible-core version. site.yml records
this digest with the host's state fingerprint at the end of a rollout and compares both at the start
of the next (playbooks/settled.yml). It also lists what the controller must still hold for the host
(controller_missing): a host is not settled from a controller that lacks it. Never connects to the host.
"""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: hvc_state_inputs
short_description: Digest of a host's project variables, the cluster's members and the collection (controller only)
options:
  ignore:
    description: Variables that steer a run without changing what it installs (the smoke test, the batch size).
    type: list
    elements: str
    default: []
"""

import hashlib
import json
import os
from pathlib import Path

import yaml
from ansible.plugins.action import ActionBase
from ansible.release import __version__ as ansible_version
from ansible.template import trust_as_template

# The collection's root (this file is plugins/action/hvc_state_inputs.py) and what of it a rollout runs.
ROOT = Path(__file__).resolve().parents[2]
CONTENT = ("roles", "playbooks", "plugins", "site.yml")
# Documentation (a role's README) is not read by a rollout: editing it keeps a cluster settled.
NOT_READ = (".md",)
# Connection variables that shape what lands on a host (whose files, which names in known_hosts).
CONNECTION = ("ansible_host", "ansible_user", "ansible_become", "ansible_become_user", "ansible_become_method",
              "ansible_python_interpreter", "proxy_env")
_CONTENT_DIGEST: dict = {}
# What a later run needs from the controller, per role, in that role's own variables (its defaults where the
# inventory sets none): ssh_mesh's cluster keypair and each host's mesh and hostfile records. A controller
# without them (another checkout or inventory path, a wiped cache, a second admin machine) must roll out in full:
# found settled, it would leave them missing, and a later --limit run would make a new mesh key for part of the
# cluster only, or leave out the hosts it holds no record of.
CONTROLLER_FILES = {
    "ssh_mesh": ("{{ ssh_mesh_key_dir }}/{{ ssh_mesh_key_name }}",
                 "{{ ssh_mesh_key_dir }}/{{ ssh_mesh_key_name }}.pub",
                 "{{ ssh_mesh_record_dir }}/{{ inventory_hostname }}.json"),
    "hostfile": ("{{ hostfile_record_dir }}/{{ inventory_hostname }}.json",),
}


def content_digest(root=ROOT):
    """sha256 over the path and content of every file a rollout reads from the collection, documentation left
    out (once per process)."""
    key = str(root)
    if key not in _CONTENT_DIGEST:
        digest = hashlib.sha256()
        for part in CONTENT:
            top = Path(root) / part
            files = [top] if top.is_file() else sorted(
                p for p in top.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(NOT_READ))
            for path in files:
                digest.update(("%s\0" % path.relative_to(root)).encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
        _CONTENT_DIGEST[key] = digest.hexdigest()
    return _CONTENT_DIGEST[key]


def role_prefixes(root=ROOT):
    """Each role's variable prefix (cluster_defaults' settings are cluster_*)."""
    names = sorted(p.name for p in (Path(root) / "roles").iterdir() if (p / "tasks").is_dir() or (p / "defaults").is_dir())
    return tuple(sorted({"cluster_"} | {name + "_" for name in names if name != "cluster_defaults"}))


def project_variables(task_vars, ignore=(), root=ROOT):
    """{name: value as written} of the host's project variables, less the ignored ones."""
    prefixes = role_prefixes(root)
    return {name: value for name, value in task_vars.items()
            if (name.startswith(prefixes) or name in CONNECTION) and name not in ignore}


def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def inputs(task_vars, ignore=(), root=ROOT):
    """{digest, parts: {variables, members, content}} for one host."""
    members = sorted((task_vars.get("groups") or {}).get("cluster") or [])
    parts = {"variables": _digest(project_variables(task_vars, ignore, root)),
             "members": _digest(members),
             "content": "%s ansible-core %s" % (content_digest(root), ansible_version)}
    return {"digest": _digest(parts), "parts": parts}


def _trusted(value):
    return trust_as_template(value) if isinstance(value, str) else value


def controller_missing(task_vars, templar, root=ROOT):
    """The paths of CONTROLLER_FILES the controller lacks for this host, rendered with the host's variables."""
    missing = []
    for role, paths in CONTROLLER_FILES.items():
        defaults = yaml.safe_load((Path(root) / "roles" / role / "defaults" / "main.yml").read_text()) or {}
        variables = {**{name: _trusted(value) for name, value in defaults.items()}, **task_vars}
        render = templar.copy_with_new_env(available_variables=variables).template
        missing += [path for path in (render(trust_as_template(p)) for p in paths) if not os.path.isfile(path)]
    return missing


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("ignore",))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        ignore = frozenset(self._task.args.get("ignore") or [])
        result.update(changed=False, controller_missing=controller_missing(task_vars or {}, self._templar),
                      **inputs(task_vars or {}, ignore))
        return result
