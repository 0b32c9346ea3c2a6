"""Real state of the python_env (venv) scenario: the venv's python imports torch 2.13.0+cpu."""
import json

VENV = "/opt/horovod/venv"
WHEEL = "/opt/horovod/wheelhouse/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"


def test_venv_python_is_311(host):
    out = host.check_output(f"{VENV}/bin/python -c 'import sys; print(sys.version_info[:2])'")
    assert out == "(3, 11)"


def test_venv_imports_cpu_torch_from_wheelhouse(host):
    script = "import json, torch; print(json.dumps([torch.__version__, torch.version.cuda]))"
    version, cuda = json.loads(host.check_output(f"{VENV}/bin/python -c '{script}'"))
    assert version == "2.13.0+cpu"
    assert cuda is None


def test_torch_came_from_the_wheelhouse_copy(host):
    wheel = host.file(WHEEL)
    assert wheel.is_file
    assert wheel.size > 100 * 1024 * 1024
    requirements = host.file(f"{VENV}/hvc-requirements.txt").content_string
    assert "--find-links /opt/horovod/wheelhouse" in requirements
    assert "torch==2.13.0+cpu" in requirements.splitlines()


def test_torch_computes(host):
    out = host.check_output(f"{VENV}/bin/python -c 'import torch; print(int(torch.ones(3).sum()))'")
    assert out == "3"


def test_controller_wheelhouse_was_filled_for_the_host_set():
    """The role's default wheelhouse on the controller holds the host's wheel set, marked complete."""
    import os
    from pathlib import Path
    cache = Path(os.environ.get("HOROVOD_CLUSTER_CACHE", Path.home() / ".cache" / "horovod-cluster"))
    wheel_set = cache / "wheelhouse" / "linux-x86_64-cp311-cpu"
    assert (wheel_set / "torch-2.13.0+cpu_numpy.complete").is_file()
    assert list(wheel_set.glob("torch-2.13.0+cpu-cp311-*.whl"))
    assert list(wheel_set.glob("sympy-*.whl")), "torch's dependencies are downloaded with it"
    assert list(wheel_set.glob("numpy-*-cp311-*.whl")), "the training packages are downloaded with it"


def test_dependencies_travelled_with_torch(host):
    """Hosts get the whole set (torch's dependencies too), so an offline host could install it."""
    listing = host.check_output("ls /opt/horovod/wheelhouse")
    assert "sympy-" in listing and "filelock-" in listing and "numpy-" in listing


def test_training_packages_are_in_the_environment(host):
    """numpy (python_env_training_packages' default): what hvd.broadcast_object needs, and torch does not bring."""
    requirements = host.file(f"{VENV}/hvc-requirements.txt").content_string.splitlines()
    assert "numpy" in requirements
    out = host.check_output(f"{VENV}/bin/python -c 'import numpy, torch; print(torch.from_numpy(numpy.ones(2)).sum().item())'")
    assert out == "2.0"
