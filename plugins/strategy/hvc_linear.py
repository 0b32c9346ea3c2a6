# -*- coding: utf-8 -*-
# Apache-2.0
"""Strategy plugin: ansible's linear strategy, with tasks that never reach a host run in the controller's
own process instead of a forked worker.

Ansible forks one worker per host and task, also for set_fact, assert or include_tasks, which only
compute on the controller. A fork costs more the more memory the controller holds, and that grows with
the hosts (their facts and published results): over recorded facts (`plan`), where nearly every task is
such a task, the forks' kernel time (page-table copies, copy-on-write faults) was 40% of the plan's CPU
time and all of the part that grew with the hosts (benchmarks/plan_scaleout.py). Here those tasks run
through the same TaskExecutor, on a copy of the task (a worker mutates its own forked copy), and their
results take the workers' way back (the results queue), so callbacks, facts, includes and stats see no
difference. Any other task (modules, connections, delegation, async) still goes to a forked worker.

Third-party strategy plugins are deprecated since ansible-core 2.19 (ansible/ansible#84725: the interface
is ansible-core's internals), and ansible-core prints a deprecation warning when one is used. This one
runs tasks inline only where those internals are the ones it was written and tested against (2.19's
TaskExecutor and worker result); on any other ansible-core it is ansible's linear strategy unchanged.
"""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: hvc_linear
short_description: Linear strategy that runs controller-only tasks without forking a worker
description:
  - Same task order and semantics as C(ansible.builtin.linear).
  - Tasks whose action only computes on the controller (set_fact, assert, fail, debug, set_stats,
    include_tasks, include_role, include_vars, validate_argument_spec, hvc_recorded_facts, hvc_warn) and that
    are not delegated or async run in the controller's process, one host at a time, instead of in a
    forked worker; everything else forks as usual.
  - On an ansible-core whose internals differ from 2.19's it behaves exactly as C(ansible.builtin.linear).
  - playbooks/plan.yml uses it (C(-e cluster_plan_strategy=linear) plans with ansible's own).
"""

import inspect

from ansible.executor.task_executor import TaskExecutor
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategy

try:  # ansible-core 2.19's worker result, task context and the plugin loaders a worker gets
    from ansible._internal._task import TaskContext
    from ansible.executor.task_result import _RawTaskResult
    from ansible.plugins.loader import get_plugin_loader_namespace
except ImportError:  # pragma: no cover - another ansible-core: linear, unchanged
    TaskContext = _RawTaskResult = get_plugin_loader_namespace = None

_TESTED_EXECUTOR_ARGS = ["self", "host", "task", "job_vars", "play_context", "loader", "shared_loader_obj",
                         "final_q", "variable_manager"]
INLINE = _RawTaskResult is not None and list(inspect.signature(TaskExecutor.__init__).parameters) == \
    _TESTED_EXECUTOR_ARGS

# Action plugins that read only the task's variables (include_vars and hvc_recorded_facts: files on the
# controller) and return a result: no connection, no module, no file transfer, nothing written anywhere.
CONTROLLER_ONLY = frozenset(
    f"ansible.builtin.{name}" for name in (
        "set_fact", "assert", "fail", "debug", "set_stats", "include_tasks", "include_role", "include_vars",
        "validate_argument_spec",
    )
) | {"hvc.horovod_cluster.hvc_recorded_facts", "hvc.horovod_cluster.hvc_warn"}


class StrategyModule(LinearStrategy):

    def _queue_task(self, host, task, task_vars, play_context):
        if not (INLINE and runs_in_controller(task)):
            return super()._queue_task(host, task, task_vars, play_context)
        # The results' path looks the queued task up here, as for a worker's result.
        self._queued_task_cache[(host.name, task._uuid)] = {
            "host": host, "task": task, "task_vars": task_vars, "play_context": play_context}
        own = task.copy(exclude_tasks=True)  # TaskExecutor squashes and post-validates the task it gets
        if own.loop_control:
            own.loop_control = own.loop_control.copy()
        self._tqm.send_callback("v2_runner_on_start", host, task)
        with TaskContext(own):
            # TaskExecutor adds to the variables it gets (search path, loop variables): a worker adds to its
            # forked copy, and the results' path reads the queued ones afterwards.
            result = TaskExecutor(host, own, dict(task_vars), play_context, self._loader,
                                  get_plugin_loader_namespace(), self._final_q, self._variable_manager).run()
        self._final_q.send_task_result(_RawTaskResult(host=host, task=own, return_data=result,
                                                      task_fields=own.dump_attrs()))
        self._pending_results += 1


def runs_in_controller(task) -> bool:
    """Whether the task can run in the controller's process: a controller-only action, not delegated
    (delegation brings another host's connection variables), not async, no debugger."""
    try:
        action = task.resolved_action
    except Exception:  # an action that does not resolve fails in a worker, with ansible's own message
        return False
    return (action in CONTROLLER_ONLY and not task.delegate_to and not task.async_val
            and not task.debugger)
