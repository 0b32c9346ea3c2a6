# -*- coding: utf-8 -*-
# Apache-2.0
"""Callback plugin: freeze the controller's garbage collector before each task's workers fork.

Ansible forks one worker per host per task. A forked worker shares the controller's memory until it
writes to it, and Python's cyclic garbage collector writes to every object it tracks; so each worker
copies the controller's memory page by page, and that cost grows with the memory, which grows with the
hosts (facts, published results): ansible/ansible#73654. gc.freeze() moves every object alive now out
of the collector's reach, so a worker's collections no longer touch them. Reference counting still
frees what is no longer used; only reference cycles among frozen objects stay until the run ends.
benchmarks/plan_scaleout.py measures the effect.
"""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: hvc_gc_freeze
type: aggregate
short_description: Freeze the controller's garbage collector before each task (cheaper worker forks)
description:
  - Calls Python's C(gc.freeze()) in the controller when a task starts, before its workers are forked,
    so the workers' garbage collections do not copy the controller's memory (ansible/ansible#73654).
  - Prints nothing. Enable it with C(callbacks_enabled = hvc.horovod_cluster.hvc_gc_freeze) (the
    project's ansible.cfg does).
"""

import gc

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "hvc.horovod_cluster.hvc_gc_freeze"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_task_start(self, task, is_conditional):
        gc.freeze()

    def v2_playbook_on_handler_task_start(self, task):
        gc.freeze()
