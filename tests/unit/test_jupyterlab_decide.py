"""jupyterlab decide step over recorded facts: JupyterLab goes on one host (the first of the play, or
jupyterlab_host), into the python_env role's environment, with the GPU dashboards where preflight found an
NVIDIA GPU; the unit's command line is built from plain values only, and a value that would reach ExecStart,
WorkingDirectory or EnvironmentFile unchecked is refused naming the variable (the token never shown)."""
import pytest

from ansible_run import host_facts, plans, run_role

GPU_PLATFORM = {"hvc_platform": {"gpu": {"count": 2, "cuda_version": "13.0"}}}


def test_the_launcher_gets_it_with_the_defaults(tmp_path):
    hosts = {"node1": host_facts("debian12", "node1"), "node2": host_facts("debian12", "node2")}
    proc = run_role(tmp_path, "jupyterlab", hosts, host_vars={"node1": {"ansible_host": "10.0.0.7",
                                                                        "ansible_user": "lab"}})
    assert proc.returncode == 0, proc.stdout[-3000:]
    got = plans(proc)
    one = got["node1"]
    assert one["action"] == "install" and one["host"] == "node1"
    assert one["packages"] == ["jupyterlab==4.6.6", "tensorboard==2.21.0"] and not one["nvdashboard"]
    assert one["env_path"] == "/opt/horovod/venv"
    assert one["exec_start"] == ["/opt/horovod/venv/bin/jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
                                 "--ServerApp.port=8888", "--ServerApp.port_retries=0",
                                 "--ServerApp.root_dir=/srv/jupyterlab"]
    assert one["tunnel"] == "ssh -N -L 8888:127.0.0.1:8888 lab@10.0.0.7"
    assert one["url"] == "http://localhost:8888/lab"
    assert one["token_file"] == "/etc/jupyterlab/jupyterlab.env" and one["token_source"].startswith("generated")
    assert one["unit"] == "/etc/systemd/system/jupyterlab.service"
    # the other host only knows where it runs
    assert got["node2"]["action"] == "skip" and got["node2"]["host"] == "node1"
    assert "runs on node1" in got["node2"]["reason"]


def test_named_host_env_gpu_and_remote_choice(tmp_path):
    hosts = {"node1": host_facts("debian12", "node1"),
             "gpu": host_facts("ubuntu24", "gpu", extra=GPU_PLATFORM)}
    common = {"jupyterlab_host": "gpu", "jupyterlab_ip": "0.0.0.0", "jupyterlab_allow_remote": True,
              "jupyterlab_port": "9999", "jupyterlab_user": "root", "jupyterlab_token": "a" * 32,
              "hvc_python_env": {"env_path": "/opt/conda/envs/hvd", "python": "/opt/conda/envs/hvd/bin/python"}}
    proc = run_role(tmp_path, "jupyterlab", hosts, host_vars={"node1": common, "gpu": {**common,
                                                                                      "ansible_host": "gpu.lab"}})
    assert proc.returncode == 0, proc.stdout[-3000:]
    got = plans(proc)
    gpu = got["gpu"]
    assert gpu["action"] == "install" and got["node1"]["action"] == "skip"
    assert gpu["packages"][-1] == "jupyterlab-nvdashboard==0.15.0" and gpu["gpu_count"] == 2
    assert gpu["exec_start"][0] == "/opt/conda/envs/hvd/bin/jupyter"
    assert "--ServerApp.ip=0.0.0.0" in gpu["exec_start"] and "--ServerApp.port=9999" in gpu["exec_start"]
    assert gpu["exec_start"][-1] == "--allow-root"
    assert gpu["url"] == "http://gpu.lab:9999/lab" and gpu["tunnel"] == "ssh -N -L 9999:127.0.0.1:9999 gpu.lab"
    assert gpu["token_source"] == "jupyterlab_token" and "a" * 32 not in proc.stdout


def test_ipv6_loopback_and_no_tensorboard_on_a_pi(tmp_path):
    proc = run_role(tmp_path, "jupyterlab", {"h": host_facts("raspios12", "h")},
                    host_vars={"h": {"jupyterlab_ip": "::1", "jupyterlab_tensorboard_version": "",
                                     "jupyterlab_nvdashboard": "always"}})
    assert proc.returncode == 0, proc.stdout[-3000:]
    plan = plans(proc)["h"]
    assert plan["tunnel"] == "ssh -N -L 8888:[::1]:8888 h" and plan["url"] == "http://localhost:8888/lab"
    assert "--ServerApp.ip=::1" in plan["exec_start"]
    assert plan["packages"] == ["jupyterlab==4.6.6", "jupyterlab-nvdashboard==0.15.0"]


@pytest.mark.parametrize("host_vars, needle", [
    ({"jupyterlab_port": 70000}, "jupyterlab_port is \"70000\"; expected a TCP port number, 1 to 65535"),
    ({"jupyterlab_port": 0}, "jupyterlab_port"),
    ({"jupyterlab_port": "8888; id"}, "jupyterlab_port"),
    ({"jupyterlab_ip": "localhost"}, "host h: jupyterlab_ip is 'localhost'; allowed: an IPv4 or IPv6 address"),
    ({"jupyterlab_ip": "127.0.0.1 --ServerApp.token="}, "jupyterlab_ip"),
    ({"jupyterlab_ip": "300.1.1.1"}, "jupyterlab_ip"),
    ({"jupyterlab_ip": "0.0.0.0"}, 'jupyterlab_ip is "0.0.0.0": beyond loopback'),
    ({"jupyterlab_ip": "10.0.0.5"}, "jupyterlab_allow_remote: true to choose it"),
    ({"jupyterlab_root_dir": "/srv/my notebooks"}, "jupyterlab_root_dir"),
    ({"jupyterlab_root_dir": "/srv/nb; rm -rf /"}, "jupyterlab_root_dir"),
    ({"jupyterlab_root_dir": "/srv/$HOME"}, "jupyterlab_root_dir"),
    ({"jupyterlab_root_dir": "/srv/%h"}, "jupyterlab_root_dir"),
    ({"jupyterlab_root_dir": "notebooks"}, "jupyterlab_root_dir is 'notebooks'; allowed: an absolute path"),
    ({"jupyterlab_env_path": "/opt/venv`id`"}, "jupyterlab_env_path"),
    ({"jupyterlab_token_file": "/etc/jl.env\nExecStartPre=/bin/id"}, "jupyterlab_token_file is '/etc/jl.env\\n"),
    ({"jupyterlab_user": "root\nExecStartPre=/bin/id"}, "jupyterlab_user"),
    ({"jupyterlab_service": "../jupyterlab"}, "jupyterlab_service"),
    ({"jupyterlab_version": "4.6.6 --index-url=http://x"}, "jupyterlab_version"),
    ({"jupyterlab_host": "elsewhere"}, 'jupyterlab_host is "elsewhere"; expected one of the play\'s hosts (h)'),
])
def test_bad_input_fails_naming_the_variable(tmp_path, host_vars, needle):
    proc = run_role(tmp_path, "jupyterlab", {"h": host_facts("debian12", "h")}, host_vars={"h": host_vars})
    assert proc.returncode != 0
    assert needle in proc.stdout, proc.stdout[-3000:]
    assert plans(proc) == {}


@pytest.mark.parametrize("token", ["short", "a" * 20 + "\nEXTRA=1", "a" * 20 + " $(id)"])
def test_a_bad_token_is_refused_without_showing_it(tmp_path, token):
    proc = run_role(tmp_path, "jupyterlab", {"h": host_facts("debian12", "h")},
                    host_vars={"h": {"jupyterlab_token": token}})
    assert proc.returncode != 0
    assert "jupyterlab_token (not shown) is not a token" in proc.stdout, proc.stdout[-3000:]
    assert token.split("\n")[0] not in proc.stdout and plans(proc) == {}


def test_a_mac_is_refused_as_the_host(tmp_path):
    proc = run_role(tmp_path, "jupyterlab", {"mac": host_facts("macos14", "mac")})
    assert proc.returncode != 0
    assert "jupyterlab_host is mac, a Darwin host; expected a Linux host" in proc.stdout, proc.stdout[-3000:]


def test_a_bad_choice_is_refused_by_the_argument_specs(tmp_path):
    proc = run_role(tmp_path, "jupyterlab", {"h": host_facts("debian12", "h")}, tasks_from="main",
                    host_vars={"h": {"jupyterlab_nvdashboard": "yes please"}})
    assert proc.returncode != 0
    assert "jupyterlab_nvdashboard" in proc.stdout and "auto, always, never" in proc.stdout, proc.stdout[-3000:]
