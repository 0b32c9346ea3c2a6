"""What conda-forge has, as recorded in tests/fixtures/conda_forge/cuda_packages.yml (from the feedstocks' history;
its header names the commits): `conda_forge_errors(deps, arch)` says why conda could not solve a list of conda
dependencies from it. Used on environment.yml as rendered (tests/unit/test_python_env_templates.py) and on the
list python_env_conda_dependencies decides (tests/unit/test_python_env_plan.py).

Test data, not shipped: the role does not refuse a CUDA version this excerpt lacks (conda-forge adds releases).
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml
from packaging.version import Version

CONDA_FORGE = yaml.safe_load((Path(__file__).resolve().parent / "fixtures" / "conda_forge" / "cuda_packages.yml")
                             .read_text("utf-8"))


def _version_matches(version: str, spec: str) -> bool:
    """conda's match of one version: clauses joined by ',' of X.* / =X (X or X.anything), >=, >, <=, <, ==."""
    for clause in spec.split(","):
        op, ref = re.fullmatch(r"(>=|<=|==|>|<|=?)([0-9][0-9A-Za-z.]*?)(\.\*)?", clause).group(1, 2)
        if op in ("", "="):
            if not (version == ref or version.startswith(ref + ".")):
                return False
        elif not {">=": Version(version) >= Version(ref), "<=": Version(version) <= Version(ref),
                  ">": Version(version) > Version(ref), "<": Version(version) < Version(ref),
                  "==": Version(version) == Version(ref)}[op]:
            return False
    return True


def conda_forge_errors(deps: list[str], arch: str = "x86_64") -> list[str]:
    """Why conda could not solve these dependencies from conda-forge (the recorded excerpt); [] = each exists."""
    subdir, errors = CONDA_FORGE["platforms"][arch], []
    pinned = [d.split("=", 1)[1] for d in deps if d.startswith("cuda-version=")]
    for dep in deps:
        name = re.match(r"[A-Za-z0-9_.-]+", dep).group(0)
        spec, package = dep[len(name):], CONDA_FORGE["packages"].get(name)
        if package is None:
            errors.append(f"{dep}: conda-forge has no package {name}")
            continue
        if not {subdir, "noarch"} & set(package.get("subdirs", [subdir])):
            errors.append(f"{dep}: {name} has no {subdir} build")
            continue
        found = {v: tie for v, tie in package["versions"].items() if not spec or _version_matches(v, spec)}
        if not found:
            errors.append(f"{dep}: conda-forge has no {name} matching {spec} ({', '.join(package['versions'])})")
        for cuda in pinned:
            if any(tie for tie in found.values()) and not any(
                    any(_version_matches(cuda, r) for r in tie) for tie in found.values()):
                errors.append(f"{dep}: no {name} build for cuda-version {cuda}")
    return errors
