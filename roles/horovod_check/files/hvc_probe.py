"""Print one JSON object: the versions of python, torch, horovod, mpirun (the marker's mpi_prefix's, else PATH's)
and cmake on this host (null = absent), that Open MPI prefix, the controllers and tensor operations Horovod was
built with, and the transport its Gloo speaks here. Run by the check with the training environment's interpreter
(tasks/versions.yml); it changes nothing and needs nothing beyond the standard library."""
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata


def dist(name):
    try:
        return metadata.version(name)
    except Exception:
        return None


def tool(argv):
    if not shutil.which(argv[0]):
        return None
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except Exception as err:
        return "error: %s" % err
    found = re.search(r"(\d+\.\d+(\.\d+)?)", run.stdout + run.stderr)
    return found.group(1) if found else "unknown"


def marker():
    # The horovod role's marker: check-build's result (no framework import needed here), the MPI's prefix.
    try:
        with open(os.path.join(sys.prefix, ".horovod-platform-key.json")) as f:
            return json.load(f)
    except Exception:
        return {}


def capability(name):
    try:
        return ",".join(sorted(MARKER["verified"]["info"]["capabilities"][name]))
    except Exception:
        return None


MARKER = marker()
# The Open MPI Horovod was built against where it is not the system's (PyPI's, a source build): its own mpirun.
MPI_PREFIX = MARKER.get("mpi_prefix") or ""


# Horovod compiles Gloo's tcp transport on Linux and its uv (libuv) transport elsewhere, i.e. macOS
# (horovod/common/gloo/gloo_context.cc: `#ifdef __linux__`); the two do not talk to each other.
GLOO_TRANSPORT = "tcp" if sys.platform.startswith("linux") else "uv"

print(json.dumps({"python": platform.python_version(), "torch": dist("torch"),
                  "horovod": dist("horovod"), "mpirun": tool([os.path.join(MPI_PREFIX, "bin", "mpirun") if MPI_PREFIX else "mpirun", "--version"]),
                  "mpi_prefix": MPI_PREFIX,
                  "cmake": tool(["cmake", "--version"]), "controllers": capability("controllers"),
                  "tensor_operations": capability("tensor_operations"), "gloo_transport": GLOO_TRANSPORT}))
