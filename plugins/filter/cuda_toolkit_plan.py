"""The cuda_toolkit role's decision, as one pure function (used by roles/cuda_toolkit/tasks/decide.yml).

`facts | cuda_toolkit_plan(variables, os_vars, tables)` -> {"errors": [...], "plan": {...}}
  facts: the host's facts as decide.yml gathers them (None where absent): system, os_family, distribution,
    distribution_major_version, architecture, lsb, hvc_platform (preflight's: is_raspberry_pi, gpu).
  variables: the role's variables as given (booleans are read here as Ansible's `bool` reads them) and
    cluster_rootless.
  os_vars: vars/<OS>.yml's distro_version, distro_home, distro_host_compiler.
  tables: vars/main.yml's supported_versions and path_re.
  plan: {action, method, reason, version, home, repo_path, nvcc, host_compiler}; errors: every refusal, in
  the order the role has always checked them.
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from ansible.plugins.filter.core import to_bool


def _role_filters():
    """The role's own filters (roles/cuda_toolkit/filter_plugins, nccl's too): one copy of the version rules
    and NVIDIA's repository table. Beside plugins/ in a checkout and in the installed collection alike."""
    path = Path(__file__).resolve().parents[2] / "roles" / "cuda_toolkit" / "filter_plugins" / "cuda_toolkit.py"
    spec = importlib.util.spec_from_file_location("hvc_cuda_toolkit_filters", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cuda = _role_filters()


def _given(value, default):
    """Jinja's `default(x)` on a fact gathered as None when absent."""
    return default if value is None else value


def _host(facts: dict) -> dict:
    """What the decision reads of the host: preflight's hvc_platform when present, else the standard facts."""
    system = _given(facts.get("system"), "Linux")
    arch = _given(facts.get("architecture"), "")
    platform = facts.get("hvc_platform") or {}
    gpu = platform.get("gpu") or {}
    pi_guess = (_given(facts.get("lsb"), {}).get("id") or "") == "Raspbian" or arch in ("armv7l", "armv6l")
    return {
        "darwin": system == "Darwin" or _given(facts.get("os_family"), "") == "Darwin",
        "raspberry_pi": to_bool(platform.get("is_raspberry_pi", pi_guess)),
        "gpu_count": _count(gpu.get("count") or 0),
        "driver_cuda": str(gpu.get("cuda_version") or ""),
        "driver_version": str(gpu.get("driver_version") or ""),
        "repo_path": cuda.cuda_repo_path(_given(facts.get("distribution"), ""),
                                         _given(facts.get("distribution_major_version"), ""), arch),
        "linux": system == "Linux",
        "arch": arch,
    }


def _count(value) -> int:
    """Jinja's `int` filter on a count: the number, else 0."""
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 0


def _skip_reason(host: dict, build_host: bool) -> str:
    if host["darwin"]:
        return "macOS: CUDA has no macOS support"
    if host["raspberry_pi"]:
        return "Raspberry Pi: no NVIDIA GPU and no CUDA for its SoC"
    if host["gpu_count"] == 0 and not build_host:
        return "no NVIDIA GPU detected (set cuda_toolkit_build_host: true for a compile-only build host)"
    if not host["linux"]:
        return "not Linux: no CUDA toolkit"
    return ""


def _plan(host: dict, v: dict, os_vars: dict) -> dict:
    wanted = v.get("cuda_toolkit_method")
    skip = _skip_reason(host, to_bool(v.get("cuda_toolkit_build_host")))
    # cluster_rootless: the user-space pip method only (NVIDIA's repository needs root)
    method = (wanted if wanted != "auto"
              else "nvidia_repo" if host["repo_path"] and not to_bool(v.get("cluster_rootless"))
              else "pip")
    home = (v.get("cuda_toolkit_repo_home") if method == "nvidia_repo"
            else os_vars.get("distro_home") if method == "distro"
            else f"{v.get('cuda_toolkit_pip_prefix')}/cuda")
    reason = (skip or f"cuda_toolkit_method={wanted}: {method}"
              + (f" ({host['repo_path']})" if method == "nvidia_repo" else "")
              + (f"; {host['gpu_count']} GPU(s)" if host["gpu_count"] > 0 else "; compile-only build host"))
    return {
        "action": "skip" if skip else "install",
        "method": "none" if skip else method,
        "reason": reason,
        "version": v.get("cuda_toolkit_version"),
        "home": "" if skip else home,
        "repo_path": host["repo_path"] if method == "nvidia_repo" else "",
        # distro packages put nvcc on /usr/bin with the headers and libraries in the system paths
        "nvcc": "" if skip else f"{home}/bin/nvcc",
        # a host compiler nvcc must be told about (CUDAHOSTCXX, nvcc -ccbin); empty: the default g++
        "host_compiler": os_vars.get("distro_host_compiler") if method == "distro" else "",
    }


def _path_error(name: str, value, path_re: str) -> list:
    """The CUDA home goes into cuda.sh (sourced at every login) and the pip prefix into the assemble script's
    command line: quoted there too, refused here when not a plain path."""
    if isinstance(value, str) and re.search(path_re, value):
        return []
    return [f"{name} is {json.dumps(str(value), ensure_ascii=False)}; expected an absolute path of letters,"
            " digits and . _ - + /"]


def _version_errors(facts: dict, version: str, method: str, os_vars: dict, supported: list) -> list:
    if method != "distro":
        return [] if version in supported else [
            f'cuda_toolkit_version "{version}" is not supported by cuda_toolkit_method={method}; allowed: '
            + ", ".join(supported)]
    distro = os_vars.get("distro_version") or ""
    if version == distro and distro:
        return []
    if distro:
        # "distributions": the text the role has always shown (Jinja joined 'distribution''s' into one word)
        return [f'cuda_toolkit_method=distro installs the distributions CUDA {distro}: set cuda_toolkit_version:'
                f' "{distro}" (got "{version}")']
    return ["cuda_toolkit_method=distro: no nvidia-cuda-toolkit package known for "
            f"{_given(facts.get('distribution'), '?')} {_given(facts.get('distribution_major_version'), '?')}"]


def _pip_errors(host: dict, version: str, torch_cuda) -> list:
    if host["linux"] and host["arch"] in ("x86_64", "aarch64") and (
            cuda.torch_cuda_major(torch_cuda) in ("", cuda.cuda_major(version))):
        return []
    return ["cuda_toolkit_method=pip needs Linux on x86_64 or aarch64 and cuda_toolkit_torch_cuda with the same"
            f" CUDA major as cuda_toolkit_version: torch is built for CUDA '{torch_cuda}' (major"
            f" {cuda.torch_cuda_major(torch_cuda)}) but cuda_toolkit_version is {version}"]


def _driver_errors(host: dict, version: str) -> list:
    driver = host["driver_cuda"]
    if cuda.cuda_driver_supports(driver, version):
        return []
    return [f"The NVIDIA driver {host['driver_version']} supports CUDA up to {driver} (nvidia-smi), older than"
            f" cuda_toolkit_version {version} (another CUDA major): upgrade the driver, choose a"
            f" cuda_toolkit_version of CUDA {cuda.cuda_major(driver)}, or set cuda_toolkit_driver_check: false"]


def cuda_toolkit_plan(facts, variables, os_vars, tables) -> dict:
    facts, v, os_vars, tables = (dict(x or {}) for x in (facts, variables, os_vars, tables))
    host = _host(facts)
    version = v.get("cuda_toolkit_version")
    errors = []
    version_ok = isinstance(version, str) and cuda.cuda_version_valid(version)
    if not version_ok:
        errors.append('cuda_toolkit_version must be a quoted MAJOR.MINOR string such as "13.0"'
                      f" (got '{version}')")
    build_host = v.get("cuda_toolkit_build_host")
    if (v.get("cuda_toolkit_method") != "auto" or to_bool(build_host)) and (host["darwin"] or host["raspberry_pi"]):
        where = ("macOS (CUDA has no macOS support)" if host["darwin"]
                 else "a Raspberry Pi (no NVIDIA GPU, no CUDA for its SoC)")
        errors.append(f"cuda_toolkit_method={v.get('cuda_toolkit_method')} / cuda_toolkit_build_host={build_host}"
                      f" asks for CUDA on {where}: leave cuda_toolkit_method at 'auto' and cuda_toolkit_build_host"
                      " at false for this host")
    plan = _plan(host, v, os_vars)
    method, install = plan["method"], plan["action"] == "install"
    path_re = tables["path_re"]
    if method == "nvidia_repo":
        errors += _path_error("cuda_toolkit_repo_home", v.get("cuda_toolkit_repo_home"), path_re)
    if method == "pip":
        errors += _path_error("cuda_toolkit_pip_prefix", v.get("cuda_toolkit_pip_prefix"), path_re)
    if not version_ok:  # the checks below read the version's major
        return {"errors": errors, "plan": plan}
    if install:
        errors += _version_errors(facts, version, method, os_vars, list(tables["supported_versions"]))
    if method == "nvidia_repo" and not host["repo_path"]:
        errors.append(
            "cuda_toolkit_method=nvidia_repo: NVIDIA has no CUDA repository for"
            f" {_given(facts.get('distribution'), '?')} {_given(facts.get('distribution_major_version'), '?')}"
            f" {_given(facts.get('architecture'), '?')} (supported: Ubuntu 22.04/24.04 x86_64 and arm64 (sbsa),"
            " Debian 12 x86_64); use cuda_toolkit_method=pip or distro")
    if method == "pip":
        errors += _pip_errors(host, version, v.get("cuda_toolkit_torch_cuda"))
    if (install and to_bool(v.get("cuda_toolkit_driver_check")) and host["gpu_count"] > 0
            and cuda.cuda_version_valid(host["driver_cuda"])):
        errors += _driver_errors(host, version)
    return {"errors": errors, "plan": plan}


class FilterModule:
    """cuda_toolkit_plan."""

    def filters(self):
        return {"cuda_toolkit_plan": cuda_toolkit_plan}
