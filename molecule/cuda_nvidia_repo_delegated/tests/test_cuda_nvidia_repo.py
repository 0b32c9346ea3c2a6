"""nvidia_repo on a real Ubuntu GPU host: repository files, pinned packages, GPU compile and run."""

import json

SAXPY_CU = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int main() {
  const int n = 1 << 20; float *x, *y;
  cudaMallocManaged(&x, n * sizeof(float)); cudaMallocManaged(&y, n * sizeof(float));
  for (int i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 2.0f; }
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("%s %.1f\n", cudaGetErrorName(err), y[n - 1]);
  return err == cudaSuccess && y[n - 1] == 4.0f ? 0 : 1;
}
"""

NCCL_C = r"""
#include <stdio.h>
#include <nccl.h>
int main(void) { int v = 0; ncclGetVersion(&v); printf("%d\n", v); return 0; }
"""


def facts(host):
    return json.loads(host.file("/root/hvc-gpu-facts.json").content_string)


def test_repository_files(host):
    plan = facts(host)["cuda_toolkit_plan"]
    sources = host.file("/etc/apt/sources.list.d/cuda-nvidia.list").content_string
    assert "signed-by=/usr/share/keyrings/cuda-archive-keyring.asc" in sources
    assert "/compute/cuda/repos/%s/" % plan["repo_path"] in sources
    assert "Pin-Priority: 600" in host.file("/etc/apt/preferences.d/cuda-repository-pin-600").content_string


def test_pinned_packages(host):
    f = facts(host)
    version = f["cuda_toolkit_version"]
    assert host.package("cuda-toolkit-" + version.replace(".", "-")).is_installed
    assert host.package("libnccl2").version == f["nccl_plan"]["version"]
    assert host.package("libnccl-dev").version == f["nccl_plan"]["version"]


def test_saxpy_runs_on_the_gpu(host):
    f = facts(host)
    host.run_test("mkdir -p /tmp/cutest")
    assert host.run("cat > /tmp/cutest/saxpy.cu <<'EOF'\n%s\nEOF" % SAXPY_CU).rc == 0
    assert host.run("%s -o /tmp/cutest/saxpy /tmp/cutest/saxpy.cu" % f["cuda_toolkit_nvcc"]).rc == 0
    run = host.run("/tmp/cutest/saxpy")
    assert run.rc == 0 and run.stdout.strip() == "cudaSuccess 4.0", run.stdout + run.stderr


def test_nccl_links(host):
    f = facts(host)
    assert host.run("cat > /tmp/cutest/nccl.c <<'EOF'\n%s\nEOF" % NCCL_C).rc == 0
    build = host.run("gcc -I%s -I%s/include -o /tmp/cutest/ncclv /tmp/cutest/nccl.c -L%s -lnccl"
                     % (f["nccl_include_dir"], f["cuda_toolkit_home"], f["nccl_lib_dir"]))
    assert build.rc == 0, build.stderr
    major, minor, patch = (int(p) for p in f["nccl_version"].split("."))
    assert host.check_output("/tmp/cutest/ncclv").strip() == str(major * 10000 + minor * 100 + patch)
