"""Parse `horovodrun --check-build` output (horovod 0.28.1, horovod/runner/launch.py check_build()).

The command always exits 0, so its [X]/[ ] marks are the only signal. Format:

    Horovod v0.28.1:

    Available Frameworks:
        [ ] TensorFlow
        [X] PyTorch
        [ ] MXNet

    Available Controllers:
        [X] MPI
        [X] Gloo

    Available Tensor Operations:
        [ ] NCCL
        [ ] DDL
        [ ] CCL
        [X] MPI
        [X] Gloo

With --verbose, "Checking whether extension ... was built." lines and tracebacks come first; they
are ignored. Older releases list MLSL instead of CCL; any name in brackets is kept.
"""
from __future__ import absolute_import, division, print_function

import re

__metaclass__ = type

SECTIONS = {
    "available frameworks": "frameworks",
    "available controllers": "controllers",
    "available tensor operations": "tensor_operations",
}
_VERSION_RE = re.compile(r"^\s*Horovod v(?P<version>\S+?):\s*$")
_SECTION_RE = re.compile(r"^\s*(?P<name>Available [A-Za-z ]+?):\s*$")
_MARK_RE = re.compile(r"^\s*\[(?P<mark>[Xx ])\]\s+(?P<name>\S.*?)\s*$")


class CheckBuildParseError(ValueError):
    """The text is not check-build output."""


def parse_check_build(text):
    """Return {version, frameworks, controllers, tensor_operations, built: {section: {name: bool}}}.

    frameworks/controllers/tensor_operations are sorted lists of lower-case names marked [X].
    """
    version = None
    section = None
    built = {"frameworks": {}, "controllers": {}, "tensor_operations": {}}
    for line in (text or "").splitlines():
        match = _VERSION_RE.match(line)
        if match:
            version = match.group("version")
            section = None
            continue
        match = _SECTION_RE.match(line)
        if match:
            section = SECTIONS.get(match.group("name").strip().lower())
            continue
        match = _MARK_RE.match(line)
        if match and section:
            built[section][match.group("name").strip().lower()] = match.group("mark") in "Xx"
            continue
        if not line.strip():
            continue
        section = None  # any other line ends a section (verbose noise)
    if version is None or not any(built.values()):
        raise CheckBuildParseError("no 'Horovod vX:' header with Available ... sections found")
    result = {"version": version, "built": built}
    for key, marks in built.items():
        result[key] = sorted(name for name, on in marks.items() if on)
    return result


def missing_capabilities(capabilities, expected):
    """expected: {section: [names]} -> list of 'section:name' not built."""
    missing = []
    for section, names in sorted((expected or {}).items()):
        have = set(capabilities.get(section) or [])
        for name in names or []:
            if str(name).lower() not in have:
                missing.append("%s:%s" % (section, str(name).lower()))
    return missing
