"""python_env's decision as pure functions (plugins/filter/python_env_plan.py), called directly over the
inputs decide.yml gathers: venv vs conda, cpu vs cuda torch, armv7l/aarch64/x86_64, macOS, offline and
wheelhouse sets (the same cases tests/integration/test_python_env_decide.py runs through ansible); and the conda
dependencies of environment.yml (CPU, CUDA 12+, CUDA <= 11), checked against conda-forge's recorded packages."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from python_env_plan import (python_env_changed_wheels, python_env_conda_dependencies, python_env_hashed_wheels,
                             python_env_plan, python_env_platform, python_env_wheel_manifest, python_env_wheels)

from conda_forge import conda_forge_errors  # tests/conda_forge.py: what conda-forge has (recorded)

ROLE = Path(__file__).resolve().parents[2] / "roles" / "python_env"
TABLES_SRC = yaml.safe_load((ROLE / "vars" / "main.yml").read_text(encoding="utf-8"))
TABLES = {"venv_python_default": "/usr/bin/python3",
          "conda_platforms": TABLES_SRC["__python_env_conda_platforms"],
          "pip_platforms": TABLES_SRC["__python_env_pip_platforms"],
          "version_regex": TABLES_SRC["__python_env_version_regex"],
          "conda_version_regex": TABLES_SRC["__python_env_conda_version_regex"],
          "cuda_version_regex": TABLES_SRC["__python_env_cuda_version_regex"],
          "framework_re": TABLES_SRC["__python_env_framework_re"],
          "package_re": TABLES_SRC["__python_env_package_re"],
          "distro_torch_packages": yaml.safe_load((ROLE / "vars" / "Debian.yml").read_text(encoding="utf-8"))[
              "__python_env_distro_torch_packages"]}
VARS = {"python_env_manager": "venv", "python_env_path": "/opt/horovod/venv", "python_env_venv_python": "",
        "python_env_python_version": "3.11", "python_env_conda_distribution": "miniforge",
        "python_env_conda_version": "", "python_env_conda_prefix": "/opt/conda", "python_env_conda_env_name": "horovod",
        "python_env_conda_force": False, "python_env_wheelhouse": "", "python_env_wheelhouse_fill": True,
        "python_env_wheelhouse_fill_bool": True, "python_env_wheelhouse_files": [],
        "python_env_wheelhouse_dest": "/opt/horovod/wheelhouse", "python_env_offline": False,
        "python_env_torch_version": "", "python_env_torch_variant": "auto", "python_env_torch_source": "pip",
        "python_env_cuda_build_host": False,
        "python_env_cuda_version": "", "python_env_torch_cpu_index_url": "https://download.pytorch.org/whl/cpu",
        "python_env_torch_cuda_index_url": "", "python_env_pip_packages": [],
        "python_env_training_packages": ["numpy"], "cluster_ca_bundle": "", "become": True}
DEBIAN_AMD64 = {"system": "Linux", "architecture": "x86_64", "python": {"version": {"major": 3, "minor": 11}}}
PI_ARMV7L = {**DEBIAN_AMD64, "architecture": "armv7l"}
PI_ARM64 = {**DEBIAN_AMD64, "architecture": "aarch64"}
UBUNTU_GPU = {"system": "Linux", "architecture": "x86_64", "python": {"version": {"major": 3, "minor": 12}},
              "hvc_platform": {"system": "Linux", "arch": "x86_64", "userland_bits": 64,
                               "gpu": {"count": 2, "cuda_version": "13.0", "present": True}}}
PI_32BIT_USERLAND = {**PI_ARM64, "hvc_platform": {"system": "Linux", "arch": "aarch64", "userland_bits": 32,
                                                   "gpu": {"count": 0}}}
MAC_ARM64 = {"system": "Darwin", "architecture": "arm64",
             "hvc_platform": {"system": "Darwin", "arch": "aarch64", "userland_bits": 64}}
WH = "/ctl/wheelhouse"


def inputs(facts, seen=None, **variables):
    return {"facts": facts, "vars": {**VARS, **variables}, "tables": TABLES,
            "seen": {"wheelhouse_is_dir": False, "ca_bundle_is_file": False, **(seen or {})}}


def decide(facts, seen1=None, seen2=None, **variables):
    """Both steps; returns (decision, failed checks' messages): decide.yml stops at step 1's refusals."""
    given = inputs(facts, seen1, **variables)
    first = python_env_platform(given)
    second = python_env_plan(first, given, seen2 or {})
    failed = [c["msg"] for c in first["checks"] if not c["ok"]]
    return second, failed or [c["msg"] for c in second["checks"] if not c["ok"]]


def test_default_is_venv_on_debian():
    d, failed = decide(DEBIAN_AMD64)
    assert not failed
    plan = d["plan"]
    assert plan["method"] == "venv" and plan["action"] == "install"
    assert plan["python"] == "/opt/horovod/venv/bin/python"
    assert plan["reason"] == "python_env_manager: venv on Linux/x86_64" and plan["platform"] == "Linux/x86_64"
    assert d["py"] == "3.11" and d["venv_interpreter"] == "/usr/bin/python3"
    assert plan["requirements"] == ["numpy"] and plan["become"] is True and plan["installer"] == {}


@pytest.mark.parametrize("facts", [PI_ARMV7L, PI_32BIT_USERLAND])
def test_conda_on_armv7l_falls_back_to_venv_with_reason(facts):
    d, failed = decide(facts, python_env_manager="conda")
    assert not failed
    assert d["arch"] == "armv7l" and d["conda_platform"] == ""
    assert d["plan"]["method"] == "venv"
    assert d["plan"]["reason"] == "armv7l: no miniforge installer, using venv"


def test_conda_on_armv7l_forced_is_refused_naming_the_variable():
    _, failed = decide(PI_ARMV7L, python_env_manager="conda", python_env_conda_force=True)
    assert failed == ["python_env_conda_force is true but Linux/armv7l has no miniforge installer (conda exists for "
                      "Linux-x86_64, Linux-aarch64, MacOSX-x86_64, MacOSX-arm64). Set python_env_conda_force: false "
                      "to fall back to venv, or python_env_manager: venv."]


@pytest.mark.parametrize(("facts", "platform"), [(DEBIAN_AMD64, "Linux-x86_64"), (PI_ARM64, "Linux-aarch64"),
                                                 (MAC_ARM64, "MacOSX-arm64")])
def test_conda_platforms(facts, platform):
    d, failed = decide(facts, python_env_manager="conda")
    assert not failed
    assert d["method"] == "conda" and d["conda_platform"] == platform
    assert d["plan"]["python"] == "/opt/conda/envs/horovod/bin/python"
    # conda's Python is the pinned one, not the host's python3
    assert d["py"] == "3.11"


def test_gpu_host_gets_cuda_torch_and_the_cuda_version_from_facts():
    d, failed = decide(UBUNTU_GPU, python_env_torch_version="2.13.0", python_env_manager="conda")
    assert not failed
    assert d["variant"] == "cuda" and d["torch_requirement"] == "torch==2.13.0" and d["cuda_version"] == "13.0"
    pinned, _ = decide(UBUNTU_GPU, python_env_cuda_version="12.4")
    assert pinned["cuda_version"] == "12.4"


def test_cpu_host_gets_the_cpu_build_and_reaches_the_cpu_index_without_a_wheelhouse():
    d, failed = decide(DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse_fill=False,
                       python_env_wheelhouse_fill_bool=False)
    assert not failed
    assert d["variant"] == "cpu" and d["torch_requirement"] == "torch==2.13.0+cpu"
    assert d["pip_options"] == ["--extra-index-url https://download.pytorch.org/whl/cpu"]
    assert d["wheel_dir"] == "" and d["fill"] == {}


@pytest.mark.parametrize(("facts", "variables", "variant", "requirement"), [
    (DEBIAN_AMD64, {"python_env_cuda_build_host": True}, "cuda", "torch==2.13.0"),
    (UBUNTU_GPU, {"python_env_torch_variant": "cpu"}, "cpu", "torch==2.13.0+cpu"),
    (PI_ARM64, {}, "cpu", "torch==2.13.0"),  # only Linux x86_64 torch carries +cpu
    (MAC_ARM64, {"python_env_torch_variant": "cuda"}, "cpu", "torch==2.13.0"),  # macOS: always the CPU build
])
def test_torch_build(facts, variables, variant, requirement):
    d, _ = decide(facts, python_env_torch_version="2.13.0", **variables)
    assert (d["variant"], d["torch_requirement"]) == (variant, requirement)


DEBIAN13 = {**DEBIAN_AMD64, "python": {"version": {"major": 3, "minor": 13}}}


def test_distro_torch_is_the_oss_package_at_the_pin_and_pip_installs_no_torch():
    d, failed = decide(DEBIAN13, python_env_torch_source="distro", python_env_torch_version="2.6.0",
                       python_env_wheelhouse=WH)
    assert not failed
    assert d["distro_packages"] == ["python3-torch=2.6.0*", "libtorch-dev=2.6.0*", "pybind11-dev"]
    assert d["plan"]["distro_packages"] == d["distro_packages"]
    # what the environment will report (the plan's platform key): Debian's build carries +debian
    assert d["torch_version"] == d["plan"]["torch_version"] == "2.6.0+debian"
    assert d["torch_requirement"] == "" and d["fill"] == {} and d["plan"]["requirements"] == ["numpy"]
    assert d["pip_options"] == []  # no torch index either
    pip, _ = decide(DEBIAN13, python_env_torch_version="2.6.0")
    assert pip["distro_packages"] == [] and pip["torch_requirement"] == "torch==2.6.0+cpu"


@pytest.mark.parametrize(("facts", "variables", "message"), [
    (MAC_ARM64, {}, "python_env_torch_source is distro but Darwin has no python3-torch package; allowed there: pip"),
    (DEBIAN13, {"python_env_manager": "conda"}, "python_env_torch_source is distro, which a venv sees"),
    (UBUNTU_GPU, {}, "python_env_torch_source is distro, a CPU build of torch, but python_env_torch_variant is cuda"),
    (DEBIAN13, {"python_env_torch_version": ""},
     "python_env_torch_source is distro but python_env_torch_version is empty; set it to the version of the OS's"),
    (DEBIAN13, {"python_env_pip_packages": ["torchvision==0.21.0", "Torch==2.6.0"]},
     'python_env_pip_packages lists ["Torch==2.6.0"] but python_env_torch_source is distro'),
])
def test_distro_torch_refused_where_it_cannot_work(facts, variables, message):
    tables = dict(TABLES, distro_torch_packages={}) if facts is MAC_ARM64 else TABLES
    given = inputs(facts, **{"python_env_torch_source": "distro", "python_env_torch_version": "2.6.0", **variables})
    failed = [c["msg"] for c in python_env_platform(dict(given, tables=tables))["checks"] if not c["ok"]]
    assert len(failed) == 1 and failed[0].startswith(message), failed


def test_controller_downloads_each_wheel_set_it_lacks():
    d, failed = decide(DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse=WH)
    assert not failed
    fill = d["fill"]
    assert fill["dir"] == f"{WH}/linux-x86_64-cp311-cpu" == d["wheel_dir"]
    assert fill["requirement"] == "torch==2.13.0+cpu" and fill["marker"] == "torch-2.13.0+cpu_numpy.complete"
    first, second = fill["attempts"]
    assert "--extra-index-url" not in first and first[-2:] == ["torch==2.13.0+cpu", "numpy"]
    assert second[-2:] == ["--extra-index-url", "https://download.pytorch.org/whl/cpu"]
    assert {"--python-version", "3.11", "--only-binary=:all:", "--platform=manylinux_2_28_x86_64"} <= set(first)
    assert fill["target"] == ["Linux", "x86_64", "3.11"]
    assert d["pip_options"] == ["--find-links /opt/horovod/wheelhouse"]
    assert d["requirements"] == ["torch==2.13.0+cpu", "numpy"]
    gpu, _ = decide(UBUNTU_GPU, python_env_torch_version="2.14.1", python_env_wheelhouse=WH)
    assert gpu["fill"]["dir"] == f"{WH}/linux-x86_64-cp312-cuda" and gpu["fill"]["target"][2] == "3.12"
    assert len(gpu["fill"]["attempts"]) == 1 and gpu["fill"]["attempts"][0][-2] == "torch==2.14.1"
    # a CUDA index, when set, is used straight away
    indexed, _ = decide(UBUNTU_GPU, python_env_torch_version="2.14.1", python_env_wheelhouse=WH,
                        python_env_torch_cuda_index_url="https://idx.invalid/cu124")
    assert indexed["fill"]["attempts"][0][-2:] == ["--extra-index-url", "https://idx.invalid/cu124"]


def test_macos_set_names_arm64_in_its_target():
    d, _ = decide(MAC_ARM64, python_env_torch_version="2.13.0", python_env_wheelhouse=WH)
    assert d["fill"]["dir"] == f"{WH}/darwin-aarch64-cp311-cpu"
    assert d["fill"]["target"] == ["Darwin", "arm64", "3.11"]
    assert "--platform=macosx_11_0_universal2" in d["fill"]["attempts"][0]


def test_a_complete_set_is_not_downloaded_again():
    wheel = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    seen = {"set_dir_is_dir": True, "complete": True, "set_wheels": [wheel, "torch-2.13.0-cp311-cp311-macosx_11_0_arm64.whl"]}
    d, failed = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, seen, python_env_torch_version="2.13.0",
                       python_env_wheelhouse=WH)
    assert not failed
    assert d["fill"] == {} and d["wheels"] == [wheel] and d["wheel_dir"] == f"{WH}/linux-x86_64-cp311-cpu"
    # torch is in the wheelhouse: no index
    assert d["pip_options"] == ["--find-links /opt/horovod/wheelhouse"]
    assert d["plan"]["hashed"] is True  # the set goes in first, by its hashes


def test_a_set_downloaded_in_this_run_is_installed_by_its_hashes_in_this_run():
    """A cold cache: the set is filled by this run, so decide sees no wheel of it yet. It goes in by its hashes now,
    as it will on the next run: otherwise the next run writes hvc-wheels.txt (a cold CI's idempotence failed so)."""
    d, failed = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, {}, python_env_torch_version="2.13.0",
                       python_env_wheelhouse=WH)
    assert not failed and d["fill"] and d["wheels"] == []
    assert d["plan"]["hashed"] is True


def test_only_a_filled_set_is_installed_by_its_hashes():
    """A set is one resolution of pip download's; a flat wheelhouse of one's own may hold two releases of a package,
    and python_env_wheelhouse_files are the user's choice: those go by name as before."""
    flat, _ = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True},
                     {"flat_torch": [f"{WH}/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"],
                      "wheelhouse_wheels": ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"]},
                     python_env_torch_version="2.13.0", python_env_wheelhouse=WH, python_env_offline=True)
    assert flat["wheels"] and flat["plan"]["hashed"] is False
    listed = ["torch-9.9.9-py3-none-any.whl"]
    own, _ = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, {"present": [f"{WH}/{listed[0]}"]},
                    python_env_wheelhouse=WH, python_env_wheelhouse_files=listed)
    assert own["plan"]["hashed"] is False
    none, _ = decide(DEBIAN_AMD64, python_env_torch_version="2.13.0")
    assert none["plan"]["hashed"] is False
    # no torch wanted: the set's folder is there (another inventory filled it), but no set of this host's
    wheel = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    other, _ = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, {"set_dir_is_dir": True, "set_wheels": [wheel]},
                      python_env_torch_version="", python_env_wheelhouse=WH)
    assert other["wheels"] == [wheel] and other["plan"]["hashed"] is False


def test_the_hashed_requirements_name_each_wheel_of_the_marker_by_its_path_and_recorded_sha256():
    torch, numpy = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "numpy-2.2.6-cp311-cp311-linux_x86_64.whl"
    older = "torch-2.12.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"  # another release's set, in the same folder
    marker = python_env_wheel_manifest("torch==2.13.0+cpu numpy", [
        {"path": f"/wh/set/{torch}", "checksum": "a" * 64}, {"path": f"/wh/set/{numpy}", "checksum": "b" * 64}])
    assert python_env_hashed_wheels(marker, [older, torch, numpy], "/opt/horovod/wheelhouse") == (
        f"/opt/horovod/wheelhouse/{numpy} --hash=sha256:{'b' * 64}\n"
        f"/opt/horovod/wheelhouse/{torch} --hash=sha256:{'a' * 64}\n")
    assert python_env_hashed_wheels("torch==2.13.0+cpu numpy\n", [torch], "/opt/horovod/wheelhouse") == ""  # no sums
    with pytest.raises(ValueError, match="python_env_wheelhouse_dest: '/opt/my wheels' holds whitespace"):
        python_env_hashed_wheels(marker, [torch], "/opt/my wheels")


def test_training_packages_travel_with_torch():
    pinned, failed = decide(DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse=WH,
                            python_env_training_packages=["numpy==2.2.6", "pandas"])
    assert not failed
    assert pinned["fill"]["attempts"][0][-3:] == ["torch==2.13.0+cpu", "numpy==2.2.6", "pandas"]
    assert pinned["fill"]["marker"] == "torch-2.13.0+cpu_numpy-2.2.6_pandas.complete"
    none, _ = decide(DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse=WH,
                     python_env_training_packages=[])
    assert none["fill"]["marker"] == "torch-2.13.0+cpu.complete" and none["requirements"] == ["torch==2.13.0+cpu"]


def test_a_pinned_tensorflow_travels_with_torch():
    """The other frameworks pinned in python_env_pip_packages are downloaded into the same set (issue 47), so the
    hosts install them from the wheelhouse; other pip packages are not."""
    d, failed = decide(DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse=WH,
                       python_env_training_packages=["numpy"],
                       python_env_pip_packages=["tensorflow-cpu==2.15.1", "pandas==2.2.3"])
    assert not failed
    assert d["fill"]["attempts"][0][-3:] == ["torch==2.13.0+cpu", "tensorflow-cpu==2.15.1", "numpy"]
    assert d["fill"]["requirement"] == "torch==2.13.0+cpu tensorflow-cpu==2.15.1"
    assert d["fill"]["marker"] == "torch-2.13.0+cpu_tensorflow-cpu-2.15.1_numpy.complete"
    # a set of its own: a host gets every wheel of its set, and a torch-only host must not get TensorFlow's
    assert d["fill"]["dir"] == f"{WH}/linux-x86_64-cp311-cpu-tensorflow-cpu-2.15.1", d["fill"]["dir"]


def test_tf_keras_travels_with_its_tensorflow():
    """tf-keras (Keras 2 for TensorFlow >= 2.16) is part of what Horovod runs with: same set, same pin rule."""
    d, failed = decide(DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse=WH,
                       python_env_pip_packages=["tensorflow==2.18.1", "tf_keras==2.18.0"])
    assert not failed
    assert d["fill"]["requirement"] == "torch==2.13.0+cpu tensorflow==2.18.1 tf_keras==2.18.0"
    assert d["fill"]["dir"] == f"{WH}/linux-x86_64-cp311-cpu-tensorflow-2.18.1-tf_keras-2.18.0", d["fill"]["dir"]
    # what `horovod-cluster wheelhouse` shows of the set, filled now or before
    assert d["set_requirement"] == "torch==2.13.0+cpu tensorflow==2.18.1 tf_keras==2.18.0"
    filled, _ = decide(DEBIAN_AMD64, None, {"complete": True}, python_env_torch_version="2.13.0", python_env_wheelhouse=WH,
                       python_env_pip_packages=["tensorflow==2.18.1", "tf_keras==2.18.0"])
    assert filled["fill"] == {} and filled["set_requirement"] == d["set_requirement"]


def test_a_flat_wheelhouse_with_the_hosts_torch_is_used_as_it_is_offline():
    names = ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
             "torch-2.13.0-cp311-cp311-manylinux_2_28_aarch64.whl", "filelock-3.16.1-py3-none-any.whl"]
    first = python_env_platform(inputs(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, python_env_torch_version="2.13.0",
                                       python_env_wheelhouse=WH, python_env_offline=True))
    assert first["flat_glob"] == f"{WH}/torch-2.13.0+cpu-*x86_64.whl"
    d, failed = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True},
                       {"flat_torch": [f"{WH}/{names[0]}"], "wheelhouse_wheels": names},
                       python_env_torch_version="2.13.0", python_env_wheelhouse=WH, python_env_offline=True)
    assert not failed
    assert d["fill"] == {} and d["wheel_dir"] == WH
    assert d["wheels"] == [names[2], names[0]]
    assert d["pip_options"] == ["--find-links /opt/horovod/wheelhouse", "--no-index"]


def test_offline_without_the_torch_wheel_is_refused():
    _, failed = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, {"wheelhouse_wheels": ["filelock-3.16.1-py3-none-any.whl"]},
                       python_env_torch_version="2.13.0", python_env_wheelhouse=WH, python_env_offline=True,
                       python_env_wheelhouse_fill=False, python_env_wheelhouse_fill_bool=False)
    assert failed == [f"python_env_offline is true but python_env_wheelhouse '{WH}' has no wheel for torch==2.13.0+cpu "
                      "on Linux/x86_64 (python_env_torch_version)"]


def test_listed_wheelhouse_files_must_exist():
    listed = ["torch-9.9.9-py3-none-any.whl"]
    _, failed = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, {"present": []}, python_env_wheelhouse=WH,
                       python_env_wheelhouse_files=listed)
    assert failed == [f"python_env_wheelhouse_files: 'torch-9.9.9-py3-none-any.whl' is missing from '{WH}' "
                      "(python_env_wheelhouse)"]
    d, failed = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, {"present": [f"{WH}/{listed[0]}"]},
                       python_env_wheelhouse=WH, python_env_wheelhouse_files=listed)
    assert not failed and d["wheels"] == listed


@pytest.mark.parametrize(("variables", "message"), [
    ({"python_env_torch_version": "==2.13.0"},
     "python_env_torch_version is '==2.13.0'; expected a release like 2.13.0 (no operator, no local tag), or empty"),
    ({"python_env_torch_version": "latest"}, "python_env_torch_version is 'latest'"),
    ({"python_env_python_version": "3"}, "python_env_python_version is '3'; expected major.minor like 3.11"),
    ({"python_env_conda_version": "25.3"},
     "python_env_conda_version is '25.3'; expected like 25.3.0-3 (Miniforge) or py311_24.9.2-0 (Miniconda), or empty"),
    ({"python_env_cuda_version": "12"}, "python_env_cuda_version is '12'; expected major.minor like 12.4, or empty"),
    ({"python_env_wheelhouse_fill": "sometimes"}, "python_env_wheelhouse_fill is 'sometimes'; allowed: true, false"),
    ({"python_env_offline": True},
     "python_env_offline is true but python_env_wheelhouse is empty: offline installs need a wheelhouse"),
    ({"python_env_wheelhouse": "/nonexistent/wheels", "python_env_wheelhouse_fill_bool": False},
     "python_env_wheelhouse '/nonexistent/wheels' is not a folder on the controller, and python_env_wheelhouse_fill "
     "is false (nothing would fill it)"),
    ({"cluster_ca_bundle": "/nonexistent/ca.pem"}, "cluster_ca_bundle '/nonexistent/ca.pem' is not a file on the controller"),
    ({"python_env_wheelhouse_files": ["x-1-py3-none-any.whl"]},
     "python_env_wheelhouse_files is set but python_env_wheelhouse (the folder) is empty"),
    ({"python_env_pip_packages": ["torch>=2.1"]},
     'python_env_pip_packages lists ["torch>=2.1"] without an exact version; allowed for the frameworks Horovod builds '
     "against or runs with: a pin with == (e.g. torch==2.13.0, tensorflow==2.15.1, tf-keras==2.18.0), or"
     " python_env_torch_version for torch"),
    ({"python_env_pip_packages": ["tensorflow==2.18.1", "tf-keras>=2.18"]},
     'python_env_pip_packages lists ["tf-keras>=2.18"] without an exact version'),
    ({"python_env_pip_packages": ["numpy==1.26.4", "TensorFlow[and-cuda]"]},
     'python_env_pip_packages lists ["TensorFlow[and-cuda]"] without an exact'),
    ({"python_env_training_packages": ["numpy", "--index-url=http://evil.invalid/simple"]},
     'python_env_training_packages lists ["--index-url=http://evil.invalid/simple"]; allowed: a package name with '
     "optional extras and version (numpy, numpy==2.2.6, numpy>=1.26,<3), or [] for none"),
    ({"python_env_training_packages": ["numpy; touch /tmp/pwned"]}, "python_env_training_packages lists"),
    # issue 45: each item is a line of pip's requirements file
    ({"python_env_pip_packages": ["numpy", "--index-url=http://evil.invalid/simple"]},
     'python_env_pip_packages lists ["--index-url=http://evil.invalid/simple"]; allowed: pip requirement specifiers'
     " (PEP 508: numpy, numpy>=1.26,<3, tensorflow==2.15.1, pkg[extra]; python_version<'3.12'), no options or paths"),
    ({"python_env_pip_packages": ["-r /etc/shadow"]}, 'python_env_pip_packages lists ["-r /etc/shadow"]; allowed: pip'),
    ({"python_env_pip_packages": ["numpy\n--trusted-host evil"]}, "python_env_pip_packages lists [\"numpy\\n"),
    ({"python_env_pip_packages": ["./my.whl"]}, 'python_env_pip_packages lists ["./my.whl"]; allowed: pip'),
])
def test_bad_input_is_refused_naming_the_variable(variables, message):
    _, failed = decide(DEBIAN_AMD64, **variables)
    assert len(failed) == 1 and failed[0].startswith(message), failed


@pytest.mark.parametrize("variables", [{"python_env_torch_version": "2.13"}, {"python_env_pip_packages": ["torch==2.13.0"]},
                                       {"python_env_training_packages": ["numpy>=1.26,<3", "scipy[all]"]},
                                       {"python_env_conda_version": "py311_24.9.2-0", "python_env_cuda_version": "12.4"},
                                       {"python_env_pip_packages": ["numpy>=1.26,<3", "tensorflow==2.15.1",
                                                                    "pkg[extra]==1.0; python_version<'3.12'"]}])
def test_good_input_passes(variables):
    assert decide(DEBIAN_AMD64, **variables)[1] == []


def test_fitting_wheels():
    names = ["b-1-py3-none-any.whl", "torch-2-cp311-cp311-manylinux_2_28_x86_64.whl",
             "torch-2-cp311-cp311-manylinux_2_28_aarch64.whl", "torch-2-cp311-cp311-macosx_11_0_arm64.whl",
             "numpy-2-cp311-cp311-macosx_11_0_universal2.whl", "a-1-cp311-cp311-win_amd64.whl"]
    assert python_env_wheels(names, "Linux", "x86_64") == [names[0], names[1]]
    assert python_env_wheels(names, "Linux", "aarch64") == [names[0], names[2]]
    assert python_env_wheels(names, "Darwin", "aarch64") == [names[0], names[4], names[3]]
    assert python_env_wheels(names, "Linux", "armv7l") == [names[0]]


def conda_deps(variant="cpu", cuda="", arch="x86_64", commented=False, **extra):
    """python_env_conda_dependencies over what decide-conda.yml gives it (the role's defaults and tables)."""
    given = {"variant": variant, "cuda_version": cuda, "arch": arch, "python_version": "3.11", "packages": [],
             "nvcc_metapackages": TABLES_SRC["__python_env_nvcc_metapackage"], **extra}
    return python_env_conda_dependencies(given, commented=commented)


BASE = ["python=3.11", "pip", "cmake>=3.13,<4", "mpi4py"]


def test_conda_cpu_host_gets_no_cuda_packages():
    assert conda_deps() == BASE
    assert conda_deps(arch="aarch64") == BASE


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("cuda", ["13.0", "12.0", "12.4", "12.9"])
def test_conda_cuda_12_and_later_get_cuda_version_and_cuda_nvcc(cuda, arch):
    assert conda_deps("cuda", cuda, arch) == BASE + [f"cuda-version={cuda}", f"cuda-nvcc={cuda}", "cudnn", "nccl",
                                                    "cxx-compiler"]


@pytest.mark.parametrize(("arch", "nvcc"), [("x86_64", "nvcc_linux-64"), ("aarch64", "nvcc_linux-aarch64"),
                                            ("ppc64le", "nvcc_linux-64")])  # an arch the table lacks: as before
def test_conda_cuda_11_keeps_the_nvcc_wrapper_of_the_system_toolkit(arch, nvcc):
    assert conda_deps("cuda", "11.8", arch) == BASE + ["cudnn", "nccl", "cxx-compiler", f"{nvcc}=11.8"]


def test_conda_cuda_without_a_version_gets_the_wrapper_unpinned():
    # decide-conda.yml refuses this before rendering (python_env_cuda_version is needed); the filter stays total.
    assert conda_deps("cuda", "")[-1] == "nvcc_linux-64="


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize(("variant", "cuda"), [("cpu", ""), ("cuda", "13.0"), ("cuda", "12.0"), ("cuda", "12.4"),
                                               ("cuda", "12.9"), ("cuda", "11.8")])
def test_conda_dependencies_name_only_what_conda_forge_has(variant, cuda, arch):
    assert conda_forge_errors(conda_deps(variant, cuda, arch), arch) == []


def test_conda_cuda_version_conda_forge_lacks_is_not_refused_at_plan_time():
    # conda-forge has no cuda-version=12.7 (tests/fixtures/conda_forge/cuda_packages.yml). The recorded excerpt is
    # test data, not shipped, so the plan does not refuse it: conda's solve on the host does.
    deps = conda_deps("cuda", "12.7")
    assert "cuda-version=12.7" in deps
    assert [e for e in conda_forge_errors(deps) if e.startswith("cuda-version=12.7: conda-forge has no cuda-version")]


def test_conda_extra_packages_come_last_as_given_and_python_is_pinned():
    deps = conda_deps("cuda", "12.4", packages=["numpy=1.26", "scipy"], python_version="3.12")
    assert deps[0] == "python=3.12" and deps[-2:] == ["numpy=1.26", "scipy"]


@pytest.mark.parametrize(("variant", "cuda"), [("cpu", ""), ("cuda", "13.0"), ("cuda", "11.8")])
def test_conda_commented_form_carries_the_same_specs_and_the_comment_lines(variant, cuda):
    commented = conda_deps(variant, cuda, commented=True)
    assert [d["spec"] for d in commented] == conda_deps(variant, cuda)
    comments = {d["spec"]: d["comment"] for d in commented if d["comment"]}
    assert comments["cmake>=3.13,<4"].startswith("CMake so that Horovod builds its Gloo controller")
    assert comments["mpi4py"].startswith("mpi4py brings an MPI")
    if cuda == "13.0":
        assert comments["cuda-version=13.0"].startswith("CUDA host: conda-forge's CUDA 13.0 (")
    if cuda == "11.8":
        assert comments["cudnn"].startswith("CUDA <= 11 (Debian 12's 11.8)")
    assert len(comments) == (2 if variant == "cpu" else 3)


def test_a_filled_sets_marker_holds_the_wheels_pip_named_not_an_earlier_fills_older_release():
    """The set's folder kept filelock 4.3.1 from an earlier fill; PyPI has 4.3.2 since, which this download saved
    beside it. Both in the marker, pip's hash-checking install gets two filelocks and fails (CI, 2026-12-03)."""
    old, new, torch = ("filelock-4.3.1-py3-none-any.whl", "filelock-4.3.2-py3-none-any.whl",
                       "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    found = [{"path": f"/wh/set/{name}", "checksum": c * 64} for name, c in ((old, "a"), (new, "b"), (torch, "c"))]
    output = ("Looking in indexes: https://pypi.org/simple\nCollecting torch==2.13.0+cpu\n"
              f"  File was already downloaded /wh/set/{torch}\nCollecting filelock (from torch==2.13.0+cpu)\n"
              f"  Downloading {new} (16 kB)\nSaved ./set/{new}\nSuccessfully downloaded torch filelock\n")
    marker = python_env_wheel_manifest("torch==2.13.0+cpu", found, output)
    assert marker == f"torch==2.13.0+cpu\n{'b' * 64}  {new}\n{'c' * 64}  {torch}\n"
    assert python_env_hashed_wheels(marker, [old, new, torch], "/w") == (
        f"/w/{new} --hash=sha256:{'b' * 64}\n/w/{torch} --hash=sha256:{'c' * 64}\n")
    # an output that names no wheel (a pip.conf with quiet = 1) leaves the folder's wheels, as before
    assert python_env_wheel_manifest("torch==2.13.0+cpu", found, "").count(".whl") == 3


def test_a_filled_sets_marker_records_each_wheels_sha256_and_a_changed_wheel_is_named():
    torch, numpy = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "numpy-2.2.6-cp311-cp311-linux_x86_64.whl"
    found = [{"path": f"/wh/set/{numpy}", "checksum": "b" * 64}, {"path": f"/wh/set/{torch}", "checksum": "a" * 64}]
    marker = python_env_wheel_manifest("torch==2.13.0+cpu numpy", found)
    assert marker == f"torch==2.13.0+cpu numpy\n{'b' * 64}  {numpy}\n{'a' * 64}  {torch}\n"
    assert python_env_changed_wheels(marker.rstrip(), found, [torch, numpy]) == []
    truncated = [found[0], {"path": f"/wh/set/{torch}", "checksum": "c" * 64}]
    assert python_env_changed_wheels(marker, truncated, [torch, numpy]) == [torch]
    assert python_env_changed_wheels(marker, found[:1], [torch, numpy]) == [torch]  # gone since
    # only this host's wheels count; a wheel the marker does not list (added by hand) and an old marker without
    # sums have nothing to be held to
    assert python_env_changed_wheels(marker, truncated, [numpy]) == []
    assert python_env_changed_wheels("torch==2.13.0+cpu numpy\n", truncated, [torch]) == []
    # a line of another form is no record (a name with a path, a short digest)
    assert python_env_changed_wheels(f"r\n{'a' * 64}  ../{torch}\n{'a' * 63}  {torch}\n", truncated, [torch]) == []
