"""Compatibility matrix (roles/horovod/vars/compat.yml) and its checker."""
from pathlib import Path

import pytest
import yaml

from horovod_compat import HorovodCompatError, horovod_compat_check, horovod_compat_fixes, version_matches

MATRIX = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "roles/horovod/vars/compat.yml").read_text())["horovod_compat_matrix"]
BASE = {"horovod": "0.28.1", "source": "pypi", "pytorch": "2.13.0+cpu", "tensorflow": None,
        "python": "3.11.2", "cmake": "3.25.1", "cuda": None, "os": "debian12", "arch": "x86_64"}


def test_known_good_cpu_needs_cxx20_only():
    got = horovod_compat_check(BASE, MATRIX)
    assert got["ok"] and got["known_good"]
    assert horovod_compat_fixes(BASE, MATRIX) == ["cxx20"]


def test_old_torch_no_fix():
    assert horovod_compat_fixes(dict(BASE, pytorch="2.1.2"), MATRIX) == []


def test_tf_216_refused_with_reason_and_way_out():
    got = horovod_compat_check(dict(BASE, tensorflow="2.16.1"), MATRIX)
    assert not got["ok"]
    assert got["refusals"][0]["id"] == "tensorflow-2.16"
    assert "4290" in got["message"] and "Way out" in got["message"] and "2.15" in got["message"]
    assert horovod_compat_check(dict(BASE, tensorflow="2.15.1"), MATRIX)["ok"]


def test_python_312_untested_refused_unless_allowed():
    combo = dict(BASE, python="3.12.3")
    assert not horovod_compat_check(combo, MATRIX)["ok"]
    allowed = horovod_compat_check(dict(combo, allow_untested=True), MATRIX)
    assert allowed["ok"] and allowed["warnings"][0]["id"] == "python-3.12"


def test_cmake4_needs_policy():
    assert set(horovod_compat_fixes(dict(BASE, cmake="4.0.2"), MATRIX)) == {"cxx20", "cmake_policy"}


def test_cxx_fix_for_every_source():
    for source in ("pypi", "git", "path"):
        assert horovod_compat_fixes(dict(BASE, source=source), MATRIX) == ["cxx20"]


def test_cuda_on_macos_refused():
    assert not horovod_compat_check(dict(BASE, os="macosx", cuda="12.4"), MATRIX)["ok"]


def test_gpu_known_good():
    got = horovod_compat_check(dict(BASE, pytorch="2.14.1+cu130", cuda="13.0"), MATRIX)
    assert got["ok"] and got["known_good"]


@pytest.mark.parametrize("version, spec, want", [
    ("2.16.1", ">=2.16.1", True), ("2.16.0", ">=2.16.1", False), ("2.13.0+cpu", ">=2.13", True),
    ("3.12", ">=3.11,<3.12", False), ("0.28.1", "==0.28.1", True), ("4.0", ">=4", True),
])
def test_version_matches(version, spec, want):
    assert version_matches(version, spec) is want


def test_bad_version_string():
    with pytest.raises(HorovodCompatError, match="bad version"):
        horovod_compat_check(dict(BASE, pytorch="latest"), MATRIX)
