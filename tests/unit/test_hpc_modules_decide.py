"""hpc_modules decide step over recorded facts: the modulefile's values come from the other roles' published
results (hvc_python_env, hvc_horovod, hvc_cuda_toolkit, hvc_nccl, hvc_openmpi) or the defaults; a path or name
that would go into the Lua/Tcl modulefile or the login script unchecked is refused, naming the variable."""
import pytest

from ansible_run import host_facts, plans, run_role

GPU_RESULTS = {
    "hvc_python_env": {"env_path": "/opt/conda/envs/hvd", "python": "/opt/conda/envs/hvd/bin/python",
                       "manager": "conda"},
    "hvc_horovod": {"version": "0.28.2"},
    "hvc_cuda_toolkit": {"installed": True, "home": "/usr/local/cuda-13.0", "version": "13.0"},
    "hvc_nccl": {"installed": True, "home": "/usr", "lib_dir": "/usr/lib/x86_64-linux-gnu"},
    "hvc_openmpi": {"bindir": "/opt/openmpi-4.1.6/bin"},
}


def test_values_from_the_published_results_and_the_defaults(tmp_path):
    hosts = {"cpu": host_facts("debian12", "cpu"), "gpu": host_facts("ubuntu24", "gpu"),
             "distro-mpi": host_facts("debian12", "distro-mpi"), "pi": host_facts("raspios12", "pi")}
    proc = run_role(tmp_path, "hpc_modules", hosts, host_vars={
        "gpu": {**GPU_RESULTS, "hpc_modules_format": "tcl", "hpc_modules_install_lmod": True},
        "distro-mpi": {"hvc_openmpi": {"bindir": "/usr/bin"}, "hvc_nccl": {"installed": False, "home": ""},
                       "python_env_path": "/srv/hvd", "hpc_modules_use": False}})
    assert proc.returncode == 0, proc.stdout[-3000:]
    got = plans(proc)
    # nothing published (a run of modules.yml alone): the role defaults
    cpu = got["cpu"]
    assert cpu["path"] == "/opt/horovod/modulefiles/horovod/0.28.1.lua" and cpu["format"] == "lua"
    assert cpu["setenv"] == {"VIRTUAL_ENV": "/opt/horovod/venv"}
    assert cpu["prepend"] == [["PATH", "/opt/horovod/venv/bin"]]
    assert cpu["modulepath"] == "/etc/profile.d/z90-hvc-modules.sh"
    assert cpu["lmod"].startswith("not installed") and cpu["action"] == "install"
    assert got["pi"] == cpu  # the Pi (aarch64) plans the same
    # everything published: CUDA, NCCL (its system lib folder left out), a source-built MPI, a conda env
    gpu = got["gpu"]
    assert gpu["path"] == "/opt/horovod/modulefiles/horovod/0.28.2" and gpu["module"] == "horovod/0.28.2"
    assert gpu["setenv"] == {"CONDA_PREFIX": "/opt/conda/envs/hvd", "CUDA_HOME": "/usr/local/cuda-13.0",
                             "NCCL_HOME": "/usr", "MPI_HOME": "/opt/openmpi-4.1.6"}
    assert gpu["prepend"] == [["PATH", "/opt/openmpi-4.1.6/bin"], ["PATH", "/usr/local/cuda-13.0/bin"],
                              ["LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib64"], ["PATH", "/opt/conda/envs/hvd/bin"]]
    assert gpu["lmod"] == "install"
    # the distro's mpirun (/usr/bin) is on PATH anyway; python_env_path of the inventory is read
    other = got["distro-mpi"]
    assert other["setenv"] == {"VIRTUAL_ENV": "/srv/hvd"} and other["prepend"] == [["PATH", "/srv/hvd/bin"]]
    assert other["modulepath"] == ""
    assert "left to the site" in other["reason"]


def test_lmod_is_only_installed_from_debian_and_ubuntu_packages(tmp_path):
    proc = run_role(tmp_path, "hpc_modules", {"mac": host_facts("macos14", "mac")},
                    host_vars={"mac": {"hpc_modules_install_lmod": True}})
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert plans(proc)["mac"]["lmod"].startswith("not installed: only Debian and Ubuntu")


@pytest.mark.parametrize("host_vars, needle", [
    ({"hpc_modules_root": "modulefiles"}, "hpc_modules_root is 'modulefiles'; allowed: an absolute path"),
    ({"hpc_modules_root": "/opt/my modules"}, "hpc_modules_root"),
    ({"hpc_modules_root": "/opt/mods\nexport X=1"}, "hpc_modules_root is '/opt/mods\\nexport X=1'"),
    ({"hpc_modules_env_path": '/opt/venv"); os.execute("id'}, "hpc_modules_env_path"),
    ({"hpc_modules_env_path": ""}, "hpc_modules_env_path"),
    ({"hpc_modules_cuda_home": "/usr/local/cuda}; exec id; {"}, "hpc_modules_cuda_home"),
    ({"hpc_modules_nccl_home": "/opt/nccl]==]"}, "hpc_modules_nccl_home"),
    ({"hpc_modules_mpi_bindir": "/opt/ompi/$PATH"}, "hpc_modules_mpi_bindir"),
    ({"hpc_modules_name": "horovod/extra"}, "hpc_modules_name"),
    ({"hpc_modules_name": "-horovod"}, "hpc_modules_name"),
    ({"hpc_modules_version": "0.28.1 beta"}, "hpc_modules_version"),
    ({"hpc_modules_version": "../0.28.1"}, "hpc_modules_version"),
])
def test_bad_input_fails_naming_the_variable(tmp_path, host_vars, needle):
    proc = run_role(tmp_path, "hpc_modules", {"h": host_facts("debian12", "h")}, host_vars={"h": host_vars})
    assert proc.returncode != 0
    assert needle in proc.stdout, proc.stdout[-3000:]
    assert plans(proc) == {}


def test_a_bad_format_is_refused_by_the_argument_specs(tmp_path):
    proc = run_role(tmp_path, "hpc_modules", {"h": host_facts("debian12", "h")}, tasks_from="main",
                    host_vars={"h": {"hpc_modules_format": "yaml"}})
    assert proc.returncode != 0
    assert "hpc_modules_format" in proc.stdout and "lua, tcl" in proc.stdout, proc.stdout[-3000:]
