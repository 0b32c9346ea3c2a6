"""roles/python_env/files/pip_for_platform.py: pip's own dependency listing (what its resolver follows) on
torch 2.5.1's real METADATA (tests/fixtures/wheel-metadata), with the markers of the target platform."""
from __future__ import annotations

import importlib.util

import pytest
from pip._internal.metadata import get_metadata_distribution
from pip._internal.utils.temp_dir import global_tempdir_manager
from pip._vendor.packaging import markers

from conftest import FIXTURES, REPO

_SPEC = importlib.util.spec_from_file_location("pip_for_platform", REPO / "roles/python_env/files/pip_for_platform.py")
pip_for_platform = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(pip_for_platform)
WHEEL = "torch-2.5.1-cp311-cp311-manylinux2014_aarch64"


def dependencies(system: str, machine: str, python: str) -> dict[str, str]:
    """{name: name + version specifier} of what torch 2.5.1 requires, as pip's resolver sees it for that platform."""
    metadata = (FIXTURES / "wheel-metadata" / f"{WHEEL}.METADATA").read_bytes()
    with global_tempdir_manager(), pip_for_platform.target_markers(system, machine, python):
        dist = get_metadata_distribution(metadata, f"{WHEEL}.whl", "torch")
        return {req.name: req.name + str(req.specifier) for req in dist.iter_dependencies()}


def test_aarch64_gets_no_nvidia_wheels_and_no_triton():
    deps = dependencies("Linux", "aarch64", "3.11")
    assert set(deps) == {"filelock", "typing-extensions", "networkx", "jinja2", "fsspec", "sympy"}
    assert deps["sympy"] == "sympy==1.13.1"


def test_x86_64_gets_the_cuda_wheels_and_triton():
    deps = dependencies("Linux", "x86_64", "3.11")
    nvidia = {name for name in deps if name.startswith("nvidia-")}
    assert len(nvidia) == 12 and "nvidia-cudnn-cu12" in nvidia and deps["triton"].startswith("triton==3.1.0")


def test_python_version_is_the_targets():
    assert "setuptools" in dependencies("Linux", "aarch64", "3.12")
    assert "setuptools" not in dependencies("Linux", "aarch64", "3.11")
    assert dependencies("Linux", "aarch64", "3.8")["sympy"] == "sympy==1.12.1"


def test_markers_are_this_interpreters_again_afterwards():
    before = markers.default_environment()
    with pip_for_platform.target_markers("Darwin", "arm64", "3.12") as env:
        assert env["sys_platform"] == "darwin" and env["python_full_version"] == "3.12.0"
        assert markers.Marker('sys_platform == "darwin" and platform_machine == "arm64"').evaluate()
    assert markers.default_environment() == before


@pytest.mark.parametrize("argv", [[], ["Windows", "x86", "3.11", "pip", "download"],
                                  ["Linux", "aarch64", "3", "pip", "download"],
                                  ["Linux", "aarch64", "3.11", "download", "x"]])
def test_bad_arguments_are_refused_before_pip_runs(argv, capsys):
    assert pip_for_platform.main(argv) == 2
    assert "usage: python pip_for_platform.py" in capsys.readouterr().err
