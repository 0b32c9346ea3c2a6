"""The arm64 emulator for Debian 13 hosts (horovod_cluster.sandbox.emulator), over a binfmt_misc folder of files
holding the kernel's own record of Debian 12's qemu-user-static 7.2 entry (read on this machine)."""
from __future__ import annotations

import pytest

from horovod_cluster.sandbox import emulator

DEBIAN12_ENTRY = """enabled
interpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P
flags: PF
offset 0
magic 7f454c460201010000000000000000000200b700
mask ffffffffffffff00fffffffffffffffffeffffff
"""
MAGIC = r"\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00"
MASK = r"\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff"


def binfmt(tmp_path, monkeypatch, entry: str):
    folder = tmp_path / "binfmt_misc"
    folder.mkdir()
    (folder / "qemu-aarch64").write_text(entry)
    monkeypatch.setattr(emulator, "BINFMT", folder)
    cached = tmp_path / "cache" / "qemu-aarch64-trixie"
    cached.parent.mkdir()
    cached.write_bytes(b"\x7fELF")  # in the cache already: nothing is fetched
    return folder, cached


def test_the_debian12_entry_is_replaced_by_debian13s_qemu_with_the_open_binary_flags(tmp_path, monkeypatch):
    folder, cached = binfmt(tmp_path, monkeypatch, DEBIAN12_ENTRY)
    assert emulator.registration()["flags"] == "PF"
    emulator.ensure(cached.parent, "unused", print)
    assert (folder / "qemu-aarch64").read_text() == "-1"  # removed, then registered again
    assert (folder / "register").read_text() == f":qemu-aarch64:M:0:{MAGIC}:{MASK}:{cached}:POCF"


def test_an_entry_that_is_already_right_is_left_alone(tmp_path, monkeypatch):
    right = DEBIAN12_ENTRY.replace("/usr/libexec/qemu-binfmt/aarch64-binfmt-P", str(tmp_path / "cache" /
                                                                                   "qemu-aarch64-trixie"))
    folder, cached = binfmt(tmp_path, monkeypatch, right.replace("flags: PF", "flags: POCF"))
    emulator.ensure(cached.parent, "unused", print)
    assert not (folder / "register").exists()
    assert "POCF" in (folder / "qemu-aarch64").read_text()


def test_without_qemu_user_static_it_says_what_to_install(tmp_path, monkeypatch):
    folder, cached = binfmt(tmp_path, monkeypatch, DEBIAN12_ENTRY)
    (folder / "qemu-aarch64").unlink()
    with pytest.raises(emulator.SandboxError, match="qemu-user-static and binfmt-support"):
        emulator.ensure(cached.parent, "unused", print)
