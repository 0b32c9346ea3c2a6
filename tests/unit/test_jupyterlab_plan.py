"""The jupyterlab role's decision as a pure function (plugins/filter/jupyterlab_plan.py), called directly: the
plain cases (loopback, an opened address, a host that is not the launcher) and each refusal, by its message;
the value forms are the rules engine's, against roles/jupyterlab/meta/rules.yml."""
from __future__ import annotations

from pathlib import Path

import pytest

from hvc_settings import hvc_rule_errors  # plugins/filter (tests/unit/conftest.py puts it on sys.path)
from jupyterlab_plan import jupyterlab_plan

ROLES = str(Path(__file__).resolve().parents[2] / "roles")
DEFAULTS = {
    "jupyterlab_host": "node1", "jupyterlab_env_path": "/opt/horovod/venv", "jupyterlab_version": "4.6.6",
    "jupyterlab_tensorboard_version": "2.21.0", "jupyterlab_nvdashboard": "auto",
    "jupyterlab_nvdashboard_version": "0.15.0", "jupyterlab_ip": "127.0.0.1", "jupyterlab_allow_remote": False,
    "jupyterlab_port": 8888, "jupyterlab_root_dir": "/srv/jupyterlab", "jupyterlab_user": "jupyter",
    "jupyterlab_token": "", "jupyterlab_token_file": "/etc/jupyterlab/jupyterlab.env",
    "jupyterlab_service": "jupyterlab",
}


def decide(host="node1", system="Linux", gpu_count=0, ssh=None, **given):
    return jupyterlab_plan({
        "vars": {**DEFAULTS, **given}, "host": host, "play_hosts": ["node1", "node2"], "system": system,
        "gpu_count": gpu_count, "ssh": ssh or {"host": "10.0.0.7", "user": "lab", "port": 22},
        "loopback": ["127.0.0.1", "::1"], "unit": "/etc/systemd/system/jupyterlab.service"})


def test_loopback_on_the_launcher():
    got = decide()
    assert got["errors"] == []
    plan = got["plan"]
    assert plan["action"] == "install" and plan["method"] == "systemd" and plan["host"] == "node1"
    assert plan["packages"] == ["jupyterlab==4.6.6", "tensorboard==2.21.0"] and plan["nvdashboard"] is False
    assert plan["exec_start"] == ["/opt/horovod/venv/bin/jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
                                  "--ServerApp.port=8888", "--ServerApp.port_retries=0",
                                  "--ServerApp.root_dir=/srv/jupyterlab"]
    assert plan["url"] == "http://localhost:8888/lab" and plan["local_address"] == "127.0.0.1"
    assert plan["tunnel"] == "ssh -N -L 8888:127.0.0.1:8888 lab@10.0.0.7"
    assert plan["token_source"] == "generated on the host once" and plan["port"] == 8888
    assert plan["reason"] == (
        "JupyterLab 4.6.6 in /opt/horovod/venv as the systemd service jupyterlab (user jupyter), listening on"
        " 127.0.0.1:8888; packages jupyterlab==4.6.6, tensorboard==2.21.0; token generated on the host in"
        " /etc/jupyterlab/jupyterlab.env")


def test_ipv6_loopback_brackets_the_tunnel_and_an_odd_ssh_port_is_named():
    plan = decide(jupyterlab_ip="::1", ssh={"host": "node1", "user": "", "port": 2222})["plan"]
    assert plan["tunnel"] == "ssh -N -L 8888:[::1]:8888 -p 2222 node1"
    assert plan["url"] == "http://localhost:8888/lab" and "listening on [::1]:8888;" in plan["reason"]


def test_an_opened_address_with_gpus_root_and_a_token():
    plan = decide(jupyterlab_ip="0.0.0.0", jupyterlab_allow_remote=True, jupyterlab_port="9999",
                  jupyterlab_user="root", jupyterlab_token="a" * 32, gpu_count=2,
                  ssh={"host": "gpu.lab", "user": "", "port": 22})["plan"]
    assert plan["url"] == "http://gpu.lab:9999/lab" and plan["tunnel"] == "ssh -N -L 9999:127.0.0.1:9999 gpu.lab"
    assert plan["packages"][-1] == "jupyterlab-nvdashboard==0.15.0" and plan["gpu_count"] == 2
    assert plan["exec_start"][-1] == "--allow-root" and plan["token_source"] == "jupyterlab_token"
    assert "(jupyterlab_allow_remote)" in plan["reason"] and "; GPU dashboards: 2 NVIDIA GPU(s);" in plan["reason"]
    assert "a" * 32 not in repr(plan)


def test_an_opened_ipv6_address_is_bracketed_in_the_url():
    plan = decide(jupyterlab_ip="fe80::1", jupyterlab_allow_remote=True)["plan"]
    assert plan["url"] == "http://[fe80::1]:8888/lab" and plan["local_address"] == "fe80::1"


def test_no_tensorboard_and_dashboards_always():
    plan = decide(jupyterlab_tensorboard_version="", jupyterlab_nvdashboard="always")["plan"]
    assert plan["packages"] == ["jupyterlab==4.6.6", "jupyterlab-nvdashboard==0.15.0"]
    assert "GPU dashboards" not in plan["reason"]


def test_not_the_launcher_only_knows_where_it_runs():
    plan = decide(host="node2")["plan"]
    assert plan["action"] == "skip" and plan["host"] == "node1"
    assert plan["reason"] == "JupyterLab runs on node1 (jupyterlab_host), not here"


def test_a_non_systemd_host_that_is_not_the_launcher_is_fine():
    assert decide(host="node2", system="Darwin")["errors"] == []


@pytest.mark.parametrize("given, message", [
    ({"jupyterlab_port": 70000}, 'jupyterlab_port is "70000"; expected a TCP port number, 1 to 65535'),
    ({"jupyterlab_port": 0}, 'jupyterlab_port is "0"; expected a TCP port number, 1 to 65535'),
    ({"jupyterlab_port": "8888; id"}, 'jupyterlab_port is "8888; id"; expected a TCP port number, 1 to 65535'),
    ({"jupyterlab_ip": "0.0.0.0"},
     'jupyterlab_ip is "0.0.0.0": beyond loopback, anyone who reaches the port and has the token runs code as'
     " jupyter; expected 127.0.0.1 or ::1 (reach it through an SSH tunnel), or jupyterlab_allow_remote: true to"
     " choose it"),
    ({"jupyterlab_host": "elsewhere"}, "jupyterlab_host is \"elsewhere\"; expected one of the play's hosts"
                                       " (node1, node2)"),
    ({"system": "Darwin"}, "jupyterlab_host is node1, a Darwin host; expected a Linux host (the role runs"
                           " JupyterLab as a systemd service)"),
])
def test_each_refusal_names_the_variable(given, message):
    got = decide(**given)
    assert got == {"errors": [message], "plan": {}}


@pytest.mark.parametrize("token", ["short", "a" * 20 + "\nEXTRA=1", "a" * 20 + " $(id)", None])
def test_a_bad_token_is_refused_without_showing_it(token):
    got = decide(jupyterlab_token=token)
    assert got["errors"] == ["jupyterlab_token (not shown) is not a token; expected empty (one is generated on the"
                             " host) or 16 or more letters, digits and . _ ~ -"]


def test_every_refusal_is_named_at_once():
    got = decide(jupyterlab_port=0, jupyterlab_ip="10.0.0.5", jupyterlab_host="elsewhere")
    assert [e.split(" ")[0] for e in got["errors"]] == ["jupyterlab_port", "jupyterlab_ip", "jupyterlab_host"]


@pytest.mark.parametrize("name, value, message", [
    ("jupyterlab_ip", "localhost", "jupyterlab_ip is 'localhost'; allowed: an IPv4 or IPv6 address"),
    ("jupyterlab_ip", "300.1.1.1", "jupyterlab_ip is '300.1.1.1'; allowed: an IPv4 or IPv6 address"),
    ("jupyterlab_ip", "127.0.0.1 --ServerApp.token=", "jupyterlab_ip is '127.0.0.1 --ServerApp.token='"),
    ("jupyterlab_root_dir", "notebooks", "jupyterlab_root_dir is 'notebooks'; allowed: an absolute path of"
                                         " letters, digits and . _ - + /"),
    ("jupyterlab_root_dir", "/srv/%h", "jupyterlab_root_dir is '/srv/%h'; allowed: an absolute path"),
    ("jupyterlab_env_path", "/opt/venv`id`", "jupyterlab_env_path is '/opt/venv`id`'; allowed: an absolute path"),
    ("jupyterlab_token_file", "/etc/jl.env\nExecStartPre=/bin/id",
     "jupyterlab_token_file is '/etc/jl.env\\nExecStartPre=/bin/id'; allowed: an absolute path"),
    ("jupyterlab_user", "Root", "jupyterlab_user is 'Root'; allowed: a login name of lowercase letters"),
    ("jupyterlab_service", "../jupyterlab", "jupyterlab_service is '../jupyterlab'; allowed: a unit name"),
    ("jupyterlab_version", "4.6.6 --index-url=http://x",
     "jupyterlab_version is '4.6.6 --index-url=http://x'; allowed: a release of digits, letters and . + ! -"),
    ("jupyterlab_tensorboard_version", "latest", "jupyterlab_tensorboard_version is 'latest'; allowed: empty or"),
    ("jupyterlab_nvdashboard_version", "", "jupyterlab_nvdashboard_version is empty; allowed: a release"),
])
def test_the_value_forms_are_the_rules_engines(name, value, message):
    required = [n for n in DEFAULTS if n != "jupyterlab_tensorboard_version"]
    errors = hvc_rule_errors({name: value}, ROLES, "h", required)
    assert len(errors) == 1 and errors[0].startswith(f"host h: {message}"), errors


def test_the_defaults_and_an_empty_tensorboard_pass_the_rules():
    names = ["jupyterlab_env_path", "jupyterlab_root_dir", "jupyterlab_token_file", "jupyterlab_ip",
             "jupyterlab_user", "jupyterlab_service", "jupyterlab_version", "jupyterlab_nvdashboard_version"]
    values = {**{n: str(DEFAULTS[n]) for n in names}, "jupyterlab_tensorboard_version": ""}
    assert hvc_rule_errors(values, ROLES, "h", names) == []
    assert hvc_rule_errors({"jupyterlab_ip": "::"}, ROLES, "h") == []


@pytest.mark.parametrize("root_dir", ["/", "/etc", "/home", "/usr/", "//var", "/home/alice/..", "/Users", "/tmp/."])
def test_a_system_folder_as_root_dir_is_refused(root_dir):
    """Issue 45: the role owns jupyterlab_root_dir to jupyterlab_user: "/home" or "/etc" gave it the system's."""
    got = decide(jupyterlab_root_dir=root_dir)
    assert got == {"errors": [f"jupyterlab_root_dir is \"{root_dir}\", a folder of the system itself, which the role"
                              " would give to jupyter (its owner; the home of a user it creates); expected a folder"
                              " of its own beneath one (/srv/jupyterlab, /home/alice/notebooks)"], "plan": {}}


@pytest.mark.parametrize("root_dir", ["/home/alice/notebooks", "/srv/jupyterlab", "/tmp/lab", "/homework", "/data"])
def test_a_folder_beneath_or_beside_a_system_one_is_fine(root_dir):
    assert decide(jupyterlab_root_dir=root_dir)["errors"] == []
