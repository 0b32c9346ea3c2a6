# -*- coding: utf-8 -*-
# Apache-2.0
"""Action plugin: show warnings (a list of lines) as Ansible warnings, on the controller.

Ansible prints them as [WARNING] lines and keeps them in the task result (`warnings`), where the
horovod_cluster CLI and reports read them. Changes nothing; never connects to the host.
"""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: hvc_warn
short_description: Show a list of lines as Ansible warnings (controller only, no connection)
options:
  msgs:
    description: The warnings; an empty list shows nothing.
    type: list
    elements: str
    required: true
"""

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("msgs",))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        msgs = self._task.args.get("msgs") or []
        if isinstance(msgs, str):
            msgs = [msgs]
        result.update(changed=False, msg="%d warning(s)" % len(msgs))
        if msgs:
            result["warnings"] = [str(m) for m in msgs]
        return result
