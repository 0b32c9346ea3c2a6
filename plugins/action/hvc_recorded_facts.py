# -*- coding: utf-8 -*-
# Apache-2.0
"""Action plugin: load a host's recorded facts from a file on the controller.

It runs entirely on the controller and never opens a connection to the host, so the roles'
decide steps (playbooks/plan.yml) can plan hosts that are not reachable, or do not exist
(tests/fixtures/facts). A file is <dir>/<inventory_hostname>.json holding either the facts
themselves (setup's keys, `ansible_distribution`, ..., plus `hvc_platform`) or what
`ansible HOST -m setup --tree DIR` writes ({"ansible_facts": {...}}).
Record real hosts with playbooks/record_facts.yml.
"""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: hvc_recorded_facts
short_description: Load recorded facts of a host from the controller (no connection)
options:
  dir:
    description: Folder of <inventory_hostname>.json files.
    type: path
    required: true
  host:
    description: Which host's file; defaults to the inventory hostname.
    type: str
"""

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("dir", "host"))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        folder = self._task.args.get("dir")
        if not folder:
            raise AnsibleActionFail("hvc_recorded_facts: `dir` is required")
        host = self._task.args.get("host") or task_vars.get("inventory_hostname")
        path = os.path.join(os.path.expanduser(str(folder)), "%s.json" % host)
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            raise AnsibleActionFail("no recorded facts for host %s: %s is missing (record them with "
                                    "playbooks/record_facts.yml)" % (host, path))
        except ValueError as err:
            raise AnsibleActionFail("recorded facts of host %s in %s are not JSON: %s" % (host, path, err))
        facts = dict(data.get("ansible_facts", data))
        if "hvc_platform" in data and "hvc_platform" not in facts:
            facts["hvc_platform"] = data["hvc_platform"]
        facts.pop("discovered_interpreter_python", None)
        result.update(changed=False, ansible_facts=facts, recorded_facts_file=path)
        return result
