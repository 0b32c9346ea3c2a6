"""python_env role: environment.yml / requirements.txt templates and the installer tables.

The templates are rendered with Jinja2 the way Ansible's template module does (trim_blocks),
from the variables decide.yml sets, for a CUDA host and a CPU host; environment.yml's conda dependencies
from plugins/filter/python_env_plan.py's python_env_conda_dependencies, as decide-conda.yml sets them.
"""
from __future__ import annotations

import re
from pathlib import Path

import jinja2
import pytest
import yaml

from conda_forge import conda_forge_errors  # tests/conda_forge.py: what conda-forge has (recorded)
from python_env_plan import python_env_conda_dependencies

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "python_env"
ROLE_VARS = yaml.safe_load((ROLE / "vars" / "main.yml").read_text(encoding="utf-8"))
DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text(encoding="utf-8"))


def render(name: str, **overrides) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(ROLE / "templates")),
        trim_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    context = {**DEFAULTS, **ROLE_VARS, "ansible_managed": "Ansible managed"}
    context.update(
        __python_env_system="Linux",
        __python_env_arch="x86_64",
        __python_env_variant="cpu",
        __python_env_cuda_version="",
        __python_env_pip_options=[],
        __python_env_requirements=[],
        __python_env_decided={"plan": {"hashed": False}},
    )
    context.update(overrides)
    # What decide-conda.yml sets from the same variables (the template only prints it).
    context.setdefault("__python_env_conda_dependencies", python_env_conda_dependencies(
        {"variant": context["__python_env_variant"], "cuda_version": context["__python_env_cuda_version"],
         "arch": context["__python_env_arch"], "python_version": context["python_env_python_version"],
         "packages": context["python_env_conda_packages"],
         "nvcc_metapackages": context["__python_env_nvcc_metapackage"]}, commented=True))
    return env.get_template(name).render(**context)


def gpu_env(cuda: str = "13.0", **extra) -> dict:
    return yaml.safe_load(render("environment.yml.j2", __python_env_variant="cuda",
                                 __python_env_cuda_version=cuda, **extra))


def cpu_env(**extra) -> dict:
    return yaml.safe_load(render("environment.yml.j2", **extra))


def conda_names(env: dict) -> list[str]:
    return [d for d in env["dependencies"] if isinstance(d, str)]


def test_default_channel_is_conda_forge_alone():
    assert cpu_env()["channels"] == ["conda-forge"]
    assert gpu_env()["channels"] == ["conda-forge"]


def test_pytorch_and_defaults_channels_when_asked():
    channels = ["pytorch", "conda-forge", "defaults"]
    assert gpu_env(python_env_conda_channels=channels)["channels"] == channels


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("cuda", ["13.0", "12.4", "12.9", "11.8"])
def test_cuda_env_names_only_what_conda_forge_has(cuda, arch):
    assert conda_forge_errors(conda_names(gpu_env(cuda, __python_env_arch=arch)), arch) == []


@pytest.mark.parametrize(("variant", "cuda", "arch"), [("cuda", "13.0", "aarch64"), ("cuda", "11.8", "x86_64"),
                                                       ("cpu", "", "x86_64")])
def test_template_prints_the_decided_dependencies_and_their_comments_in_order(variant, cuda, arch):
    decided = [{"spec": "python=3.11", "comment": ""}, {"spec": "a=1", "comment": "why a"}, {"spec": "b", "comment": ""}]
    text = render("environment.yml.j2", __python_env_variant=variant, __python_env_cuda_version=cuda,
                  __python_env_arch=arch, __python_env_conda_dependencies=decided)
    listed = text.split("dependencies:\n", 1)[1].split("  - pip:\n", 1)[0]
    assert listed.splitlines() == ["  - python=3.11", "  # why a", "  - a=1", "  - b"]


def test_cpu_env_names_only_what_conda_forge_has():
    assert conda_forge_errors(conda_names(cpu_env())) == []


def test_cuda_12_and_later_get_cuda_nvcc_pinned_by_cuda_version():
    names = conda_names(gpu_env("13.0"))
    for package in ("cuda-version=13.0", "cuda-nvcc=13.0", "cudnn", "nccl", "cxx-compiler", "mpi4py",
                    "cmake>=3.13,<4", "python=3.11"):
        assert package in names
    assert not any(n.startswith("nvcc_") for n in names)
    assert "cuda-version=12.4" in conda_names(gpu_env("12.4", __python_env_arch="aarch64"))


def test_cuda_11_keeps_the_nvcc_wrapper_of_the_system_toolkit():
    assert "nvcc_linux-64=11.8" in conda_names(gpu_env("11.8"))
    names = conda_names(gpu_env("11.8", __python_env_arch="aarch64"))
    assert "nvcc_linux-aarch64=11.8" in names
    assert not any(n.startswith(("nvcc_linux-64", "cuda-nvcc", "cuda-version")) for n in names)


@pytest.mark.parametrize(("deps", "error"), [
    (["nvcc_linux-64=13.0"], "nvcc_linux-64=13.0: conda-forge has no nvcc_linux-64 matching =13.0"),
    (["nvcc_linux-aarch64=12.4"], "nvcc_linux-aarch64=12.4: nvcc_linux-aarch64 has no linux-64 build"),
    (["cuda-version=12.7"], "cuda-version=12.7: conda-forge has no cuda-version matching =12.7"),
    (["cuda-version=12.4", "cuda-nvcc=13.0"], "cuda-nvcc=13.0: no cuda-nvcc build for cuda-version 12.4"),
    (["cuda-version=13.0", "cudnn=9.10.2.21"], "cudnn=9.10.2.21: no cudnn build for cuda-version 13.0"),
    (["python=3.9"], "python=3.9: conda-forge has no python matching =3.9"),
    (["nvidia-cuda-nvcc"], "nvidia-cuda-nvcc: conda-forge has no package nvidia-cuda-nvcc"),
])
def test_the_check_refuses_what_conda_forge_lacks(deps, error):
    assert [e for e in conda_forge_errors(deps) if e.startswith(error)]


def test_cpu_host_has_no_cuda_packages():
    names = [d for d in cpu_env()["dependencies"] if isinstance(d, str)]
    assert "mpi4py" in names and "cmake>=3.13,<4" in names
    assert not {"cudnn", "nccl", "cxx-compiler"} & set(names)
    assert not any(n.startswith("nvcc_") for n in names)


def test_pip_section_points_at_the_rendered_requirements_file():
    # the prefix a Linux host resolves (the default is templated over cluster_user_space)
    pip = [d for d in cpu_env(python_env_conda_prefix="/opt/conda")["dependencies"] if isinstance(d, dict)]
    assert pip == [{"pip": ["-r file:/opt/conda/envs/.hvc/horovod-requirements.txt"]}]


def test_an_environment_whose_wheel_set_goes_in_by_hash_has_no_pip_section():
    """conda runs its pip section as one pip install, where the set's hashed lines would put the named requirements
    into hash-checking mode too: the role's pip.yml installs both afterwards with the environment's pip."""
    spec = cpu_env(python_env_conda_prefix="/opt/conda", __python_env_decided={"plan": {"hashed": True}})
    assert "pip" in spec["dependencies"] and not [d for d in spec["dependencies"] if isinstance(d, dict)]


def test_extra_conda_packages_and_python_version():
    deps = cpu_env(python_env_conda_packages=["numpy=1.26"], python_env_python_version="3.10")["dependencies"]
    assert "numpy=1.26" in deps and "python=3.10" in deps


def test_requirements_carry_wheelhouse_options_then_pins():
    text = render(
        "requirements.txt.j2",
        __python_env_pip_options=["--find-links /opt/horovod/wheelhouse", "--no-index"],
        __python_env_requirements=["torch==2.13.0+cpu", "numpy==1.26.4"],
    )
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines == ["--find-links /opt/horovod/wheelhouse", "--no-index", "torch==2.13.0+cpu", "numpy==1.26.4"]


@pytest.mark.parametrize(
    ("system", "arch", "platform"),
    [
        ("Linux", "x86_64", "Linux-x86_64"),
        ("Linux", "aarch64", "Linux-aarch64"),
        ("Darwin", "x86_64", "MacOSX-x86_64"),
        ("Darwin", "arm64", "MacOSX-arm64"),
    ],
)
def test_platform_to_installer_mapping(system, arch, platform):
    assert ROLE_VARS["__python_env_conda_platforms"][system][arch] == platform
    for table in ROLE_VARS["__python_env_conda_installers"].values():
        assert platform in table["sha256"]


def test_armv7l_has_no_installer():
    assert "armv7l" not in ROLE_VARS["__python_env_conda_platforms"]["Linux"]


def test_sha_table_holds_real_digests_or_nothing():
    for table in ROLE_VARS["__python_env_conda_installers"].values():
        assert re.match(ROLE_VARS["__python_env_conda_version_regex"], table["version"])
        for digest in table["sha256"].values():
            assert digest == "" or re.fullmatch(r"[0-9a-f]{64}", digest)
    # The Linux x86_64 installers of both distributions ship a verified digest.
    for name in ("miniforge", "miniconda"):
        assert ROLE_VARS["__python_env_conda_installers"][name]["sha256"]["Linux-x86_64"]


def test_version_regexes_accept_good_and_refuse_bad():
    version = re.compile(ROLE_VARS["__python_env_version_regex"])
    assert version.match("2.13.0") and version.match("2.13")
    for bad in ("==2.13.0", "2.13.0+cpu", "latest", "2", "2.13.x"):
        assert not version.match(bad)
    conda = re.compile(ROLE_VARS["__python_env_conda_version_regex"])
    assert conda.match("25.3.0-3") and conda.match("py311_24.9.2-0")
    assert not conda.match("latest") and not conda.match("25.3")
