#!/usr/bin/env python3
"""Assemble a CUDA_HOME tree nvcc accepts from the nvidia-* CUDA wheels of a venv.

Usage: assemble_cuda_home.py <venv> <dest>

<dest>/bin      real folder; the binaries are hard links (nvcc finds its siblings and
                nvcc.profile relative to its own path, so bin/ must not be a symlink)
<dest>/include  real folder of symlinks to every component's headers (cccl included)
<dest>/nvvm     symlink to the component's nvvm/ (cicc, libdevice)
<dest>/lib64    real folder of symlinks to the libraries, plus libcudart.so -> libcudart.so.N
<dest>/lib      symlink to lib64
Idempotent: prints a JSON line {"changed": bool, "cuda_home": dest}.
"""

import glob
import json
import os
import shutil
import sys


def components(venv):
    roots = sorted(glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "nvidia")))
    if not roots:
        raise SystemExit("no site-packages/nvidia in %s: are the CUDA wheels installed?" % venv)
    nvidia = roots[0]
    # CUDA 13: one shared tree nvidia/cu13; CUDA 12: nvidia/cuda_nvcc, nvidia/cuda_runtime, ...
    comps = [p for p in sorted(glob.glob(os.path.join(nvidia, "*"))) if os.path.isdir(p)
             and (os.path.basename(p).startswith("cu") or os.path.basename(p) == "nvvm")]
    return nvidia, comps


class Tree:
    def __init__(self):
        self.changed = False

    def mkdir(self, path):
        if os.path.islink(path):
            os.unlink(path)
        if not os.path.isdir(path):
            os.makedirs(path)
            self.changed = True

    def symlink(self, target, path):
        if os.path.islink(path) and os.readlink(path) == target:
            return
        if os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
        os.symlink(target, path)
        self.changed = True

    def hardlink(self, source, path):
        if os.path.exists(path) and os.path.samefile(source, path):
            return
        if os.path.lexists(path):
            os.unlink(path)
        try:
            os.link(source, path)
        except OSError:
            shutil.copy2(source, path)
        self.changed = True


def main():
    venv, dest = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    _, comps = components(venv)
    tree = Tree()
    tree.mkdir(dest)
    for sub in ("bin", "include", "lib64"):
        tree.mkdir(os.path.join(dest, sub))
    tree.symlink("lib64", os.path.join(dest, "lib"))
    for comp in comps:
        bindir = os.path.join(comp, "bin")
        if os.path.isdir(bindir):
            for name in sorted(os.listdir(bindir)):
                src = os.path.join(bindir, name)
                if os.path.isdir(src):
                    tree.symlink(src, os.path.join(dest, "bin", name))
                else:
                    tree.hardlink(src, os.path.join(dest, "bin", name))
        incdir = os.path.join(comp, "include")
        if os.path.isdir(incdir):
            for name in sorted(os.listdir(incdir)):
                tree.symlink(os.path.join(incdir, name), os.path.join(dest, "include", name))
        nvvm = os.path.join(comp, "nvvm")
        if os.path.isdir(nvvm):
            tree.symlink(nvvm, os.path.join(dest, "nvvm"))
        for libname in ("lib", "lib64"):
            libdir = os.path.join(comp, libname)
            if os.path.isdir(libdir) and not os.path.islink(libdir):
                for name in sorted(os.listdir(libdir)):
                    tree.symlink(os.path.join(libdir, name), os.path.join(dest, "lib64", name))
    cudart = sorted(glob.glob(os.path.join(dest, "lib64", "libcudart.so.*")))
    if not cudart:
        raise SystemExit("libcudart.so.N not found: is the nvidia-cuda-runtime wheel installed?")
    tree.symlink(os.path.basename(cudart[0]), os.path.join(dest, "lib64", "libcudart.so"))
    if not os.access(os.path.join(dest, "bin", "nvcc"), os.X_OK):
        raise SystemExit("bin/nvcc missing: is the nvidia-cuda-nvcc wheel installed?")
    print(json.dumps({"changed": tree.changed, "cuda_home": dest}))


if __name__ == "__main__":
    main()
