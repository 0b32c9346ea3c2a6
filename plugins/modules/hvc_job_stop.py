#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module hvc_job_stop."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: hvc_job_stop
short_description: Stop every process of one horovod-cluster job on a host
description:
  - C(horovod-cluster run) starts horovodrun with C(HVC_JOB_ID=<job id>) in its environment;
    horovodrun hands its environment to every rank (Gloo) or every C(mpirun -x) (MPI), so each
    process of the job carries the marker, whatever its command line.
  - Finds the processes whose environment holds the marker (Linux C(/proc/<pid>/environ); processes
    of other users are not readable and not touched), sends SIGTERM, waits, then SIGKILL.
  - Fails when a process of the job survives SIGKILL. In check mode only lists them.
options:
  job_id:
    description: The job's id, as C(horovod-cluster run) printed it (letters, digits, C(.), C(_), C(-)).
    type: str
    required: true
  grace:
    description: Seconds between SIGTERM and SIGKILL.
    type: int
    default: 5
author:
  - horovod-cluster
"""

EXAMPLES = r"""
- name: Stop the job's ranks
  hvc_job_stop:
    job_id: 20261124-010203-ab12cd34
"""

RETURN = r"""
stopped:
  description: The processes of the job that were running, as C({pid, cmd}).
  type: list
  elements: dict
  returned: always
remaining:
  description: Processes of the job still running after SIGKILL (empty on success).
  type: list
  elements: dict
  returned: always
"""

import os
import re
import signal
import time

from ansible.module_utils.basic import AnsibleModule

_JOB_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def job_processes(marker):
    """{pid: command line} of the processes whose environment holds `marker` (bytes)."""
    found = {}
    own = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == own:
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as env:
                if marker not in env.read().split(b"\0"):
                    continue
            with open("/proc/%s/cmdline" % name, "rb") as cmd:
                found[int(name)] = cmd.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except (IOError, OSError):  # gone meanwhile, or another user's
            continue
    return found


def _signal(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _wait(marker, seconds):
    deadline = time.time() + seconds
    left = job_processes(marker)
    while left and time.time() < deadline:
        time.sleep(0.2)
        left = job_processes(marker)
    return left


def main():
    module = AnsibleModule(
        argument_spec=dict(job_id=dict(type="str", required=True), grace=dict(type="int", default=5)),
        supports_check_mode=True,
    )
    job_id = module.params["job_id"]
    if not _JOB_ID.match(job_id):
        module.fail_json(msg="job_id %r: expected 1-64 letters, digits, '.', '_' or '-'" % job_id)
    if not os.path.isdir("/proc/self"):
        module.fail_json(msg="hvc_job_stop needs Linux /proc; stop the job's processes by hand on this host")
    marker = ("HVC_JOB_ID=%s" % job_id).encode()
    running = job_processes(marker)
    stopped = [dict(pid=pid, cmd=cmd) for pid, cmd in sorted(running.items())]
    if module.check_mode or not running:
        module.exit_json(changed=bool(running), stopped=stopped, remaining=[])
    _signal(running, signal.SIGTERM)
    left = _wait(marker, module.params["grace"])
    _signal(left, signal.SIGKILL)
    left = _wait(marker, 5)
    remaining = [dict(pid=pid, cmd=cmd) for pid, cmd in sorted(left.items())]
    if remaining:
        module.fail_json(msg="%d process(es) of job %s survived SIGKILL" % (len(remaining), job_id),
                         stopped=stopped, remaining=remaining)
    module.exit_json(changed=True, stopped=stopped, remaining=[])


if __name__ == "__main__":
    main()
