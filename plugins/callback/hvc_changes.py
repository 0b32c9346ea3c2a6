# -*- coding: utf-8 -*-
# Apache-2.0
"""Callback plugin: tell the rest of a playbook run which hosts a task of this run has changed.

A play cannot ask Ansible whether an earlier task changed anything; its run statistics live in the
controller's main process. This callback keeps the list in that process's environment, as
HVC_CHANGED_HOSTS (host names, comma separated, empty while nothing changed), and the tasks that
follow read it with `lookup('ansible.builtin.env', 'HVC_CHANGED_HOSTS')`: every task runs in a
worker forked from that process after the results before it were counted. site.yml uses it to run
the cross-host smoke test only after a change (cluster_rollout_smoke). Without this callback the
variable is unset and the smoke test always runs.
"""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: hvc_changes
type: aggregate
short_description: Keep the hosts a task of this run changed in HVC_CHANGED_HOSTS (for later plays)
description:
  - Sets the environment variable C(HVC_CHANGED_HOSTS) of the controller process to the comma-separated
    names of the hosts on which a task of this playbook run reported C(changed), empty until one does.
  - Later tasks read it with C(lookup('ansible.builtin.env', 'HVC_CHANGED_HOSTS')); site.yml runs its
    cross-host smoke test only after a change (C(cluster_rollout_smoke=changed)).
  - Prints nothing. Enable it with C(callbacks_enabled = hvc.horovod_cluster.hvc_changes) (the
    project's ansible.cfg does).
"""

import os

from ansible.plugins.callback import CallbackBase

ENV = "HVC_CHANGED_HOSTS"


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "hvc.horovod_cluster.hvc_changes"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.changed: set[str] = set()
        os.environ[ENV] = ""  # this run has changed nothing yet (a value left by a parent process is not ours)

    def v2_runner_on_ok(self, result):
        # A loop's items are summed up in this one result; a handler's result comes here too.
        if result._result.get("changed", False):
            self.changed.add(result._host.get_name())
            os.environ[ENV] = ",".join(sorted(self.changed))
