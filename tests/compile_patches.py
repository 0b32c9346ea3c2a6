"""Compile the translation units that the compatibility matrix's source patches fix, before and after them.

Every patch of roles/horovod/vars/compat.yml (`patches`) is applied as the role applies it (ansible.builtin.replace:
Python `re`, MULTILINE) to a copy of the unpacked sdist, and every translation unit of horovod/common (which
include common.h, group_table.h and, through wire/message_generated.h, the vendored flatbuffers) is compiled
with `-fsyntax-only`, from the sdist as it is and from the patched copy:

    python tests/compile_patches.py horovod-0.28.1.tar.gz [--cxx g++] [--std c++17 ...]

Prints one JSON object: the compiler's first line, then per standard and unit the exit status and first
error line of each side. A unit that needs what this compile does not give (CUDA, NVTX) fails on both sides.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
INCLUDES = ["third_party/flatbuffers/include", "third_party/eigen", "third_party/lbfgs/include",
            "third_party/HTTPRequest/include"]


def patches() -> dict:
    return yaml.safe_load((ROOT / "roles/horovod/vars/compat.yml").read_text())["horovod_compat_matrix"]["patches"]


def apply(tree: Path, edits: list) -> None:
    for edit in edits:
        path = tree / edit["file"]
        text, count = re.subn(edit["regexp"], edit["replace"], path.read_text(), flags=re.MULTILINE)
        if count == 0:
            raise SystemExit(f"{edit['file']}: the patch's regexp matches nothing")
        path.write_text(text)


def compile_unit(tree: Path, unit: str, cxx: str, std: str) -> dict:
    boost = sorted(str(p) for p in (tree / "third_party/boost").glob("*/include"))
    argv = [cxx, f"-std={std}", "-fsyntax-only", *(f"-I{tree / i}" for i in INCLUDES),
            *(f"-I{b}" for b in boost), str(tree / unit)]
    done = subprocess.run(argv, capture_output=True, text=True)
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    return {"exit": done.returncode, "first_error": errors[0].replace(str(tree) + "/", "") if errors else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdist", type=Path)
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--std", nargs="+", default=["c++17"])
    parser.add_argument("--units", nargs="+", help="only these units (paths in the sdist), not all of horovod/common")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(args.sdist) as archive:
            # the sdist's digest was checked; Debian 12's Python 3.11.2 has no extraction filters (3.11.4+)
            archive.extractall(tmp, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        plain = next(Path(tmp).iterdir())
        patched = Path(tmp) / "patched"
        shutil.copytree(plain, patched)
        for edits in patches().values():
            apply(patched, edits)
        version = subprocess.run([args.cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        units = args.units or sorted(str(p.relative_to(plain)) for p in (plain / "horovod/common").glob("*.cc"))
        jobs = [(std, unit, side, tree) for std in args.std for unit in units
                for side, tree in (("unpatched", plain), ("patched", patched))]
        with ThreadPoolExecutor() as pool:
            done = list(pool.map(lambda job: compile_unit(job[3], job[1], args.cxx, job[0]), jobs))
        result = {"compiler": version, "units": {}}
        for (std, unit, side, _), outcome in zip(jobs, done):
            result["units"].setdefault(f"{unit} {std}", {})[side] = outcome
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
