"""Pure functions of the horovod role: build environment and platform key from facts.

`horovod_build_env(platform, options)` -> dict of HOROVOD_* (and MAKEFLAGS, CMake) variables.
`horovod_platform_key(platform)` -> a stable string naming everything a built wheel depends on.

Both take plain dicts (no Ansible objects), so they are unit-tested directly
(tests/unit/test_horovod_build_env.py) and can run over recorded facts.

platform (built by roles/horovod/tasks/decide.yml from facts):
  os            e.g. "debian12", "ubuntu24.04", "macosx14"
  arch          normalized machine, e.g. "x86_64", "aarch64", "armv7l", "arm64"
  python        "3.11" (major.minor; longer strings are cut)
  cores         int
  frameworks    {"pytorch": "2.13.0+cpu", "tensorflow": None, "mxnet": None}  (None = absent)
  cuda          {"version": "13.0", "home": "/usr/local/cuda"} or None/{} (no CUDA build)
  nccl          {"home": "...", "link": "SHARED"} or None/{}
  gpu_compute_caps  ["8.6", "9.0"] (from GPU facts; may be empty)
  mpi_version   "4.1.4" or None (no MPI)
  mpi_source    "pip" for PyPI's Open MPI, else "" (the distro's, Homebrew's, a source build)
  horovod       "0.28.1" or a git ref (what is built)
  gpu_operations  "NCCL" | "none" (decided; see horovod_build_env)
  controllers   ["mpi", "gloo"] (what is built)
  cpu_flags     the CPU's flags (Linux facts' `flags`) or None where unknown
  source_path   the host folder built with horovod_source path, else ""
  build_overrides  horovod_build_env_overrides (key only)

options (role variables):
  frameworks    list of frameworks to build (pytorch, tensorflow, mxnet)
  controllers   list of controllers (mpi, gloo)
  gpu_operations  "auto" | "NCCL" | "MPI" | "none"
  cuda_cc_list  list/str of compute capabilities ("86" or "8.6"); empty = from platform
  cmake         path of the cmake binary ("" = whatever is on PATH)
  make_jobs     int; 0 = platform cores
  cmake_policy_version_minimum  "" or e.g. "3.5" (needed by CMake >= 4)
  env           dict of user overrides; wins over everything derived
"""
from __future__ import annotations

import hashlib
import json
import re

FRAMEWORKS = ("pytorch", "tensorflow", "mxnet")
CONTROLLERS = ("mpi", "gloo")
GPU_OPERATIONS = ("auto", "NCCL", "MPI", "none")
# Horovod's CMake compiles in those of -mf16c -mavx -mfma that the builder's CPU has (`gcc -march=native`): a
# wheel built with them stops with an illegal instruction on a CPU without them (an Atom, an old Celeron).
ARCH_FLAGS = ("f16c", "avx", "fma")
# Overrides that steer the build without changing the wheel.
STEERING_OVERRIDES = ("MAKEFLAGS", "HOROVOD_CMAKE")


class HorovodFilterError(ValueError):
    """Bad input to a horovod filter (names the offending key)."""


def _as_list(value):
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.replace(";", ",").split(",") if v.strip()]
    return list(value)


def _cc_token(cap) -> str:
    """'8.6' / '86' / 8.6 / 'sm_86' -> '86'."""
    text = str(cap).strip().lower()
    text = text.removeprefix("sm_").removeprefix("compute_")
    if not re.fullmatch(r"\d+(\.\d+)?", text):
        raise HorovodFilterError(f"horovod_cuda_cc_list: bad compute capability {cap!r} (e.g. '8.6' or '86')")
    return text.replace(".", "")


def cuda_present(platform: dict) -> bool:
    cuda = platform.get("cuda") or {}
    return bool(cuda.get("version") or cuda.get("home"))


def resolve_gpu_operations(platform: dict, options: dict) -> str:
    """'auto' means NCCL on a CUDA host, none elsewhere."""
    wanted = options.get("gpu_operations", "auto") or "auto"
    if wanted not in GPU_OPERATIONS:
        raise HorovodFilterError(
            f"horovod_gpu_operations: {wanted!r} is not one of {', '.join(GPU_OPERATIONS)}")
    if wanted == "auto":
        return "NCCL" if cuda_present(platform) else "none"
    if wanted in ("NCCL", "MPI") and not cuda_present(platform):
        raise HorovodFilterError(
            f"horovod_gpu_operations: {wanted} needs CUDA on the host, and this host has no CUDA facts "
            "(set horovod_gpu_operations: auto or none, or install the cuda_toolkit role first)")
    return wanted


def horovod_build_env(platform: dict, options: dict | None = None) -> dict:
    """HOROVOD_* build variables derived from the platform; options['env'] overrides win."""
    platform = dict(platform or {})
    options = dict(options or {})
    env: dict[str, str] = {}

    frameworks = [f.lower() for f in _as_list(options.get("frameworks", ["pytorch"]))]
    for fw in frameworks:
        if fw not in FRAMEWORKS:
            raise HorovodFilterError(f"horovod_frameworks: {fw!r} is not one of {', '.join(FRAMEWORKS)}")
    controllers = [c.lower() for c in _as_list(options.get("controllers", ["mpi", "gloo"]))]
    for ctl in controllers:
        if ctl not in CONTROLLERS:
            raise HorovodFilterError(f"horovod_controllers: {ctl!r} is not one of {', '.join(CONTROLLERS)}")
    if not controllers:
        raise HorovodFilterError("horovod_controllers: at least one of mpi, gloo is needed")

    names = {"pytorch": "PYTORCH", "tensorflow": "TENSORFLOW", "mxnet": "MXNET"}
    for fw, name in names.items():
        if fw in frameworks:
            env[f"HOROVOD_WITH_{name}"] = "1"
        else:
            env[f"HOROVOD_WITHOUT_{name}"] = "1"
    for ctl in CONTROLLERS:
        env[f"HOROVOD_WITH_{ctl.upper()}" if ctl in controllers else f"HOROVOD_WITHOUT_{ctl.upper()}"] = "1"

    gpu_ops = resolve_gpu_operations(platform, options)
    if gpu_ops != "none":
        cuda = platform.get("cuda") or {}
        nccl = platform.get("nccl") or {}
        env["HOROVOD_GPU_OPERATIONS"] = gpu_ops
        if cuda.get("home"):
            env["HOROVOD_CUDA_HOME"] = str(cuda["home"])
            # horovod/torch's CMake asks torch.utils.cpp_extension.CUDA_HOME whether torch can
            # build CUDA code; that reads CUDA_HOME (else nvcc on PATH) and refuses a GPU build
            # ("this PyTorch installation does not support CUDA") when it finds neither.
            env["CUDA_HOME"] = str(cuda["home"])
        if gpu_ops == "NCCL":
            if nccl.get("home"):
                env["HOROVOD_NCCL_HOME"] = str(nccl["home"])
            link = str(nccl.get("link") or "").upper()
            if link:
                if link not in ("SHARED", "STATIC"):
                    raise HorovodFilterError(f"nccl link {link!r} is not SHARED or STATIC")
                env["HOROVOD_NCCL_LINK"] = link
        caps = _as_list(options.get("cuda_cc_list")) or _as_list(platform.get("gpu_compute_caps"))
        if caps:
            tokens = sorted({_cc_token(c) for c in caps}, key=int)
            env["HOROVOD_BUILD_CUDA_CC_LIST"] = ",".join(tokens)

    if options.get("cmake"):
        env["HOROVOD_CMAKE"] = str(options["cmake"])
    if options.get("cmake_policy_version_minimum"):
        env["CMAKE_POLICY_VERSION_MINIMUM"] = str(options["cmake_policy_version_minimum"])

    present = _arch_flags(platform)
    if present:  # the key's flags, not whatever the builder's compiler finds (an empty value would mean that)
        env["HOROVOD_BUILD_ARCH_FLAGS"] = " ".join(f"-m{flag}" for flag in present)

    jobs = int(options.get("make_jobs") or 0) or int(platform.get("cores") or 1)
    env["MAKEFLAGS"] = f"-j{max(jobs, 1)}"

    overrides = options.get("env") or {}
    if not isinstance(overrides, dict):
        raise HorovodFilterError("horovod_build_env_overrides: must be a mapping of NAME: value")
    for key, value in overrides.items():
        if value is None:
            env.pop(str(key), None)  # an override of None removes a derived variable
        else:
            env[str(key)] = str(value)
    return dict(sorted(env.items()))


def _arch_flags(platform: dict) -> list | None:
    """Those of ARCH_FLAGS the x86_64 host has; None elsewhere or where its flags are unknown."""
    flags = platform.get("cpu_flags")
    if str(platform.get("arch") or "").lower() not in ("x86_64", "amd64") or not isinstance(flags, list):
        return None
    return [flag for flag in ARCH_FLAGS if flag in flags]


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:10]


def _clean(text) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", str(text)).strip("_") or "none"


def _major_minor(version, parts=2) -> str:
    nums = re.findall(r"\d+", str(version or ""))
    return ".".join(nums[:parts]) if nums else ""


def horovod_platform_key(platform: dict) -> str:
    """A stable key: hosts with equal keys can share one built wheel.

    Covers horovod version/ref, OS, arch, Python major.minor, each framework version (full,
    since horovod/metadata.json records it), CUDA major.minor and the compute capabilities built
    (HOROVOD_BUILD_CUDA_CC_LIST), GPU operations, MPI major (and `pip` for PyPI's Open MPI), the run-time
    patches applied (`patches`), a build without Gloo, the x86 flags the CPU lacks, a source folder and the
    build overrides.
    """
    platform = dict(platform or {})
    for required in ("os", "arch", "python"):
        if not platform.get(required):
            raise HorovodFilterError(f"horovod_platform_key: platform.{required} is missing")
    parts = [
        "hvd" + _clean(platform.get("horovod") or "unknown"),
        _clean(platform["os"]).lower(),
        _clean(platform["arch"]).lower(),
        "py" + (_major_minor(platform["python"]) or _clean(platform["python"])),
    ]
    frameworks = platform.get("frameworks") or {}
    for fw in sorted(frameworks):
        if frameworks[fw]:
            parts.append(f"{_clean(fw).lower()}{_clean(frameworks[fw])}")
    cuda = platform.get("cuda") or {}
    parts.append("cuda" + _major_minor(cuda.get("version")) if cuda_present(platform) and cuda.get("version")
                 else ("cuda" if cuda_present(platform) else "cpu"))
    # The GPU architectures compiled in: a wheel built for sm_80 does not run on an sm_75 GPU.
    caps = str(platform.get("cuda_cc_list") or "")
    if cuda_present(platform) and caps:
        parts.append("sm" + "_".join(_clean(c) for c in caps.split(",")))
    gpu_ops = platform.get("gpu_operations") or "none"
    parts.append("gpuops" + _clean(gpu_ops).lower())
    mpi = _major_minor(platform.get("mpi_version"), 1)
    source = _clean(platform["mpi_source"]).lower() if platform.get("mpi_source") else ""
    parts.append(f"mpi{mpi}{source}" if mpi else "nompi")
    # The compatibility matrix's fixes that change the wheel's behaviour (not just whether it compiles).
    parts.extend(_clean(tag).lower() for tag in sorted(platform.get("patches") or []))
    # Parts that default builds (both controllers, a CPU with every flag, the released source, no overrides)
    # leave out, so that their keys, and the wheels cached under them, stay as they were.
    controllers = [c.lower() for c in _as_list(platform.get("controllers", CONTROLLERS))]
    if "gloo" not in controllers:  # (mpi is the mpi part above)
        parts.append("nogloo")
    present = _arch_flags(platform)
    if present is not None and len(present) < len(ARCH_FLAGS):
        parts.append("no" + "_".join(flag for flag in ARCH_FLAGS if flag not in present))
    if platform.get("source_path"):  # a folder of the host's: its own code, not the release
        parts.append("path" + _digest(str(platform["source_path"])))
    overrides = {str(k): v for k, v in (platform.get("build_overrides") or {}).items()
                 if str(k) not in STEERING_OVERRIDES}
    if overrides:
        parts.append("env" + _digest({k: None if v is None else str(v) for k, v in overrides.items()}))
    return "-".join(parts)


class FilterModule:
    """horovod_build_env, horovod_platform_key."""

    def filters(self):
        return {
            "horovod_build_env": horovod_build_env,
            "horovod_platform_key": horovod_platform_key,
        }
