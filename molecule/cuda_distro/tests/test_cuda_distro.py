"""The distro method for real: Debian 12 non-free nvidia-cuda-toolkit 11.8 compiles a .cu file."""

import json

HELLO_CU = r"""
#include <cstdio>
__global__ void add(int *x) { x[threadIdx.x] += 1; }
int main() { std::printf("nvcc %d.%d\n", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__); return 0; }
"""


def facts(host):
    return json.loads(host.file("/root/hvc-gpu-facts.json").content_string)


def test_plan_and_component(host):
    f = facts(host)
    assert f["cuda_toolkit_plan"]["method"] == "distro"
    assert "contrib non-free" in host.file("/etc/apt/sources.list.d/cuda-distro.list").content_string
    assert host.package("nvidia-cuda-toolkit").is_installed
    assert host.package("nvidia-cuda-toolkit").version.startswith("11.8")
    assert host.package("nvidia-cuda-toolkit-gcc").is_installed
    assert f["nccl_plan"]["action"] == "skip" and not f["nccl_installed"]


def test_nvcc_is_11_8(host):
    out = host.check_output("%s --version" % facts(host)["cuda_toolkit_nvcc"])
    assert "release 11.8," in out


def test_profile_script(host):
    out = host.check_output("bash -lc 'echo $CUDA_HOME $CUDAHOSTCXX'")
    assert out.split() == ["/usr", "/usr/bin/cuda-g++"]
    assert facts(host)["cuda_toolkit_host_compiler"] == "/usr/bin/cuda-g++"


def test_nvcc_compiles_cu_file(host):
    host.run_test("mkdir -p /tmp/cutest")
    assert host.run("cat > /tmp/cutest/add.cu <<'EOF'\n%s\nEOF" % HELLO_CU).rc == 0
    # nvcc 11.8 needs GCC <= 11: the role publishes the host compiler to use (cuda-g++ -> g++-11)
    f = facts(host)
    build = host.run("%s -ccbin %s -o /tmp/cutest/add /tmp/cutest/add.cu"
                     % (f["cuda_toolkit_nvcc"], f["cuda_toolkit_host_compiler"]))
    assert build.rc == 0, build.stderr
    run = host.run("/tmp/cutest/add")
    assert run.rc == 0 and run.stdout.strip() == "nvcc 11.8", run.stdout + run.stderr
