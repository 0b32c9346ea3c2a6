"""Real state of the conda scenario: Miniforge installed and verified, env built from environment.yml."""
import json

PREFIX = "/opt/conda"
ENV = f"{PREFIX}/envs/horovod"


def test_conda_installed_from_the_verified_installer(host):
    marker = host.file(f"{PREFIX}/.hvc-installed")
    assert marker.is_file
    assert marker.content_string.split()[0] == "Miniforge3-Linux-x86_64.sh"
    assert host.run(f"{PREFIX}/bin/conda --version").rc == 0


def test_env_spec_marker_written(host):
    assert len(host.file(f"{ENV}/.hvc-spec-sha256").content_string.strip()) == 64


def test_env_python_imports_cpu_torch_and_mpi4py(host):
    script = "import json, torch, mpi4py; print(json.dumps([torch.__version__, torch.version.cuda]))"
    version, cuda = json.loads(host.check_output(f"{ENV}/bin/python -c '{script}'"))
    assert version == "2.13.0+cpu"
    assert cuda is None


def test_env_cmake_in_horovod_range(host):
    out = host.check_output(f"{ENV}/bin/cmake --version").splitlines()[0]
    major, minor = (int(x) for x in out.split()[-1].split(".")[:2])
    assert (3, 13) <= (major, minor) < (4, 0)
