"""The cuda_toolkit and nccl pip method for real (run in the horovod_nccl scenario): nvcc from the wheels compiles and links, NCCL header and library are found."""

import json

HELLO_CU = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void fill(int *x) { x[threadIdx.x] = threadIdx.x; }
int main() {
  int n = -1;
  cudaError_t err = cudaGetDeviceCount(&n);
  std::printf("nvcc %d.%d runtime linked: %s\n", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__,
              cudaGetErrorName(err));
  return 0;
}
"""

NCCL_C = r"""
#include <stdio.h>
#include <nccl.h>
int main(void) {
  int v = 0;
  ncclResult_t r = ncclGetVersion(&v);
  printf("%d %d %d.%d.%d\n", (int)r, v, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  return r == ncclSuccess ? 0 : 1;
}
"""


def facts(host):
    return json.loads(host.file("/opt/hvc/facts.json").content_string)


def test_plan_is_pip_install(host):
    plan = facts(host)["cuda_toolkit_plan"]
    assert plan["action"] == "install"
    assert plan["method"] == "pip"
    assert plan["version"] == "13.0"
    assert "compile-only build host" in plan["reason"]


def test_cuda_home_layout(host):
    home = facts(host)["cuda_toolkit_home"]
    assert home == "/opt/hvc/cuda-13.0/cuda"
    assert host.file(home + "/bin").is_directory and not host.file(home + "/bin").is_symlink
    for path in ("bin/nvcc", "bin/ptxas", "bin/fatbinary", "nvvm/bin/cicc", "include/cuda_runtime.h",
                 "include/crt/host_config.h", "include/cccl/cuda/std/version", "lib64/libcudart.so"):
        assert host.file(home + "/" + path).exists, path


def test_nvcc_version_matches(host):
    out = host.check_output("/opt/hvc/cuda-13.0/cuda/bin/nvcc --version")
    assert "release 13.0," in out
    assert facts(host)["cuda_toolkit_version"] == "13.0"


def test_nvcc_compiles_and_links_cu_program(host):
    home = facts(host)["cuda_toolkit_home"]
    host.run_test("mkdir -p /tmp/cutest")
    cmd = host.run("cat > /tmp/cutest/hello.cu <<'EOF'\n%s\nEOF" % HELLO_CU)
    assert cmd.rc == 0
    # A clean environment: nothing but the toolkit's own tree (no CUDA on PATH in the image).
    build = host.run("env -i PATH=/usr/bin:/bin %s/bin/nvcc -arch=sm_80 -o /tmp/cutest/hello /tmp/cutest/hello.cu"
                     % home)
    assert build.rc == 0, build.stderr
    run = host.run("LD_LIBRARY_PATH=%s/lib64 /tmp/cutest/hello" % home)
    assert run.rc == 0, run.stderr
    # No GPU and no driver here: the runtime is linked and reports that honestly.
    assert "nvcc 13.0 runtime linked: cudaError" in run.stdout


def test_nccl_header_and_library_found(host):
    f = facts(host)
    assert f["nccl_link"] == "SHARED"
    assert f["nccl_home"] == "/opt/hvc/nccl-13.0/home"
    assert host.file(f["nccl_lib_dir"] + "/libnccl.so").is_symlink
    assert host.file(f["nccl_lib_dir"] + "/libnccl.so").linked_to.endswith("libnccl.so.2")
    host.run_test("mkdir -p /tmp/cutest")
    assert host.run("cat > /tmp/cutest/nccl.c <<'EOF'\n%s\nEOF" % NCCL_C).rc == 0
    # nccl.h includes cuda_runtime.h: the toolkit's include folder comes along, as in Horovod's build.
    build = host.run("gcc -I%s -I%s/include -o /tmp/cutest/ncclv /tmp/cutest/nccl.c -L%s -lnccl"
                     % (f["nccl_include_dir"], f["cuda_toolkit_home"], f["nccl_lib_dir"]))
    assert build.rc == 0, build.stderr
    run = host.run("LD_LIBRARY_PATH=%s /tmp/cutest/ncclv" % f["nccl_lib_dir"])
    assert run.rc == 0, run.stderr
    rc, code, header = run.stdout.split()
    assert header == f["nccl_version"] == "2.27.7"
    assert code == "22707"


def test_one_ca_copy_on_the_host(host):
    """python_env, cuda_toolkit (pip), nccl (pip) and horovod all download through the CA bundle
    (cluster_ca_bundle): the host holds one copy of it, at cluster_ca_dest, and pip's --cert names it."""
    copies = host.check_output("find /opt /root /var/tmp -name 'ca-bundle*' -type f").split()
    assert copies == ["/opt/horovod/ca-bundle.pem"]
    controller = open("/etc/ssl/certs/ca-certificates.crt").read()
    assert host.file("/opt/horovod/ca-bundle.pem").content_string == controller
