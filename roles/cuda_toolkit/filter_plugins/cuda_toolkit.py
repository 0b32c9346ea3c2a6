"""Pure functions of the cuda_toolkit and nccl roles (no host access; unit-tested).

Used as Jinja filters by the roles and imported directly by tests/unit/test_cuda_filters.py.
"""

from __future__ import annotations

import re

__metaclass__ = type

CUDA_VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")

# CUDA toolkit versions the roles support (NVIDIA repo packages cuda-toolkit-X-Y exist for all).
SUPPORTED_CUDA_VERSIONS = ("12.4", "12.6", "12.8", "12.9", "13.0")

# NVIDIA CUDA apt repository directory per (distribution, major version).
REPO_DISTROS = {
    ("Ubuntu", "22"): "ubuntu2204",
    ("Ubuntu", "24"): "ubuntu2404",
    ("Debian", "12"): "debian12",
}

# Repository architecture directory per Ansible architecture fact. arm64 servers use "sbsa".
REPO_ARCHES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "sbsa", "arm64": "sbsa"}

# NVIDIA publishes sbsa builds for these repository directories only.
SBSA_REPOS = ("ubuntu2204", "ubuntu2404")

DEFAULT_REPO_BASE_URL = "https://developer.download.nvidia.com/compute/cuda/repos"

# libnccl2/libnccl-dev builds in NVIDIA's CUDA repository, per CUDA version
# (Debian version strings: <nccl>-1+cuda<X.Y>), as installed from NVIDIA's repository in public Dockerfiles.
NCCL_REPO_VERSIONS = {
    "12.4": "2.21.5-1+cuda12.4",
    "12.6": "2.23.4-1+cuda12.6",
    "12.8": "2.25.1-1+cuda12.8",
    "12.9": "2.26.5-1+cuda12.9",
    "13.0": "2.27.7-1+cuda13.0",
}

# NCCL wheel (nvidia-nccl-cuXX on PyPI) per CUDA major: 2.27.7 is the first cu13 release on
# PyPI and exists for cu12 too (nccl_version overrides it, e.g. to match torch's dependency).
NCCL_PIP_VERSIONS = {"12": "2.27.7", "13": "2.27.7"}


class CudaVersionError(ValueError):
    """A CUDA version string that is malformed or not supported."""


def cuda_version_parts(version):
    """'13.0' -> (13, 0). Raises CudaVersionError on anything else."""
    match = CUDA_VERSION_RE.match(str(version).strip())
    if not match:
        raise CudaVersionError(
            "cuda_toolkit_version must look like MAJOR.MINOR (e.g. '13.0'), got %r" % (version,)
        )
    return int(match.group(1)), int(match.group(2))


def cuda_version_valid(version):
    """True when the string is MAJOR.MINOR."""
    try:
        cuda_version_parts(version)
    except CudaVersionError:
        return False
    return True


def cuda_version_supported(version, supported=SUPPORTED_CUDA_VERSIONS):
    """True when the version is well-formed and in the supported set."""
    return cuda_version_valid(version) and str(version).strip() in supported


def cuda_major(version):
    """'12.8' -> '12'."""
    return str(cuda_version_parts(version)[0])


def cuda_toolkit_package(version):
    """Meta package of NVIDIA's repository pinning one toolkit release: '13.0' -> 'cuda-toolkit-13-0'."""
    major, minor = cuda_version_parts(version)
    return "cuda-toolkit-%d-%d" % (major, minor)


def cuda_repo_distro(distribution, major_version):
    """('Ubuntu', '24') -> 'ubuntu2404'; '' when NVIDIA has no repository for it."""
    return REPO_DISTROS.get((str(distribution), str(major_version)), "")


def cuda_repo_arch(architecture):
    """Ansible architecture fact -> NVIDIA repository arch directory ('' when unsupported)."""
    return REPO_ARCHES.get(str(architecture), "")


def cuda_repo_path(distribution, major_version, architecture):
    """('Ubuntu', '24', 'aarch64') -> 'ubuntu2404/sbsa'; '' when there is no such repository."""
    distro = cuda_repo_distro(distribution, major_version)
    arch = cuda_repo_arch(architecture)
    if not distro or not arch:
        return ""
    if arch == "sbsa" and distro not in SBSA_REPOS:
        return ""
    return "%s/%s" % (distro, arch)


def cuda_repo_url(repo_path, base_url=DEFAULT_REPO_BASE_URL):
    """Repository URL with trailing slash: '<base>/ubuntu2404/x86_64/'."""
    if not repo_path:
        raise ValueError("no NVIDIA CUDA repository for this platform")
    return "%s/%s/" % (str(base_url).rstrip("/"), repo_path)


def cuda_sources_line(repo_path, keyring_path, base_url=DEFAULT_REPO_BASE_URL):
    """One-line apt source for the flat NVIDIA repository, trusting only its own keyring."""
    return "deb [signed-by=%s] %s /" % (keyring_path, cuda_repo_url(repo_path, base_url))


def apt_pin(packages, pin, priority):
    """Text of an apt preferences stanza ('Package: a b', 'Pin: ...', 'Pin-Priority: N')."""
    if isinstance(packages, str):
        packages = [packages]
    return "Package: %s\nPin: %s\nPin-Priority: %d\n" % (" ".join(packages), pin, int(priority))


def cuda_repo_origin(base_url=DEFAULT_REPO_BASE_URL):
    """Host name apt reports as the origin of the repository (for 'Pin: origin ...')."""
    match = re.match(r"^[a-z]+://([^/:]+)", str(base_url))
    if not match:
        raise ValueError("not a URL: %r" % (base_url,))
    return match.group(1)


def cuda_pip_requirements(version):
    """pip requirement strings of the CUDA compiler wheels for one toolkit release.

    CUDA 13 wheels have no -cuXX suffix and share one tree (nvidia/cu13); CUDA 12 wheels carry
    the -cu12 suffix (nvvm and crt ship inside nvidia-cuda-nvcc-cu12).
    """
    major, minor = cuda_version_parts(version)
    spec = "==%d.%d.*" % (major, minor)
    if major >= 13:
        names = ["nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-nvvm", "nvidia-cuda-cccl",
                 "nvidia-cuda-runtime"]
    elif major == 12:
        names = ["nvidia-cuda-nvcc-cu12", "nvidia-cuda-cccl-cu12", "nvidia-cuda-runtime-cu12"]
    else:
        raise CudaVersionError("pip wheels of the CUDA compiler exist for CUDA >= 12, got %r" % (version,))
    return [name + spec for name in names]


def nccl_repo_version(cuda_version, table=None):
    """CUDA '13.0' -> '2.27.7-1+cuda13.0' (libnccl2/libnccl-dev version in NVIDIA's repository)."""
    cuda_version_parts(cuda_version)
    table = NCCL_REPO_VERSIONS if table is None else table
    key = str(cuda_version).strip()
    if key not in table:
        raise CudaVersionError("no NCCL build known for CUDA %s (known: %s)"
                               % (key, ", ".join(sorted(table))))
    return table[key]


def nccl_repo_packages(cuda_version, nccl_version=""):
    """apt 'name=version' strings for libnccl2 and libnccl-dev."""
    version = nccl_version or nccl_repo_version(cuda_version)
    return ["libnccl2=%s" % version, "libnccl-dev=%s" % version]


def nccl_upstream_version(nccl_version):
    """'2.27.7-1+cuda13.0' -> '2.27.7'; '2.27.7' -> '2.27.7'."""
    return str(nccl_version).split("-", 1)[0]


def nccl_pip_requirement(cuda_version, nccl_version=""):
    """'13.0' -> 'nvidia-nccl-cu13==2.27.7'."""
    major = cuda_major(cuda_version)
    version = nccl_upstream_version(nccl_version) if nccl_version else NCCL_PIP_VERSIONS.get(major)
    if not version:
        raise CudaVersionError("no NCCL wheel known for CUDA major %s" % major)
    return "nvidia-nccl-cu%s==%s" % (major, version)


def cuda_driver_supports(driver_cuda_version, toolkit_version):
    """Whether a driver (its maximum CUDA version, nvidia-smi 'CUDA Version') runs the toolkit's code.

    CUDA's minor version compatibility (CUDA >= 11): a driver of the same major runs code built with
    any minor of that major (e.g. driver 535 = CUDA 12.2 runs a 12.8 build, short of PTX JIT of
    newer features). Across majors the driver must be at least the toolkit's major.
    """
    driver_major, _ = cuda_version_parts(driver_cuda_version)
    toolkit_major, _ = cuda_version_parts(toolkit_version)
    if toolkit_major >= 11:
        return driver_major >= toolkit_major
    return cuda_version_parts(driver_cuda_version) >= cuda_version_parts(toolkit_version)


def torch_cuda_major(torch_cuda):
    """Torch's CUDA build ('13.0', 'cu130', '12.8') -> major ('13', '12'); '' when CPU/unknown."""
    text = str(torch_cuda or "").strip().lower()
    if not text or text in ("none", "cpu"):
        return ""
    match = re.match(r"^cu(\d+?)(\d)$", text)
    if match:
        return match.group(1)
    return cuda_major(text)


class FilterModule:
    """Jinja filters of the GPU roles."""

    def filters(self):
        return {
            "cuda_version_valid": cuda_version_valid,
            "cuda_version_supported": cuda_version_supported,
            "cuda_major": cuda_major,
            "cuda_toolkit_package": cuda_toolkit_package,
            "cuda_repo_path": cuda_repo_path,
            "cuda_repo_url": cuda_repo_url,
            "cuda_repo_origin": cuda_repo_origin,
            "cuda_sources_line": cuda_sources_line,
            "cuda_apt_pin": apt_pin,
            "cuda_pip_requirements": cuda_pip_requirements,
            "cuda_driver_supports": cuda_driver_supports,
            "cuda_torch_major": torch_cuda_major,
            "nccl_repo_version": nccl_repo_version,
            "nccl_repo_packages": nccl_repo_packages,
            "nccl_pip_requirement": nccl_pip_requirement,
            "nccl_upstream_version": nccl_upstream_version,
        }
