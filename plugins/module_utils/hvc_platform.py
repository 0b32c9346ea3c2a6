# -*- coding: utf-8 -*-
# Apache-2.0
"""Pure parsing of what a host says about itself, for the hvc_platform_facts module.

Every function takes text (or values read by the module) and returns plain data, so it is
unit-tested on real-world fixture text (tests/fixtures/) without the host.
"""
from __future__ import annotations

import re

# The normalized names the roles compare against.
ARCH_ALIASES = {
    "x86_64": "x86_64",
    "amd64": "x86_64",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "armv7l": "armv7l",
    "armv7": "armv7l",
    "armhf": "armv7l",
    # a 32-bit kernel on an ARMv8 CPU (some Pi 3 images) runs armv7 userland
    "armv8l": "armv7l",
}

_HEADER_RE = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>[\d.]+)\s+Driver Version:\s*(?P<driver>[\d.]+)"
    r"(?:\s+CUDA Version:\s*(?P<cuda>[\d.]+|N/A))?")
_TABLE_ROW_RE = re.compile(r"^\|\s+(?P<index>\d+)\s+(?P<name>.+?)\s+(?:On|Off)\s*\|")
_PROC_VERSION_RE = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(?P<driver>\d+(?:\.\d+)+)")
_NVIDIA_DEV_RE = re.compile(r"^nvidia(\d+)$")


def parse_os_release(text):
    """/etc/os-release as a dict (shell-style KEY=value lines, quotes and escapes removed)."""
    result = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            quote = value[0]
            value = value[1:-1]
            if quote == '"':
                value = re.sub(r'\\([\\$"`])', r"\1", value)
        result[key.strip()] = value
    return result


def parse_device_tree_model(raw):
    """The device-tree model string: the kernel ends it with a NUL byte."""
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    return raw.replace("\x00", "").strip()


def is_raspberry_pi_model(model):
    return bool(model) and model.startswith("Raspberry Pi")


def parse_sw_vers(text):
    """`sw_vers` output (macOS): {'ProductName': 'macOS', 'ProductVersion': '14.5', ...}."""
    result = {}
    for line in (text or "").splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            result[key.strip()] = value.strip()
    return result


def normalize_arch(machine, userland_bits=None):
    """x86_64, aarch64 or armv7l; an unknown machine is returned lower-cased as it is.

    A 64-bit kernel under a 32-bit userland (Raspberry Pi OS 32-bit on a Pi 4/5 boots a 64-bit
    kernel) reports aarch64, but what runs there (wheels, installers) is armv7l.
    """
    raw = (machine or "").strip().lower()
    arch = ARCH_ALIASES.get(raw, raw)
    if arch == "aarch64" and userland_bits == 32:
        return "armv7l"
    return arch


def _major(version):
    return version.split(".", 1)[0] if version else ""


def normalize_os(os_release, system="Linux", device_tree_model="", rpi_issue=False, mac_version=""):
    """OS id/version/family: ubuntu, debian, raspios or macos (others: their os-release ID).

    Raspberry Pi OS 32-bit says ID=raspbian; the 64-bit edition says ID=debian and is told apart by
    the board's device-tree model ("Raspberry Pi ...") or /etc/rpi-issue, which only Pi OS images carry.
    """
    if system == "Darwin":
        version = mac_version or ""
        return {"id": "macos", "id_raw": "macos", "name": "macOS " + version if version else "macOS",
                "version": version, "version_major": _major(version), "codename": "",
                "family": "darwin"}
    osr = os_release or {}
    raw_id = osr.get("ID", system.lower() if system else "").lower()
    like = osr.get("ID_LIKE", "").lower().split()
    version = osr.get("VERSION_ID", "")
    if raw_id == "raspbian":
        os_id = "raspios"
    elif raw_id == "debian" and (is_raspberry_pi_model(device_tree_model) or rpi_issue):
        os_id = "raspios"
    else:
        os_id = raw_id
    if raw_id in ("debian", "ubuntu", "raspbian") or "debian" in like or "ubuntu" in like:
        family = "debian"
    else:
        family = like[0] if like else raw_id
    return {"id": os_id, "id_raw": raw_id, "name": osr.get("PRETTY_NAME", osr.get("NAME", raw_id)),
            "version": version, "version_major": _major(version),
            "codename": osr.get("VERSION_CODENAME", osr.get("UBUNTU_CODENAME", "")),
            "family": family}


def parse_nvidia_smi_header(text):
    """Driver and CUDA version from the banner of plain `nvidia-smi` (None when there is none).

    The CUDA version there is the newest the driver supports, not an installed toolkit.
    """
    match = _HEADER_RE.search(text or "")
    if not match:
        return None
    cuda = match.group("cuda")
    return {"driver_version": match.group("driver"),
            "cuda_version": cuda if cuda and cuda != "N/A" else None}


def parse_nvidia_smi_table(text):
    """GPU index and (possibly truncated) name per row of plain `nvidia-smi`'s device table."""
    gpus = []
    for line in (text or "").splitlines():
        match = _TABLE_ROW_RE.match(line)
        if match:
            gpus.append({"index": int(match.group("index")), "name": match.group("name").strip()})
    return gpus


def parse_nvidia_smi_query(text, fields):
    """`nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` as a list of dicts.

    '[N/A]' / '[Not Supported]' values become None.
    """
    gpus = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        values = [v.strip() for v in line.split(",")]
        if len(values) != len(fields):
            continue
        row = {}
        for field, value in zip(fields, values):
            row[field] = None if value.startswith("[") or value in ("N/A", "") else value
        gpus.append(row)
    return gpus


def parse_proc_driver_version(text):
    """Driver version from /proc/driver/nvidia/version (the kernel module's banner)."""
    match = _PROC_VERSION_RE.search(text or "")
    return match.group("driver") if match else None


def parse_proc_gpu_information(text):
    """'Model:' of a /proc/driver/nvidia/gpus/<bus-id>/information file."""
    for line in (text or "").splitlines():
        if line.startswith("Model:"):
            return line.split(":", 1)[1].strip()
    return None


def nvidia_device_nodes(dev_entries):
    """/dev/nvidia0, /dev/nvidia1, ... (one per GPU; nvidiactl, nvidia-uvm are not GPUs)."""
    found = []
    for entry in dev_entries or []:
        match = _NVIDIA_DEV_RE.match(entry)
        if match:
            found.append((int(match.group(1)), "/dev/" + entry))
    return [path for _, path in sorted(found)]


def build_gpu_facts(dev_nodes=None, proc_driver_present=False, proc_version_text=None,
                    proc_gpu_models=None, smi_path=None, smi_header_text=None, smi_query_rows=None):
    """The `gpu` part of hvc_platform from what the module found, most precise source first."""
    dev_nodes = list(dev_nodes or [])
    proc_gpu_models = [m for m in (proc_gpu_models or []) if m]
    header = parse_nvidia_smi_header(smi_header_text) if smi_header_text else None
    rows = list(smi_query_rows or [])
    table = parse_nvidia_smi_table(smi_header_text) if smi_header_text else []
    if rows:
        names = [r.get("name") or "" for r in rows]
    elif table:
        names = [g["name"] for g in table]
    elif proc_gpu_models:
        names = proc_gpu_models
    else:
        names = []
    count = len(names) or len(dev_nodes)
    driver = ((header or {}).get("driver_version")
              or next((r.get("driver_version") for r in rows if r.get("driver_version")), None)
              or parse_proc_driver_version(proc_version_text))
    capabilities = [r.get("compute_cap") for r in rows if r.get("compute_cap")]
    sources = [name for name, seen in (("nvidia-smi", bool(header or rows)),
                                       ("/proc/driver/nvidia", proc_driver_present),
                                       ("/dev/nvidia*", bool(dev_nodes))) if seen]
    return {
        "present": count > 0,
        "vendor": "nvidia" if count > 0 else None,
        "count": count,
        "names": names,
        "driver_version": driver,
        "cuda_version": (header or {}).get("cuda_version"),
        "compute_capabilities": capabilities,
        # "8.0" -> "80": the form HOROVOD_BUILD_CUDA_CC_LIST / TORCH_CUDA_ARCH_LIST builds use
        "cuda_archs": sorted({c.replace(".", "") for c in capabilities}),
        "memory_mib": [int(r["memory.total"]) for r in rows
                       if (r.get("memory.total") or "").isdigit()],
        "devices": dev_nodes,
        "nvidia_smi": smi_path,
        "sources": sources,
    }


def homebrew_prefix(brew_path):
    """/opt/homebrew/bin/brew -> /opt/homebrew."""
    if not brew_path:
        return None
    parts = brew_path.rstrip("/").split("/")
    return "/".join(parts[:-2]) or "/"


def build_platform(os_release_text=None, system="Linux", machine="", userland_bits=64,
                   device_tree_model_raw=None, rpi_issue_text=None, sw_vers_text=None,
                   gpu=None, cores=None, cores_total=None, python_version="",
                   python_executable="", brew_path=None):
    """hvc_platform: everything the roles need to know about the host, normalized."""
    model = parse_device_tree_model(device_tree_model_raw)
    mac_version = parse_sw_vers(sw_vers_text).get("ProductVersion", "") if sw_vers_text else ""
    os_facts = normalize_os(parse_os_release(os_release_text), system=system,
                            device_tree_model=model, rpi_issue=rpi_issue_text is not None,
                            mac_version=mac_version)
    is_pi = is_raspberry_pi_model(model) or os_facts["id"] == "raspios"
    gpu = gpu or build_gpu_facts()
    return {
        "system": system,
        "os_id": os_facts["id"],
        "os_id_raw": os_facts["id_raw"],
        "os_name": os_facts["name"],
        "os_version": os_facts["version"],
        "os_version_major": os_facts["version_major"],
        "os_codename": os_facts["codename"],
        "os_family": os_facts["family"],
        "arch": normalize_arch(machine, userland_bits),
        "kernel_arch": (machine or "").lower(),
        "userland_bits": userland_bits,
        "is_raspberry_pi": is_pi,
        "device_model": model or None,
        "rpi_issue": (rpi_issue_text or "").strip().splitlines()[0] if rpi_issue_text else None,
        "gpu": gpu,
        "has_nvidia_gpu": bool(gpu.get("present")),
        "cores": cores,
        "cores_total": cores_total if cores_total is not None else cores,
        "python_version": python_version,
        "python_executable": python_executable,
        "homebrew": {"present": bool(brew_path), "path": brew_path,
                     "prefix": homebrew_prefix(brew_path)},
    }
