"""roles/cuda_toolkit/files/assemble_cuda_home.py on fake wheel trees (CUDA 13 and 12 layouts)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "roles" / "cuda_toolkit" / "files" / "assemble_cuda_home.py"


def touch(path: Path, text: str = "x", mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def run(venv: Path, dest: Path) -> dict:
    out = subprocess.run([sys.executable, str(SCRIPT), str(venv), str(dest)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def cu13(venv: Path) -> None:
    root = venv / "lib" / "python3.11" / "site-packages" / "nvidia" / "cu13"
    for name in ("nvcc", "ptxas", "fatbinary", "nvlink", "cudafe++"):
        touch(root / "bin" / name, "#!/bin/sh\n", 0o755)
    touch(root / "bin" / "nvcc.profile")
    touch(root / "bin" / "crt" / "link.stub")
    touch(root / "include" / "cuda_runtime.h")
    touch(root / "include" / "crt" / "host_config.h")
    touch(root / "include" / "cccl" / "cuda" / "std" / "version")
    touch(root / "nvvm" / "bin" / "cicc", "", 0o755)
    touch(root / "lib" / "libcudart.so.13")
    touch(root / "lib" / "libnvvm.so.4")


def cu12(venv: Path) -> None:
    root = venv / "lib" / "python3.11" / "site-packages" / "nvidia"
    touch(root / "cuda_nvcc" / "bin" / "nvcc", "#!/bin/sh\n", 0o755)
    touch(root / "cuda_nvcc" / "include" / "crt" / "host_config.h")
    touch(root / "cuda_nvcc" / "nvvm" / "bin" / "cicc", "", 0o755)
    touch(root / "cuda_runtime" / "include" / "cuda_runtime.h")
    touch(root / "cuda_runtime" / "lib" / "libcudart.so.12")
    touch(root / "cuda_cccl" / "include" / "cub" / "cub.cuh")
    touch(root / "nccl" / "include" / "nccl.h")  # not part of the CUDA home


@pytest.mark.parametrize("layout,cudart", [(cu13, "libcudart.so.13"), (cu12, "libcudart.so.12")])
def test_tree_nvcc_accepts(tmp_path, layout, cudart):
    venv, dest = tmp_path / "venv", tmp_path / "cuda"
    layout(venv)
    assert run(venv, dest) == {"changed": True, "cuda_home": str(dest)}
    assert (dest / "bin").is_dir() and not (dest / "bin").is_symlink()
    nvcc = dest / "bin" / "nvcc"
    assert not nvcc.is_symlink() and os.access(nvcc, os.X_OK)  # a hard link: nvcc.profile next to it
    assert (dest / "include" / "cuda_runtime.h").exists()
    assert (dest / "include" / "crt" / "host_config.h").exists()
    assert (dest / "nvvm" / "bin" / "cicc").exists()
    assert os.readlink(dest / "lib64" / "libcudart.so") == cudart
    assert (dest / "lib64" / cudart).exists()
    assert os.readlink(dest / "lib") == "lib64"
    assert not (dest / "include" / "nccl.h").exists()
    # idempotent
    assert run(venv, dest)["changed"] is False


def test_missing_runtime_wheel_is_named(tmp_path):
    venv = tmp_path / "venv"
    cu13(venv)
    (venv / "lib" / "python3.11" / "site-packages" / "nvidia" / "cu13" / "lib" / "libcudart.so.13").unlink()
    proc = subprocess.run([sys.executable, str(SCRIPT), str(venv), str(tmp_path / "cuda")],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "nvidia-cuda-runtime" in proc.stderr
