"""Which built Horovod wheels in the controller's cache may be installed (used by the horovod role).

A builder records each wheel's sha256 beside it (`<wheel>.sha256`, written after the wheel was collected);
a wheel whose manifest is missing or differs (a copy cut short by a full disk, a changed file) is not
installed anywhere: the key is built again and the builder replaces it. A wheel cached before manifests
existed is accepted when every member passes the zip's own CRC check.
"""
from __future__ import annotations

import hashlib
import os
import zipfile
import zlib

MANIFEST = ".sha256"


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _problem(path: str, sha256: str) -> str:
    """Why this wheel may not be installed ('' when it may)."""
    try:
        with open(path + MANIFEST) as handle:
            recorded = (handle.read().split() or [""])[0]
    except FileNotFoundError:
        recorded = None
    except (OSError, UnicodeDecodeError) as err:
        return f"its manifest {path + MANIFEST} cannot be read ({err})"
    if recorded is not None:
        return "" if recorded == sha256 else f"its sha256 {sha256} differs from its manifest's {recorded}"
    try:
        with zipfile.ZipFile(path) as wheel:
            broken = wheel.testzip()
    except (OSError, EOFError, zipfile.BadZipFile) as err:
        return f"no manifest, and not a whole zip archive ({err})"
    except zlib.error as err:  # a member's compressed bytes damaged
        return f"no manifest, and a member does not decompress ({err})"
    return f"no manifest, and its member {broken} fails its CRC" if broken else ""


def horovod_verified_wheels(paths) -> dict:
    """{"ok": [{"path", "sha256"}], "rejected": [{"path", "reason"}]} for the given wheel paths."""
    ok, rejected = [], []
    for path in sorted(paths or []):
        try:
            sha256 = _sha256(path)
        except OSError as err:
            rejected.append({"path": path, "reason": f"cannot be read ({err})"})
            continue
        problem = _problem(path, sha256)
        if problem:
            rejected.append({"path": path, "reason": problem})
        else:
            ok.append({"path": path, "sha256": sha256})
    return {"ok": ok, "rejected": rejected}


def horovod_wheel_manifest(sha256: str, path: str) -> str:
    """The manifest's text, as sha256sum writes it (so `sha256sum -c` checks it too)."""
    return f"{sha256}  {os.path.basename(path)}\n"


class FilterModule:
    """horovod_verified_wheels, horovod_wheel_manifest."""

    def filters(self):
        return {"horovod_verified_wheels": horovod_verified_wheels, "horovod_wheel_manifest": horovod_wheel_manifest}
