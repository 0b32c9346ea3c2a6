"""Compatibility matrix (roles/horovod/vars/compat.yml, the one data file) and its checker; the README table
generated from it."""
import re
import sys
from pathlib import Path

import pytest
import yaml

from horovod_compat import (HorovodCompatError, horovod_compat_check, horovod_compat_fixes, version_matches,
                            horovod_compat_markdown)

ROOT = Path(__file__).resolve().parents[2]
MATRIX = yaml.safe_load((ROOT / "roles/horovod/vars/compat.yml").read_text())["horovod_compat_matrix"]
MASTER = "2626dc87a3a8eb8fb7d2216198ce45bce0f9e65a"
BASE = {"horovod": "0.28.1", "source": "pypi", "commit": None, "pytorch": "2.13.0+cpu", "tensorflow": None,
        "python": "3.11.2", "cmake": "3.25.1", "cuda": None, "os": "debian12", "arch": "x86_64"}
ON_MASTER = dict(BASE, source="git", commit=MASTER)
# The source fixes every 0.28.1 release build with torch gets (GCC 13 headers, GCC 14 flatbuffers, GCC 15 Gloo
# <cstdint>, the torch wait that blocks), after the C++ one.
COMPILER_FIXES = ["gcc13_headers", "flatbuffers_span", "gloo_cstdint", "torch_wait_blocks"]


def ids(result, kind="refusals"):
    return [r["id"] for r in result[kind]]


def test_known_good_cpu_needs_cxx20_and_the_compiler_fixes():
    got = horovod_compat_check(BASE, MATRIX)
    assert got["ok"] and got["known_good"] and got["build"] == "0.28.1"
    assert got["cxx_standard"] == 20
    assert horovod_compat_fixes(BASE, MATRIX) == ["cxx20"] + COMPILER_FIXES


# The C++ standard 0.28.1 needs per torch range (#3996/#4014: torch >= 2.1 fails with 0.28.1's C++14;
# PR #3998's C++17; 2.13.0, 2.14.1 and 2.15.0 measured here with C++20); None = 0.28.1's own C++14 is right.
@pytest.mark.parametrize("torch, standard", [
    ("1.5.0", None), ("1.13.1", None), ("2.0.1", None), ("2.1.0", 17), ("2.1.1+cu121", 17), ("2.5.1", 17),
    ("2.12.1", 17), ("2.13.0", 20), ("2.14.1+cu130", 20), ("2.15.0+cu132", 20),
])
def test_cxx_standard_follows_the_torch_range_on_0281(torch, standard):
    got = horovod_compat_check(dict(BASE, pytorch=torch), MATRIX)
    assert got["ok"], got["message"]
    assert got["cxx_standard"] == standard
    assert horovod_compat_fixes(dict(BASE, pytorch=torch), MATRIX) == (
        [f"cxx{standard}"] if standard else []) + COMPILER_FIXES


@pytest.mark.parametrize("torch", ["1.13.1", "2.1.0", "2.5.1", "2.13.0"])
def test_master_sets_its_own_standard(torch):
    """master has PR #3998 (C++17 for torch >= 2.1 in its own CMake) and #3957 (the GCC 13 headers): only the
    vendored flatbuffers' fix and the torch wait (master's wait spins as 0.28.1's), and not the release's key."""
    got = horovod_compat_check(dict(ON_MASTER, pytorch=torch), MATRIX)
    assert got["ok"], got["message"]
    assert (got["build"], got["cxx_standard"]) == ("master-2626dc87a3a8", None)
    assert [f["fix"] for f in got["fixes"]] == ["flatbuffers_span", "torch_wait_blocks"]


def test_torch_214_on_master_refused_naming_both_versions_and_the_pr():
    got = horovod_compat_check(dict(ON_MASTER, pytorch="2.14.1"), MATRIX)
    assert not got["ok"] and ids(got) == ["torch-2.14-on-master"]
    assert "horovod 0.28.1 (commit 2626dc87a3a8) with torch 2.14.1" in got["message"]
    assert "https://github.com/horovod/horovod/pull/3998" in got["message"]
    # bad, not untested: horovod_allow_untested does not let it through
    assert not horovod_compat_check(dict(ON_MASTER, pytorch="2.14.1", allow_untested=True), MATRIX)["ok"]


def test_tf_216_with_keras_3_refused_with_both_versions_reason_way_out_and_issue():
    for combo in (BASE, ON_MASTER):
        got = horovod_compat_check(dict(combo, tensorflow="2.16.1"), MATRIX)
        assert not got["ok"] and ids(got) == ["tensorflow-keras-3"]
        assert "with tensorflow 2.16.1" in got["message"] and "horovod 0.28.1" in got["message"]
        assert "https://github.com/horovod/horovod/issues/4290" in got["message"]
        assert "Way out: pin tf-keras of the same minor beside it (tensorflow==2.18.1 and tf-keras==2.18.0" \
            in got["message"]
    assert horovod_compat_check(dict(BASE, tensorflow="2.15.1"), MATRIX)["ok"]
    # TF >= 2.10 is C++17 in 0.28.1's own CMake: nothing to patch for it
    assert horovod_compat_check(dict(BASE, pytorch=None, tensorflow="2.15.1"), MATRIX)["cxx_standard"] is None


# TensorFlow 2.16 to 2.18 with tf-keras of its minor (issue 47, measured): tf.keras is Keras 2 and the role patches
# horovod.tensorflow.keras's backend import; the wheel's key says so.
LEGACY_KERAS = dict(BASE, pytorch=None, tensorflow="2.18.1", tensorflow_package="tensorflow", tf_keras="2.18.0",
                    tf_keras_matches=True)


@pytest.mark.parametrize("tf, tf_keras", [("2.16.2", "2.16.0"), ("2.17.1", "2.17.0"), ("2.18.1", "2.18.0")])
def test_tf_216_to_218_with_tf_keras_builds_with_the_backend_patch(tf, tf_keras):
    got = horovod_compat_check(dict(LEGACY_KERAS, tensorflow=tf, tf_keras=tf_keras), MATRIX)
    assert got["ok"], got["message"]
    assert got["cxx_standard"] is None  # 0.28.1's CMake sets C++17 for TF >= 2.10
    fix = next(f for f in got["fixes"] if f["id"] == "tensorflow-legacy-keras")
    assert fix["fix"] == "tf_keras_backend" and fix["wheel_key"] == "tfkeras"
    with_torch = horovod_compat_fixes(dict(LEGACY_KERAS, pytorch="2.13.0+cpu", tensorflow=tf, tf_keras=tf_keras),
                                      MATRIX)
    assert with_torch[0] == "cxx20" and sorted(with_torch) == sorted(["cxx20", "tf_keras_backend"] + COMPILER_FIXES)


def test_tf_keras_of_another_minor_or_beside_tensorflow_cpu_refused():
    got = horovod_compat_check(dict(LEGACY_KERAS, tf_keras="2.17.0", tf_keras_matches=False), MATRIX)
    assert not got["ok"] and ids(got) == ["tf-keras-minor"], got["message"]
    assert "tensorflow 2.18.1, tf-keras 2.17.0" in got["message"] and "https://pypi.org/simple/tf-keras/" \
        in got["message"]
    got = horovod_compat_check(dict(LEGACY_KERAS, tensorflow_package="tensorflow-cpu"), MATRIX)
    assert not got["ok"] and ids(got) == ["tf-keras-tensorflow-cpu"], got["message"]
    assert "pin tensorflow==X instead of tensorflow-cpu==X" in got["message"]


def test_tf_219_refused_naming_the_unmerged_build_fix_even_when_untested_allowed():
    for tf_keras in ("2.19.0", None):
        got = horovod_compat_check(dict(LEGACY_KERAS, tensorflow="2.19.1", tf_keras=tf_keras, allow_untested=True),
                                   MATRIX)
        assert not got["ok"] and "tensorflow-2.19" in ids(got), got["message"]
        assert "https://github.com/horovod/horovod/pull/4302" in got["message"]


def test_tf_218_on_master_is_untested_the_patch_was_measured_on_the_release():
    got = horovod_compat_check(dict(LEGACY_KERAS, source="git", commit=MASTER), MATRIX)
    assert not got["ok"] and ids(got) == ["tensorflow-range"], got["message"]


# PyPI's wheels of tensorflow-cpu for Linux x86_64 (recorded 2026-11-28, tests/fixtures/pypi/): the CPython
# versions each release has a wheel for, against the matrix's rules on the host's Python.
PYPI_TF_CPU = (ROOT / "tests/fixtures/pypi/tensorflow-cpu-wheels.txt").read_text().split()


@pytest.mark.parametrize("python", ["3.10.12", "3.11.2", "3.12.3", "3.13.5"])
def test_tensorflow_without_a_wheel_for_the_python_refused(python):
    cp = "cp" + "".join(python.split(".")[:2])
    releases = sorted({name.split("-")[1] for name in PYPI_TF_CPU})
    built = [tf for tf in releases if version_matches(tf, ">=2.10,<2.19") and "rc" not in tf]
    assert len(built) >= 18, releases  # the recording has 2.10.0 to 2.18.1
    for tf in built:
        has_wheel = any(n.startswith(f"tensorflow_cpu-{tf}-{cp}-") and "linux" in n and "x86_64" in n
                        for n in PYPI_TF_CPU)
        tf_keras = ".".join(tf.split(".")[:2]) + ".0" if version_matches(tf, ">=2.16.1") else None
        got = horovod_compat_check(dict(BASE, pytorch=None, tensorflow=tf, python=python, allow_untested=True,
                                        tensorflow_package="tensorflow", tf_keras=tf_keras,
                                        tf_keras_matches=bool(tf_keras)), MATRIX)
        assert got["ok"] == has_wheel, (tf, python, got["message"])
        if not has_wheel:
            assert ids(got)[0].startswith("tensorflow-2.1") and "(PyPI)" in got["message"], got["message"]


def test_mxnet_refused_naming_the_attic():
    got = horovod_compat_check(dict(BASE, mxnet=True, allow_untested=True), MATRIX)
    assert not got["ok"] and ids(got) == ["mxnet-retired"]
    assert "https://attic.apache.org/projects/mxnet.html" in got["message"]


@pytest.mark.parametrize("framework, version, spans", [
    ("pytorch", "1.4.0", ">=1.5.0,<2.1"), ("tensorflow", "1.14.0", ">=1.15.0,<2.10"),
])
def test_framework_older_than_horovod_accepts_is_refused_even_when_untested_allowed(framework, version, spans):
    got = horovod_compat_check(dict(BASE, **{framework: version}, allow_untested=True), MATRIX)
    assert not got["ok"] and ids(got) == [f"{framework}-range"]
    assert spans in got["message"] and version in got["message"]


def test_torch_newer_than_tested_untested_and_built_with_the_newest_standard_when_allowed():
    combo = dict(BASE, pytorch="2.16.0")
    got = horovod_compat_check(combo, MATRIX)
    assert not got["ok"] and ids(got) == ["torch-newer-than-tested"] and "torch 2.16.0" in got["message"]
    allowed = horovod_compat_check(dict(combo, allow_untested=True), MATRIX)
    assert allowed["ok"] and ids(allowed, "warnings") == ["torch-newer-than-tested"]
    assert allowed["cxx_standard"] == 20


def test_a_horovod_outside_the_matrix_is_untested_and_gets_no_patch():
    for combo in (dict(BASE, source="git", commit="a" * 40), dict(BASE, horovod="0.28.0")):
        got = horovod_compat_check(combo, MATRIX)
        assert not got["ok"] and ids(got) == ["horovod-not-in-matrix"]
        assert "horovod_allow_untested" in got["message"] and "master at 2626dc87a3a8" in got["message"]
        allowed = horovod_compat_check(dict(combo, allow_untested=True), MATRIX)
        assert allowed["ok"] and allowed["build"] is None and allowed["cxx_standard"] is None


def test_python_315_untested_refused_unless_allowed():
    combo = dict(BASE, python="3.15.0")
    got = horovod_compat_check(combo, MATRIX)
    assert not got["ok"] and "with Python 3.15.0" in got["message"] and "distutils" in got["message"]
    allowed = horovod_compat_check(dict(combo, allow_untested=True), MATRIX)
    assert allowed["ok"] and allowed["warnings"][0]["id"] == "python-3.15"


def test_python_313_builds_as_on_the_debian13_hosts():
    """Python 3.13 built and ran on Debian 13 sandbox hosts with Debian's torch: no longer refused, known good."""
    debian13 = dict(BASE, python="3.13.5", pytorch="2.6.0+debian", cmake="3.31.6", os="debian13")
    got = horovod_compat_check(debian13, MATRIX)
    assert got["ok"] and got["known_good"] and got["warnings"] == [], got["message"]
    assert sorted(horovod_compat_fixes(debian13, MATRIX)) == sorted(["cxx17", "distutils_spawn"] + COMPILER_FIXES)


def test_mpirun_options_get_two_dashes_for_open_mpi_5():
    """Open MPI 5's newer prterun reads `-bind-to none` as a program: the role writes `--bind-to`; Open MPI 4.1's
    wheels keep their key (nothing changes for them)."""
    for mpi, patched in ((None, False), ("4", False), ("4.1.4", False), ("5", True), ("5.0.7", True), ("6.0.0rc2", True)):
        fixes = horovod_compat_check(dict(BASE, mpi=mpi), MATRIX)["fixes"]
        assert ("mpirun_long_options" in [f.get("fix") for f in fixes]) == patched, (mpi, fixes)
        assert ("mpilongopts" in [f.get("wheel_key") for f in fixes]) == patched


def test_python_314_and_gcc_16_build_as_in_the_forky_container():
    forky = dict(BASE, python="3.14.8", pytorch="2.14.1+debian", cmake="4.3.4", mpi="6.0.0rc2", os="debian14")
    got = horovod_compat_check(forky, MATRIX)
    assert got["ok"] and got["known_good"] and got["warnings"] == [], got["message"]
    assert sorted(horovod_compat_fixes(forky, MATRIX)) == sorted(
        ["cxx20", "cmake_policy", "distutils_spawn", "mpirun_long_options"] + COMPILER_FIXES)


def test_horovodrun_loses_distutils_from_python_312_on():
    """horovodrun imports distutils.spawn: from Python 3.12 on the role patches in shutil.which, and the wheel's key
    says so; an older Python keeps the wheel (and its key) as it was."""
    for python, patched in (("3.11.2", False), ("3.12.3", True), ("3.13.5", True)):
        fixes = horovod_compat_check(dict(BASE, python=python), MATRIX)["fixes"]
        assert ("distutils_spawn" in [f.get("fix") for f in fixes]) == patched, (python, fixes)
        assert ("nodistutils" in [f.get("wheel_key") for f in fixes]) == patched


def test_python_312_builds_as_on_the_gpu_host():
    """Python 3.12 built and ran on a real GPU host (tests/fixtures/device/h200-2026-11-27): no longer refused,
    and that host's combination is known good."""
    gpu_host = dict(BASE, python="3.12.3", pytorch="2.11.0+cu130", cuda="13.0", os="ubuntu24")
    got = horovod_compat_check(gpu_host, MATRIX)
    assert got["ok"] and got["known_good"] and got["warnings"] == [], got["message"]
    assert sorted(horovod_compat_fixes(gpu_host, MATRIX)) == sorted(["cxx17", "distutils_spawn"] + COMPILER_FIXES)
    assert horovod_compat_check(dict(BASE, python="3.12.3"), MATRIX)["ok"]


def test_cmake4_needs_policy():
    assert horovod_compat_fixes(dict(BASE, cmake="4.0.2"), MATRIX) == ["cxx20", "cmake_policy"] + COMPILER_FIXES


def test_cxx_fix_for_the_release_from_pypi_or_a_path():
    for source in ("pypi", "path"):
        assert horovod_compat_fixes(dict(BASE, source=source), MATRIX) == ["cxx20"] + COMPILER_FIXES


def test_no_fix_for_a_horovod_outside_the_matrix():
    """An untested Horovod let through is built as it is: no patch written for 0.28.1 is forced on it."""
    got = horovod_compat_check(dict(BASE, horovod="0.28.0", allow_untested=True), MATRIX)
    assert got["ok"] and got["fixes"] == []


def test_every_source_fix_has_its_patches():
    """Each needs_fix rule other than the build-environment one (cmake_policy) names patches the build applies,
    each a file, a compiling regexp and its replacement; and no patch is left without a rule."""
    source_fixes = {rule["fix"] for rule in MATRIX["rules"] if rule["verdict"] == "needs_fix"} - {"cmake_policy"}
    assert source_fixes == set(MATRIX["patches"]) == set(COMPILER_FIXES) | {"distutils_spawn", "mpirun_long_options",
                                                                           "tf_keras_backend"}
    for fix, edits in MATRIX["patches"].items():
        assert edits, fix
        for edit in edits:
            assert set(edit) == {"file", "regexp", "replace"}, edit
            re.compile(edit["regexp"], re.MULTILINE)


# The lines each patch rewrites, as the 0.28.1 sdist has them (horovod-0.28.1.tar.gz, the role's sha256):
# each regexp must match exactly once there and give the fixed line.
SDIST_LINES = {
    "horovod/common/common.h": ("#include <memory>\n#include <string>\n#include <unordered_map>\n",
                                "#include <stdexcept>\n#include <string>\n"),
    "horovod/common/group_table.h": ("#include <mutex>\n#include <queue>\n#include <unordered_map>\n",
                                     "#include <queue>\n#include <string>\n"),
    "horovod/runner/js_run.py": ("from horovod.runner.util import lsf\nfrom distutils.spawn import find_executable\n",
                                 "from shutil import which as find_executable\n"),
    "horovod/tensorflow/keras/__init__.py": (
        'if is_version_greater_equal_than(tf.__version__, "2.6.0"):\n    from keras import backend as K\nelse:\n'
        "    from tensorflow.python.keras import backend as K\n", "    K = keras.backend\nelse:\n"),
    "horovod/tensorflow/keras/callbacks.py": (
        'if is_version_greater_equal_than(tf.__version__, "2.6.0"):\n    from keras import backend as K\nelse:\n'
        "    from tensorflow.python.keras import backend as K\n", "    K = keras.backend\nelse:\n"),
    "third_party/gloo/gloo/types.h": ("#pragma once\n\n#include <iostream>\n\n#ifdef __CUDA_ARCH__\n",
                                      "#include <cstdint>\n#include <iostream>\n"),
    "third_party/flatbuffers/include/flatbuffers/stl_emulation.h": (
        "  pointer const data_;\n  const size_type count_;\n", "  size_type count_;\n"),
}


MPI_RUN = ("# No process binding args\n_NO_BINDING_ARGS = ['-bind-to none', '-map-by slot']\n# Process socket binding args\n"
           "_SOCKET_BINDING_ARGS = ['-bind-to socket', '-map-by socket', '-rank-by core']\n")


def test_patches_rewrite_the_0281_lines():
    """(torch_wait_blocks edits Horovod's own files under tests/fixtures: tests/unit/test_horovod_wait_patch.py)"""
    text = MPI_RUN
    for edit in MATRIX["patches"]["mpirun_long_options"]:
        text, count = re.subn(edit["regexp"], edit["replace"], text, flags=re.MULTILINE)
        assert count == 1, edit
    assert not re.search(r"'-[a-z]", text) and "'--bind-to none', '--map-by slot'" in text and "'--rank-by core'" in text
    for edit in (e for edits in MATRIX["patches"].values() for e in edits if e["file"] in SDIST_LINES):
        before, wanted = SDIST_LINES[edit["file"]]
        after, count = re.subn(edit["regexp"], edit["replace"], before, flags=re.MULTILINE)
        assert count == 1 and wanted in after, (edit, after)


def test_cuda_on_macos_refused():
    assert not horovod_compat_check(dict(BASE, os="macosx", cuda="12.4"), MATRIX)["ok"]


def test_gpu_known_good():
    got = horovod_compat_check(dict(BASE, pytorch="2.14.1+cu130", cuda="13.0"), MATRIX)
    assert got["ok"] and got["known_good"]


def test_matrix_is_whole():
    """Every source named exists; each build's ranges are ordered without overlap; the version just above each
    build's newest range is refused by a rule (no gap where the matrix would say nothing)."""
    named = {s for rule in MATRIX["rules"] for s in rule.get("sources", [])}
    for build in MATRIX["builds"]:
        for framework, rows in build["frameworks"].items():
            named |= {s for row in rows for s in row["sources"]}
            for low, high in zip(rows, rows[1:]):
                top = high["versions"].split(",")[0].lstrip(">=")
                assert low["versions"].endswith("<" + top), (build["id"], framework, low, high)
                assert low["cxx"] <= high["cxx"]
            beyond = rows[-1]["versions"].split("<")[-1]
            combo = dict(ON_MASTER if build["when"]["commit"] != "absent" else BASE, pytorch=None, tensorflow=None)
            combo[framework] = beyond
            got = horovod_compat_check(combo, MATRIX)
            assert not got["ok"] and not ids(got)[0].endswith("-range"), (build["id"], framework, ids(got))
    assert named <= set(MATRIX["sources"]), named - set(MATRIX["sources"])


def test_unknown_source_id_is_an_error():
    broken = dict(MATRIX, rules=[dict(MATRIX["rules"][0], sources=["nowhere"])])
    with pytest.raises(HorovodCompatError, match="unknown source"):
        horovod_compat_check(dict(BASE, tensorflow="2.16.1"), broken)


@pytest.mark.parametrize("version, spec, want", [
    ("2.16.1", ">=2.16.1", True), ("2.16.0", ">=2.16.1", False), ("2.13.0+cpu", ">=2.13", True),
    ("3.12", ">=3.11,<3.12", False), ("0.28.1", "==0.28.1", True), ("4.0", ">=4", True),
    # as pip compares: a release candidate comes before its release, a local part matches its release
    ("2.14.0rc1", ">=2.14.0", False), ("2.13.0+cu128", "==2.13.0", True),
    ("2.14.0.dev20261101", ">=2.14.0", False), ("0.28.1", "0.28.1", True),
])
def test_version_matches(version, spec, want):
    assert version_matches(version, spec) is want


def test_bad_version_string():
    with pytest.raises(HorovodCompatError, match="bad version"):
        horovod_compat_check(dict(BASE, pytorch="latest"), MATRIX)


def test_readme_table_is_the_matrix():
    sys.path.insert(0, str(ROOT / "tests"))
    import compat_table
    readme = (ROOT / "roles/horovod/README.md").read_text()
    assert compat_table.readme_table(readme) == horovod_compat_markdown(MATRIX), \
        "stale: run python tests/compat_table.py --write"
    # the table carries the ranges, standards and sources (a render that dropped them would fail here)
    assert "| 0.28.1 | torch | `>=2.1,<2.13` | 17 | the role's patch |" in readme
    assert "[hvd-3996](https://github.com/horovod/horovod/issues/3996)" in readme
