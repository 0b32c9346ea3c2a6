"""horovod_nccl: a compile-only GPU build host. Horovod 0.28.1 built against CUDA torch 2.14.1 with
HOROVOD_GPU_OPERATIONS=NCCL; no GPU here, so nothing runs on a device: the build is what is checked."""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "plugins" / "module_utils"))
from horovod_check_build import parse_check_build  # noqa: E402

VENV = "/opt/horovod/venv"


def test_torch_is_the_cuda_13_build(host):
    out = host.check_output(f"{VENV}/bin/python -c 'import torch; print(torch.__version__, torch.version.cuda)'")
    assert out.split() == ["2.14.1+cu130", "13.0"]


def test_check_build_shows_nccl_gloo_mpi(host):
    got = parse_check_build(host.check_output(f"{VENV}/bin/horovodrun --check-build"))
    assert got["version"] == "0.28.1"
    assert "pytorch" in got["frameworks"]
    assert set(got["controllers"]) == {"gloo", "mpi"}
    assert {"nccl", "gloo", "mpi"} <= set(got["tensor_operations"])


def test_torch_extension_links_nccl_and_cudart(host):
    lib = host.check_output(f"ls {VENV}/lib/python3.11/site-packages/horovod/torch/mpi_lib_v2*.so")
    needed = host.check_output(f"objdump -p {lib} | grep NEEDED")
    assert "libnccl.so" in needed
    assert "libcudart.so" in needed


def test_built_for_the_two_architectures_asked(host):
    lib = host.check_output(f"ls {VENV}/lib/python3.11/site-packages/horovod/torch/mpi_lib_v2*.so")
    archs = host.run(f"{VENV}/bin/python -c \"import sys; print(open(sys.argv[1], 'rb').read().count(b'sm_80'),"
                     f" open(sys.argv[1], 'rb').read().count(b'sm_90'))\" {lib}").stdout.split()
    assert [int(n) > 0 for n in archs] == [True, True], archs


def test_marker_key_names_cuda_and_nccl(host):
    marker = json.loads(host.file(f"{VENV}/.horovod-platform-key.json").content_string)
    key = marker["platform_key"]
    assert key.startswith("hvd0.28.1-debian12-x86_64-py3.11-pytorch2.14.1"), key
    assert "-cuda13.0-sm80_90-gpuopsnccl-" in key, key


def test_no_build_leftovers(host):
    assert not host.file("/opt/horovod/build").exists
