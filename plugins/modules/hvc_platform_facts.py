#!/usr/bin/python
# -*- coding: utf-8 -*-
# Apache-2.0
"""Facts module: what this host is, normalized for the horovod-cluster roles."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: hvc_platform_facts
short_description: Normalized platform facts (OS, arch, Raspberry Pi, NVIDIA GPUs, cores, Python)
description:
  - Reads os-release, the device-tree model, C(/etc/rpi-issue), C(sw_vers) on macOS, NVIDIA device
    nodes, C(/proc/driver/nvidia) and C(nvidia-smi), and returns them as the fact C(hvc_platform).
  - Changes nothing on the host; supports check mode.
  - Raspberry Pi OS 64-bit reports C(ID=debian); it is recognized by the device-tree model
    (C(Raspberry Pi ...)) or C(/etc/rpi-issue).
options:
  os_release_path:
    description: os-release file (falls back to /usr/lib/os-release when the default is missing).
    type: path
    default: /etc/os-release
  device_tree_model_path:
    description:
      - Device-tree model file. A test can point it at a prepared file, since
        /proc/device-tree cannot be created in a container.
    type: path
    default: /proc/device-tree/model
  rpi_issue_path:
    description: The file only Raspberry Pi OS images carry.
    type: path
    default: /etc/rpi-issue
  dev_path:
    description: Where the NVIDIA device nodes (nvidia0, nvidia1, ...) are looked for.
    type: path
    default: /dev
  proc_driver_nvidia_path:
    description: The NVIDIA kernel module's /proc folder.
    type: path
    default: /proc/driver/nvidia
  nvidia_smi:
    description: nvidia-smi command name or path; only run when found.
    type: str
    default: nvidia-smi
  nvidia_smi_timeout:
    description: Seconds before a hanging nvidia-smi (a wedged driver) is given up.
    type: int
    default: 30
  dpkg_updates_path:
    description: dpkg's journal of a package operation in progress; files left there mean dpkg was interrupted.
    type: path
    default: /var/lib/dpkg/updates
author: horovod-cluster
"""

EXAMPLES = r"""
- name: Detect the platform
  hvc_platform_facts:

- name: Show it
  ansible.builtin.debug:
    var: ansible_facts['hvc_platform']
"""

RETURN = r"""
ansible_facts:
  description: C(hvc_platform) with os_id (ubuntu/debian/raspios/macos), os_version,
    os_version_major, os_family (debian/darwin), arch (x86_64/aarch64/armv7l), kernel_arch,
    is_raspberry_pi, device_model, gpu (present, count, names, driver_version, cuda_version,
    compute_capabilities, cuda_archs, devices), has_nvidia_gpu, cores, python_version, homebrew,
    dpkg_interrupted (true when dpkg's journal holds files, as after an install stopped half-way).
  returned: always
  type: dict
"""

import errno
import fcntl
import os
import platform
import struct
import subprocess
import sys

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.hvc_platform import (
    build_gpu_facts, build_platform, nvidia_device_nodes, parse_nvidia_smi_query,
    parse_proc_gpu_information)

QUERY_FIELDS = ["index", "name", "uuid", "driver_version", "memory.total", "compute_cap"]
BREW_PATHS = ("/opt/homebrew/bin/brew", "/usr/local/bin/brew", "/home/linuxbrew/.linuxbrew/bin/brew")


def read(path, binary=False):
    try:
        with open(path, "rb" if binary else "r") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def run(cmd, timeout):
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None, ""
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")


def detect_gpu(module):
    params = module.params
    try:
        dev_nodes = nvidia_device_nodes(os.listdir(params["dev_path"]))
    except OSError:
        dev_nodes = []
    proc = params["proc_driver_nvidia_path"]
    gpus_dir = os.path.join(proc, "gpus")
    models = []
    if os.path.isdir(gpus_dir):
        for bus in sorted(os.listdir(gpus_dir)):
            models.append(parse_proc_gpu_information(read(os.path.join(gpus_dir, bus, "information"))))
    smi = module.get_bin_path(params["nvidia_smi"]) if "/" not in params["nvidia_smi"] else (
        params["nvidia_smi"] if os.access(params["nvidia_smi"], os.X_OK) else None)
    header, rows = None, []
    if smi:
        code, out = run([smi], params["nvidia_smi_timeout"])
        header = out if code == 0 else None
        fields = list(QUERY_FIELDS)
        code, out = run([smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"],
                        params["nvidia_smi_timeout"])
        if code != 0:  # drivers before 510 do not know compute_cap
            fields.remove("compute_cap")
            code, out = run([smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"],
                            params["nvidia_smi_timeout"])
        rows = parse_nvidia_smi_query(out, fields) if code == 0 else []
    return build_gpu_facts(dev_nodes=dev_nodes, proc_driver_present=os.path.isdir(proc),
                           proc_version_text=read(os.path.join(proc, "version")),
                           proc_gpu_models=models, smi_path=smi, smi_header_text=header,
                           smi_query_rows=rows)


def dpkg_interrupted(updates_path):
    """apt's own test (files named by digits left in dpkg's journal folder), unless dpkg holds its lock right
    now: then it is running (unattended-upgrades), not interrupted, and the apt tasks wait for it."""
    try:
        if not any(name.isdigit() for name in os.listdir(updates_path)):
            return False
    except OSError:
        return False
    try:
        with open(os.path.join(os.path.dirname(updates_path.rstrip("/")), "lock"), "r+b") as lock:
            fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when closed
    except (BlockingIOError, PermissionError) as err:
        return not isinstance(err, BlockingIOError)  # held: running; not ours to open: the files decide
    except OSError as err:
        return err.errno not in (errno.EACCES, errno.EAGAIN)
    return True


def usable_cores():
    try:  # respects a container's or a job's CPU set, unlike cpu_count()
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def main():
    module = AnsibleModule(
        argument_spec=dict(
            os_release_path=dict(type="path", default="/etc/os-release"),
            device_tree_model_path=dict(type="path", default="/proc/device-tree/model"),
            rpi_issue_path=dict(type="path", default="/etc/rpi-issue"),
            dev_path=dict(type="path", default="/dev"),
            proc_driver_nvidia_path=dict(type="path", default="/proc/driver/nvidia"),
            nvidia_smi=dict(type="str", default="nvidia-smi"),
            nvidia_smi_timeout=dict(type="int", default=30),
            dpkg_updates_path=dict(type="path", default="/var/lib/dpkg/updates"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    system = platform.system()
    os_release = read(params["os_release_path"])
    if os_release is None and params["os_release_path"] == "/etc/os-release":
        os_release = read("/usr/lib/os-release")
    model = read(params["device_tree_model_path"], binary=True)
    if model is None and params["device_tree_model_path"] == "/proc/device-tree/model":
        model = read("/sys/firmware/devicetree/base/model", binary=True)
    sw_vers = None
    if system == "Darwin":
        sw_vers = run(["sw_vers"], 10)[1] or "ProductVersion: " + platform.mac_ver()[0]
    brew = next((p for p in BREW_PATHS if os.access(p, os.X_OK)), None) or module.get_bin_path("brew")
    facts = build_platform(
        os_release_text=os_release, system=system, machine=platform.machine(),
        userland_bits=struct.calcsize("P") * 8, device_tree_model_raw=model,
        rpi_issue_text=read(params["rpi_issue_path"]), sw_vers_text=sw_vers,
        gpu=detect_gpu(module) if system == "Linux" else None,
        cores=usable_cores(), cores_total=os.cpu_count(),
        python_version=platform.python_version(), python_executable=sys.executable,
        brew_path=brew)
    facts["dpkg_interrupted"] = dpkg_interrupted(params["dpkg_updates_path"])
    module.exit_json(changed=False, ansible_facts={"hvc_platform": facts})


if __name__ == "__main__":
    main()
