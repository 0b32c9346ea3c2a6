"""Run pip for another platform than this one, its environment markers evaluated for that platform.

usage: python pip_for_platform.py SYSTEM MACHINE PYTHON pip ARGS...   (Linux aarch64 3.11 pip download ...)

`pip download --platform --python-version` picks the target's wheels but evaluates the environment markers
of their dependencies against the interpreter pip runs in (pypa/pip#4304, #11664, open since 2017): an
x86_64 controller filling an aarch64 wheel set asks for torch's nvidia-* and triton, which only apply where
`platform_machine == "x86_64"`, and fails. Like Pex (pex/pip/foreign_platform), this runs pip itself, in
this process, with the marker environment of pip's own packaging replaced by the target's: pip's resolver,
its configuration (pip.conf, PIP_*: index, find-links, proxy, CA, constraints) and its output stay those
of `python -m pip`.
"""
from __future__ import annotations

import contextlib
import re
import sys

SYS_PLATFORMS = {"Linux": "linux", "Darwin": "darwin"}


def target_environment(system: str, machine: str, python: str, base: dict[str, str]) -> dict[str, str]:
    """The PEP 508 marker environment of CPython `python` (X.Y) on system/machine, from base (this
    interpreter's). A platform tag says nothing of the kernel (platform_release/_version: empty) nor of the
    patch level (X.Y.0, or base's when base is the same X.Y)."""
    full = base["python_full_version"] if base["python_version"] == python else f"{python}.0"
    return {**base, "implementation_name": "cpython", "implementation_version": full,
            "platform_python_implementation": "CPython", "python_version": python, "python_full_version": full,
            "os_name": "posix", "sys_platform": SYS_PLATFORMS[system], "platform_system": system,
            "platform_machine": machine, "platform_release": "", "platform_version": ""}


@contextlib.contextmanager
def target_markers(system: str, machine: str, python: str):
    """Within it, pip evaluates every marker (requirements, Requires-Dist) for the target."""
    from pip._vendor.packaging import markers  # pip's copy: the one its resolver evaluates markers with

    original = markers.default_environment
    env = target_environment(system, machine, python, original())
    markers.default_environment = lambda: dict(env)
    try:
        # Marker.evaluate must go through the replaced function; if a pip release stops doing so, stop
        # here rather than fill the set for the wrong platform.
        if not markers.Marker(f'platform_machine == "{machine}" and python_version == "{python}"').evaluate():
            raise RuntimeError("this pip does not evaluate markers through packaging.markers.default_environment")
        yield env
    finally:
        markers.default_environment = original


def main(argv: list[str]) -> int:
    if (len(argv) < 5 or argv[0] not in SYS_PLATFORMS or not re.fullmatch(r"\w+", argv[1])
            or not re.fullmatch(r"\d+\.\d+", argv[2]) or argv[3] != "pip"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    from pip._internal.cli.main import main as pip_main  # what `python -m pip` runs

    with target_markers(*argv[:3]):
        return pip_main(argv[4:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
