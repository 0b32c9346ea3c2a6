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
With the host-tasks in one process, a template compiled for one host can serve the next: CompiledTemplates.

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
  - While it runs, a Jinja template compiled once is kept and rendered again for the next host (ansible-core
    compiles every template string at each render).
  - On an ansible-core whose internals differ from 2.19's it behaves exactly as C(ansible.builtin.linear),
    and says so in a warning.
  - Opt-in. playbooks/plan.yml uses ansible's own linear strategy unless
    C(-e cluster_plan_strategy=hvc.horovod_cluster.hvc_linear).
"""

import inspect

from ansible.executor.task_executor import TaskExecutor
from ansible.module_utils.ansible_release import __version__ as ANSIBLE_CORE_VERSION
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategy
from ansible.utils.display import Display

try:  # ansible-core 2.19's worker result, task context, the plugin loaders a worker gets, its template engine
    from ansible._internal._task import TaskContext
    from ansible._internal._templating._engine import TemplateEngine
    from ansible._internal._templating._jinja_bits import AnsibleTemplate, AnsibleTemplateExpression
    from ansible.executor.task_result import _RawTaskResult
    from ansible.plugins.loader import get_plugin_loader_namespace
except ImportError:  # pragma: no cover - another ansible-core: linear, unchanged
    TaskContext = _RawTaskResult = get_plugin_loader_namespace = TemplateEngine = None

_TESTED_EXECUTOR_ARGS = ["self", "host", "task", "job_vars", "play_context", "loader", "shared_loader_obj",
                         "final_q", "variable_manager"]
INLINE = _RawTaskResult is not None and list(inspect.signature(TaskExecutor.__init__).parameters) == \
    _TESTED_EXECUTOR_ARGS
# TemplateEngine's two compile steps, as 2.19 has them: (self, source, options) -> a callable template
_COMPILE_STEPS = {"_compile_template": ["self", "template", "options"],
                  "_compile_expression": ["self", "expression", "options"]}
CACHE_TEMPLATES = INLINE and all(
    list(inspect.signature(getattr(TemplateEngine, step)).parameters) == args for step, args in _COMPILE_STEPS.items())

# Action plugins that read only the task's variables (include_vars and hvc_recorded_facts: files on the
# controller) and return a result: no connection, no module, no file transfer, nothing written anywhere.
CONTROLLER_ONLY = frozenset(
    f"ansible.builtin.{name}" for name in (
        "set_fact", "assert", "fail", "debug", "set_stats", "include_tasks", "include_role", "include_vars",
        "validate_argument_spec",
    )
) | {"hvc.horovod_cluster.hvc_recorded_facts", "hvc.horovod_cluster.hvc_warn"}


class StrategyModule(LinearStrategy):

    def run(self, iterator, play_context):
        if not INLINE:  # never silently slower: the user asked for this strategy
            Display().warning(f"hvc_linear: ansible-core {ANSIBLE_CORE_VERSION} is not the 2.19 it was written "
                              "for; every task forks a worker, as under ansible.builtin.linear")
        if not CACHE_TEMPLATES:
            return super().run(iterator, play_context)
        with CompiledTemplates():
            return super().run(iterator, play_context)

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


class CompiledTemplates:
    """While the strategy runs, a Jinja template (or `when` expression) compiled once is kept and used again.

    ansible-core compiles every template string each time it renders it (no cache: in a forked worker one
    would die with the worker). With the controller-only tasks run here, the same strings (a role's task
    arguments and conditions) come back once per host, and compiling them was over a third of a plan's
    time (cProfile, 40 recorded-fact hosts). A compiled template depends only on its source, the overrides
    and backslash escaping it was compiled with and where its environment's loader looks for files (the
    playbook's folder; a template lookup's search path), which together are the key; it is rendered with
    each host's own variables as before. Every templar's environment is ansible's own, whose filters and
    tests come from the same plugin loaders, so a template compiled in one renders the same in another.
    A compile that failed is not kept: its error names the place the template came from.
    """

    LIMIT = 20000  # distinct templates kept (a plan has ~1,300); past it the cache starts over

    def __init__(self):
        self._compiled = {}
        self._originals = {}

    def __enter__(self):
        for step in _COMPILE_STEPS:
            self._originals[step] = original = getattr(TemplateEngine, step)
            setattr(TemplateEngine, step, self._cached(original))
        return self

    def __exit__(self, *exc_info):
        for step, original in self._originals.items():
            setattr(TemplateEngine, step, original)
        self._compiled.clear()

    def _cached(self, compile_step):
        compiled = self._compiled

        def compile_once(engine, source, options):
            # the loader's search path is where {% include %} and the template lookup find files
            key = (compile_step.__name__, str(source), options.overrides, options.escape_backslashes,
                   tuple(getattr(engine.environment.loader, "searchpath", None) or ()))
            template = compiled.get(key)
            if template is None:
                template = compile_step(engine, source, options)
                if isinstance(template, (AnsibleTemplate, AnsibleTemplateExpression)):
                    if len(compiled) >= self.LIMIT:
                        compiled.clear()
                    compiled[key] = template
            return template

        return compile_once
