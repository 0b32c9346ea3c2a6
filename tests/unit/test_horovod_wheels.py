"""Which cached Horovod wheels may be installed (plugins/filter/horovod_wheels.py), over real zip files."""
from __future__ import annotations

import hashlib
import zipfile

from horovod_wheels import horovod_verified_wheels, horovod_wheel_manifest

NAME = "horovod-0.28.1-cp311-cp311-linux_x86_64.whl"


def _wheel(folder, name=NAME):
    path = folder / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr("horovod/__init__.py", "__version__ = '0.28.1'\n" * 200)
        wheel.writestr("horovod-0.28.1.dist-info/RECORD", "horovod/__init__.py,,\n")
    return path


def test_a_wheel_matching_its_manifest_is_ok_with_its_sha256(tmp_path):
    wheel = _wheel(tmp_path)
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (tmp_path / f"{NAME}.sha256").write_text(horovod_wheel_manifest(sha256, str(wheel)))
    assert (tmp_path / f"{NAME}.sha256").read_text() == f"{sha256}  {NAME}\n"
    assert horovod_verified_wheels([str(wheel)]) == {"ok": [{"path": str(wheel), "sha256": sha256}], "rejected": []}


def test_a_wheel_cut_short_after_its_manifest_was_written_is_rejected(tmp_path):
    wheel = _wheel(tmp_path)
    whole = wheel.read_bytes()
    (tmp_path / f"{NAME}.sha256").write_text(horovod_wheel_manifest(hashlib.sha256(whole).hexdigest(), str(wheel)))
    wheel.write_bytes(whole[: len(whole) // 2])
    got = horovod_verified_wheels([str(wheel)])
    assert got["ok"] == []
    assert got["rejected"][0]["path"] == str(wheel)
    assert got["rejected"][0]["reason"].startswith(f"its sha256 {hashlib.sha256(whole[: len(whole) // 2]).hexdigest()} "
                                                   f"differs from its manifest's {hashlib.sha256(whole).hexdigest()}")


def test_a_wheel_without_a_manifest_is_checked_as_a_zip(tmp_path):
    """Wheels cached before manifests existed: whole ones are kept, cut-short or damaged ones rejected."""
    whole = _wheel(tmp_path)
    cut = _wheel(tmp_path, "horovod-0.28.1-cp312-cp312-linux_x86_64.whl")
    cut.write_bytes(cut.read_bytes()[:-40])
    damaged = _wheel(tmp_path, "horovod-0.28.1-cp313-cp313-linux_x86_64.whl")
    data = bytearray(damaged.read_bytes())
    start = data.index(b"__version__") if b"__version__" in data else 60  # stored or deflated member bytes
    data[start + 5] ^= 0xFF
    damaged.write_bytes(bytes(data))
    got = horovod_verified_wheels([str(whole), str(cut), str(damaged)])
    assert [w["path"] for w in got["ok"]] == [str(whole)]
    reasons = {r["path"]: r["reason"] for r in got["rejected"]}
    assert reasons[str(cut)].startswith("no manifest, and not a whole zip archive")
    assert str(damaged) in reasons and reasons[str(damaged)].startswith("no manifest, and ")


def test_nothing_cached_is_nothing_to_install():
    assert horovod_verified_wheels([]) == {"ok": [], "rejected": []}
