"""The arm64 emulator for hosts whose systemd starts services through systemd-executor (Debian 13's 257).

systemd >= 255 starts each service by a posix_spawn of systemd-executor from a file descriptor. Under Debian
12's qemu-user 7.2, registered with binfmt flags PF, every service of such a host fails, sshd included
("Failed to spawn executor: Invalid argument"): it takes qemu >= 8 and binfmt's O flag (C implies it; flags
POCF, as qemu's own qemu-binfmt-conf.sh --credential registers). Debian 13's qemu-user has both: apt fetches it
inside the sandbox's Debian 13 amd64 image, so it is checked against that release's keyring, and its
qemu-aarch64 is kept in the cache folder. Debian 12 arm64 hosts run under it as well.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from . import SandboxError, _run

BINFMT = Path("/proc/sys/fs/binfmt_misc")
ENTRY = "qemu-aarch64"
FLAGS = "POCF"


def registration(entry: str = ENTRY) -> dict[str, str]:
    """The kernel's record of a binfmt_misc entry: interpreter, flags, offset, magic, mask (hex)."""
    path = BINFMT / entry
    if not path.is_file():
        return {}
    fields = {}
    for line in path.read_text().splitlines()[1:]:
        key, _, value = line.partition(" ")
        fields[key.rstrip(":")] = value.strip()
    return fields


def register_line(interpreter: Path, current: dict[str, str]) -> str:
    """The line binfmt_misc's register file takes: the current magic and mask, this interpreter, FLAGS."""
    def escaped(hexdigits: str) -> str:
        return "".join(f"\\x{hexdigits[i:i + 2]}" for i in range(0, len(hexdigits), 2))

    return (f":{ENTRY}:M:{current.get('offset', '0')}:{escaped(current['magic'])}:{escaped(current['mask'])}:"
            f"{interpreter}:{FLAGS}")


def fetch(cache: Path, image: str, progress) -> Path:
    """Debian 13's qemu-aarch64 in the cache folder, fetched by apt in `image` (a Debian 13 amd64 image)."""
    binary = cache / "qemu-aarch64-trixie"
    if binary.is_file():
        return binary
    cache.mkdir(parents=True, exist_ok=True)
    progress("fetching Debian 13's qemu-user (arm64 hosts with systemd >= 255 need qemu >= 8)")
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        _run(["podman", "run", "--rm", "-v", f"{scratch}:/out", image, "sh", "-c",
              "cd /out && apt-get update -qq && apt-get download -qq -o APT::Sandbox::User=root qemu-user"],
             progress=progress)
        debs = sorted(Path(scratch).glob("qemu-user_*.deb"))
        if not debs:
            raise SandboxError(f"apt-get download qemu-user in {image} left no package")
        _run(["dpkg-deb", "-x", str(debs[0]), f"{scratch}/root"])
        partial = binary.with_suffix(".partial")
        shutil.copy2(Path(scratch, "root", "usr", "bin", "qemu-aarch64"), partial)
        partial.rename(binary)  # only a whole binary counts
    return binary


def ensure(cache: Path, image: str, progress) -> None:
    """Register Debian 13's qemu-aarch64 for arm64 binaries with FLAGS, unless it already is."""
    binary = fetch(cache, image, progress)
    current = registration()
    if not current.get("magic"):
        raise SandboxError(f"no binfmt_misc entry {ENTRY}: install qemu-user-static and binfmt-support")
    if current.get("interpreter") == str(binary) and current.get("flags") == FLAGS:
        return
    progress(f"registering {binary} for arm64 binaries (binfmt flags {FLAGS})")
    line = register_line(binary, current)
    (BINFMT / ENTRY).write_text("-1")  # an entry is replaced by removing it first
    (BINFMT / "register").write_text(line)
