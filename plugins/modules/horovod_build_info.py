#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module horovod_build_info."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: horovod_build_info
short_description: Report what an installed Horovod was built with (check-build)
description:
  - Runs C(horovodrun --check-build) of a Python environment (through that environment's
    interpreter, so no PATH is needed) and parses its [X]/[ ] marks, because the command always
    exits 0.
  - The installed frameworks' Horovod extensions are imported once before check-build runs, so its
    forked checks (six for PyTorch) do not import them again.
  - Returns the frameworks, controllers and tensor operations Horovod was built with, and its version.
  - Changes nothing; safe in check mode.
options:
  python:
    description: Interpreter of the environment Horovod is installed in.
    type: path
    required: true
  expect:
    description:
      - "Capabilities that must be present, e.g. C({frameworks: [pytorch], controllers: [gloo, mpi]})."
      - The module fails naming the missing ones.
    type: dict
    default: {}
  timeout:
    description:
      - Seconds before check-build is given up (it imports every framework; on a loaded host that
        took over 120 s).
    type: int
    default: 600
author:
  - horovod-cluster
"""

EXAMPLES = r"""
- name: Read Horovod's capabilities
  horovod_build_info:
    python: /opt/horovod-env/bin/python
    expect:
      frameworks: [pytorch]
      controllers: [gloo, mpi]
"""

RETURN = r"""
installed:
  description: Whether horovod is importable in the environment.
  type: bool
  returned: always
version:
  description: Horovod version from check-build.
  type: str
  returned: when installed
capabilities:
  description: Lists of built frameworks, controllers, tensor_operations (lower case).
  type: dict
  returned: when installed
mpi_prefix:
  description:
    - The prefix of the Open MPI Horovod was built against where it is not the system's (PyPI's, a source build),
      from the horovod role's marker next to the environment; empty otherwise, or when the marker's is not a plain
      absolute path. horovodrun's mpirun needs it (--prefix) to start that Open MPI on every host.
  type: str
  returned: always
missing:
  description: Expected capabilities that are not built (section:name).
  type: list
  returned: always
ansible_facts:
  description: C(horovod_build_info) with the same data.
  type: dict
  returned: always
"""

import json
import os
import re
import subprocess

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.horovod_check_build import (
    CheckBuildParseError, missing_capabilities, parse_check_build)

# Same as horovodrun's entry point, through the env's own interpreter.
# horovodrun --check-build asks each question (is the extension there, MPI, Gloo, NCCL, DDL, CCL) in a forked
# child that imports the framework's extension again: six imports of torch, about 1 s each. The frameworks
# installed are imported once here first, so every child forks with them loaded; the questions, the forks
# and the output are still check-build's own. An extension that fails to import here fails in its child too
# and is reported as not built, as before.
_CHECK_BUILD = """
import importlib, importlib.util
for framework in ("tensorflow", "torch", "mxnet"):
    if importlib.util.find_spec(framework) is not None:
        try:
            importlib.import_module("horovod." + framework)
        except Exception:
            pass
from horovod.runner.launch import run_commandline
run_commandline()
"""
# The horovod role's marker, in the environment's folder (bin/python's parent).
_MARKER = ".horovod-platform-key.json"
_PLAIN_PATH = re.compile(r"^/[A-Za-z0-9._+/-]+\Z")


def marker_mpi_prefix(python):
    """The marker's mpi_prefix when it is a plain absolute path (it reaches horovodrun's shell line), else ''."""
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(python)), _MARKER)) as f:
            prefix = json.load(f).get("mpi_prefix") or ""
    except (OSError, ValueError, AttributeError):
        return ""
    return prefix if isinstance(prefix, str) and _PLAIN_PATH.match(prefix) else ""


_IMPORT_PROBE = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('horovod') else 3)"


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type="path", required=True),
            expect=dict(type="dict", default={}),
            timeout=dict(type="int", default=600),
        ),
        supports_check_mode=True,
    )
    python = module.params["python"]
    result = dict(changed=False, installed=False, version=None, capabilities={}, missing=[],
                  mpi_prefix=marker_mpi_prefix(python))
    if not os.access(python, os.X_OK):
        result["msg"] = "interpreter %s does not exist or is not executable" % python
        result["missing"] = missing_capabilities({}, module.params["expect"])
        result["ansible_facts"] = {"horovod_build_info": dict(result)}
        if result["missing"]:
            module.fail_json(**result)
        module.exit_json(**result)

    env = {"PYTHONWARNINGS": "ignore", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    rc, _out, _err = module.run_command([python, "-c", _IMPORT_PROBE], environ_update=env)
    if rc == 0:
        run_env = dict(os.environ, **env)
        try:
            proc = subprocess.run([python, "-c", _CHECK_BUILD, "--check-build"], env=run_env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=module.params["timeout"])
        except subprocess.TimeoutExpired:
            module.fail_json(msg="check-build did not finish in %s s" % module.params["timeout"])
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
        try:
            parsed = parse_check_build(out)
        except CheckBuildParseError as exc:
            module.fail_json(msg="check-build output not understood: %s" % exc, rc=rc, stdout=out, stderr=err)
        result["installed"] = True
        result["version"] = parsed["version"]
        result["capabilities"] = {k: parsed[k] for k in ("frameworks", "controllers", "tensor_operations")}
        result["stdout"] = out
    result["missing"] = missing_capabilities(result["capabilities"], module.params["expect"])
    result["ansible_facts"] = {"horovod_build_info": {
        k: result[k] for k in ("installed", "version", "capabilities", "missing", "mpi_prefix")}}
    if result["missing"]:
        result["msg"] = "horovod lacks expected capabilities: %s" % ", ".join(result["missing"])
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
