"""horovod_build_env / horovod_platform_key (plugins/filter/horovod_build.py)."""
import pytest

from horovod_build import HorovodFilterError, horovod_build_env, horovod_platform_key

CPU = {"os": "debian12", "arch": "x86_64", "python": "3.11.2", "cores": 2,
       "frameworks": {"pytorch": "2.13.0+cpu"}, "cuda": None, "nccl": None,
       "mpi_version": "4.1.4", "horovod": "0.28.1", "gpu_operations": "none"}
GPU = dict(CPU, frameworks={"pytorch": "2.14.1+cu130"}, cuda={"version": "13.0.88", "home": "/opt/cuda"},
           nccl={"home": "/opt/nccl", "link": "shared"}, gpu_compute_caps=["8.6", "9.0", "8.6"],
           gpu_operations="NCCL", cores=16)


def test_cpu_defaults():
    env = horovod_build_env(CPU, {"frameworks": ["pytorch"], "controllers": ["mpi", "gloo"]})
    assert env["HOROVOD_WITH_PYTORCH"] == "1"
    assert env["HOROVOD_WITHOUT_TENSORFLOW"] == "1" and env["HOROVOD_WITHOUT_MXNET"] == "1"
    assert env["HOROVOD_WITH_MPI"] == "1" and env["HOROVOD_WITH_GLOO"] == "1"
    assert env["MAKEFLAGS"] == "-j2"
    assert not any(k.startswith(("HOROVOD_GPU", "HOROVOD_NCCL", "HOROVOD_CUDA")) for k in env)


def test_gpu_host_gets_nccl():
    env = horovod_build_env(GPU, {"frameworks": ["pytorch"], "controllers": ["gloo"], "cmake": "/usr/bin/cmake"})
    assert env["HOROVOD_GPU_OPERATIONS"] == "NCCL"
    assert env["HOROVOD_CUDA_HOME"] == "/opt/cuda"
    assert env["CUDA_HOME"] == "/opt/cuda"  # torch.utils.cpp_extension finds the toolkit by it
    assert env["HOROVOD_NCCL_HOME"] == "/opt/nccl"
    assert env["HOROVOD_NCCL_LINK"] == "SHARED"
    assert env["HOROVOD_BUILD_CUDA_CC_LIST"] == "86,90"
    assert env["HOROVOD_WITHOUT_MPI"] == "1"
    assert env["HOROVOD_CMAKE"] == "/usr/bin/cmake"
    assert env["MAKEFLAGS"] == "-j16"


def test_cc_list_variable_wins_over_gpus():
    env = horovod_build_env(GPU, {"cuda_cc_list": "75, sm_80", "make_jobs": 3})
    assert env["HOROVOD_BUILD_CUDA_CC_LIST"] == "75,80"
    assert env["MAKEFLAGS"] == "-j3"


def test_user_overrides_win_and_none_removes():
    env = horovod_build_env(GPU, {"env": {"HOROVOD_GPU_OPERATIONS": "MPI", "MAKEFLAGS": "-j1",
                                          "HOROVOD_BUILD_CUDA_CC_LIST": None}})
    assert env["HOROVOD_GPU_OPERATIONS"] == "MPI" and env["MAKEFLAGS"] == "-j1"
    assert "HOROVOD_BUILD_CUDA_CC_LIST" not in env


def test_gpu_ops_none_on_cuda_host():
    env = horovod_build_env(GPU, {"gpu_operations": "none"})
    assert "HOROVOD_GPU_OPERATIONS" not in env


def test_cmake_policy():
    env = horovod_build_env(CPU, {"cmake_policy_version_minimum": "3.5"})
    assert env["CMAKE_POLICY_VERSION_MINIMUM"] == "3.5"


@pytest.mark.parametrize("options, word", [
    ({"frameworks": ["jax"]}, "horovod_frameworks"),
    ({"controllers": ["ucx"]}, "horovod_controllers"),
    ({"controllers": []}, "horovod_controllers"),
    ({"gpu_operations": "nccl"}, "horovod_gpu_operations"),
    ({"gpu_operations": "NCCL"}, "needs CUDA"),
    ({"env": ["X=1"]}, "overrides"),
])
def test_bad_input_names_variable(options, word):
    with pytest.raises(HorovodFilterError, match=word):
        horovod_build_env(CPU, options)


def test_bad_cc():
    with pytest.raises(HorovodFilterError, match="compute capability"):
        horovod_build_env(GPU, {"cuda_cc_list": ["ampere"]})


def test_platform_key_stable_and_complete():
    key = horovod_platform_key(CPU)
    assert key == "hvd0.28.1-debian12-x86_64-py3.11-pytorch2.13.0_cpu-cpu-gpuopsnone-mpi4"
    assert horovod_platform_key(dict(CPU)) == key
    gkey = horovod_platform_key(GPU)
    assert "cuda13.0" in gkey and "gpuopsnccl" in gkey and "pytorch2.14.1_cu130" in gkey


def test_platform_key_names_the_compute_capabilities():
    """A wheel built for sm_80,sm_90 must not be installed where an sm_75 build is wanted."""
    ampere = horovod_platform_key(dict(GPU, cuda_cc_list="80,90"))
    turing = horovod_platform_key(dict(GPU, cuda_cc_list="75"))
    assert "-cuda13.0-sm80_90-gpuopsnccl-" in ampere
    assert ampere != turing
    assert horovod_platform_key(dict(CPU, cuda_cc_list="80")) == horovod_platform_key(CPU)


@pytest.mark.parametrize("change", [
    {"frameworks": {"pytorch": "2.14.1+cpu"}},   # torch pin change -> rebuild
    {"python": "3.10.12"}, {"arch": "aarch64"}, {"os": "ubuntu24.04"},
    {"mpi_version": "5.0.3"}, {"mpi_version": None}, {"horovod": "0.28.0"},
    {"cuda": {"version": "12.4"}, "gpu_operations": "NCCL"},
])
def test_platform_key_changes(change):
    assert horovod_platform_key(dict(CPU, **change)) != horovod_platform_key(CPU)


@pytest.mark.parametrize("change", [
    {"controllers": ["mpi"]},                        # no Gloo in the wheel
    {"cpu_flags": ["fpu", "sse2", "avx", "f16c"]},   # a CPU without FMA (Sandy Bridge)
    {"cpu_flags": ["fpu", "sse2"]},                  # nor AVX
    {"source_path": "/home/lab/horovod"},            # a folder's own code
    {"build_overrides": {"HOROVOD_WITHOUT_GLOO": "1"}},
    {"build_overrides": {"HOROVOD_BUILD_ARCH_FLAGS": "-mavx"}},
])
def test_platform_key_names_what_a_default_build_leaves_out(change):
    """Issue 45 item 5: each of these builds a different wheel, which the key of a default build must not name."""
    assert horovod_platform_key(dict(CPU, **change)) != horovod_platform_key(CPU)


def test_the_key_names_the_x86_flags_the_cpu_lacks():
    atom = horovod_platform_key(dict(CPU, cpu_flags=["fpu", "sse2", "sse4_2"]))
    assert atom.endswith("-mpi4-nof16c_avx_fma"), atom
    assert horovod_platform_key(dict(CPU, cpu_flags=["sse2", "avx", "fma"])).endswith("-nof16c")
    # aarch64 has none of them and builds none of them in: nothing to name
    assert horovod_platform_key(dict(CPU, arch="aarch64", cpu_flags=["fp", "asimd"])).endswith("-mpi4")


def test_the_build_compiles_in_the_flags_the_key_names():
    """Not what the builder's compiler finds (Horovod's CMake asks `gcc -march=native` unless
    HOROVOD_BUILD_ARCH_FLAGS is set): the flags of the key's CPUs."""
    full = horovod_build_env(dict(CPU, cpu_flags=["sse2", "fma", "f16c", "avx", "avx2"]))
    assert full["HOROVOD_BUILD_ARCH_FLAGS"] == "-mf16c -mavx -mfma"
    assert horovod_build_env(dict(CPU, cpu_flags=["sse2", "avx"]))["HOROVOD_BUILD_ARCH_FLAGS"] == "-mavx"
    for unknown in (dict(CPU), dict(CPU, arch="aarch64", cpu_flags=["fp", "asimd"])):
        assert "HOROVOD_BUILD_ARCH_FLAGS" not in horovod_build_env(unknown)
    override = horovod_build_env(dict(CPU, cpu_flags=["avx"]), {"env": {"HOROVOD_BUILD_ARCH_FLAGS": "-mavx2"}})
    assert override["HOROVOD_BUILD_ARCH_FLAGS"] == "-mavx2"


@pytest.mark.parametrize("same", [{"cores": 64}, {"python": "3.11.9"}, {"mpi_version": "4.1.6"},
                                  {"frameworks": {"pytorch": "2.13.0+cpu", "tensorflow": None}},
                                  {"controllers": ["gloo", "mpi"]}, {"cpu_flags": ["sse2", "avx", "fma", "f16c"]},
                                  {"build_overrides": {"MAKEFLAGS": "-j1"}}, {"source_path": ""}])
def test_platform_key_unchanged(same):
    assert horovod_platform_key(dict(CPU, **same)) == horovod_platform_key(CPU)


def test_platform_key_missing():
    with pytest.raises(HorovodFilterError, match="platform.arch"):
        horovod_platform_key({"os": "debian12", "python": "3.11"})


def test_planned_mpi_series_and_the_rollouts_mpirun_version_give_one_key():
    """plan knows the distro's Open MPI series ("4"), the rollout what mpirun reports ("4.1.6"): same key;
    without MPI the key says so."""
    planned = horovod_platform_key(dict(CPU, mpi_version="4"))
    assert planned == horovod_platform_key(dict(CPU, mpi_version="4.1.6")) and planned.endswith("-mpi4")
    assert horovod_platform_key(dict(CPU, mpi_version="5.0.7")).endswith("-mpi5")
    assert horovod_platform_key(dict(CPU, mpi_version=None)).endswith("-nompi")
