"""ssh_mesh decide step over recorded facts: the names and addresses per host, and bad input refused."""
import pytest

from ansible_run import host_facts, plans, run_role


def test_names_and_addresses(tmp_path):
    hosts = {"n1": host_facts("debian12", "node1", address="10.1.0.11"),
             "n2": host_facts("ubuntu24", "node2", address="10.1.0.12")}
    proc = run_role(tmp_path, "ssh_mesh", hosts, host_vars={"n2": {"ansible_host": "10.9.9.2",
                                                                   "ssh_mesh_aliases": ["gpu-a"]}})
    assert proc.returncode == 0, proc.stdout
    got = plans(proc)
    assert got["n1"]["mesh_size"] == got["n2"]["mesh_size"] == 2
    assert "peers" not in got["n1"]  # a count, not every host's name in every host's plan
    assert got["n1"]["user"] == "root"
    assert "host key checking stays on" in got["n1"]["reason"]
    assert got["n1"]["names"] == ["n1", "node1", "10.1.0.11"]
    assert got["n2"]["names"] == ["n2", "10.9.9.2", "node2", "10.1.0.12", "gpu-a"]
    assert got["n1"]["key_options"] == ('restrict,from="<addresses of the mesh hosts>,127.0.0.1,::1": no forwarding '
                                        'or pty, and the key logs in only from these addresses')


def test_the_plan_names_the_networks_the_key_is_also_accepted_from(tmp_path):
    proc = run_role(tmp_path, "ssh_mesh", {"h": host_facts("debian12", "h")},
                    {"ssh_mesh_allow_from": ["192.168.1.7/24", "fd00::/8"]})
    assert proc.returncode == 0, proc.stdout
    assert plans(proc)["h"]["key_options"].startswith(
        'restrict,from="<addresses of the mesh hosts>,127.0.0.1,192.168.1.0/24,::1,fd00::/8": no forwarding')


@pytest.mark.parametrize("extra, needle", [
    ({"ssh_mesh_key_type": "dsa"}, "ssh_mesh_key_type"),
    ({"ssh_mesh_user": "Bad User"}, "ssh_mesh_user"),
    ({"ssh_mesh_hosts": ["h", "ghost"]}, "ssh_mesh_hosts"),
    ({"ssh_mesh_key_name": "../id"}, "ssh_mesh_key_name"),
])
def test_bad_input_fails_naming_the_variable(tmp_path, extra, needle):
    proc = run_role(tmp_path, "ssh_mesh", {"h": host_facts("debian12", "h")}, extra)
    assert proc.returncode != 0
    assert needle in proc.stdout
    assert plans(proc) == {}


@pytest.mark.parametrize("extra, message", [
    # issue 45: cluster_id names the key's folder on the controller and its comment on every host
    ({"cluster_id": "../lab"}, "host h: cluster_id is '../lab'; allowed: a name: letters, digits and . _ -, up to 64"),
    ({"cluster_id": "lab one"}, "host h: cluster_id is 'lab one'; allowed: a name: letters, digits and . _ -"),
    ({"cluster_id": ""}, "host h: cluster_id is empty; allowed: a name: letters, digits and . _ -"),
    # from= takes no zone: ssh_mesh_allow_from's rule (meta/rules.yml), before the filter
    ({"ssh_mesh_allow_from": ["10.0.0.0/8", "fe80::1%eth0"]},
     "host h: ssh_mesh_allow_from has the item 'fe80::1%eth0'; allowed: IPv4 or IPv6 addresses or networks (CIDR)"),
    ({"ssh_mesh_allow_from": ["10.0.0.0/33"]}, "host h: ssh_mesh_allow_from has the item '10.0.0.0/33'; allowed:"),
])
def test_the_roles_rules_refuse_naming_the_variable_and_the_form(tmp_path, extra, message):
    proc = run_role(tmp_path, "ssh_mesh", {"h": host_facts("debian12", "h")}, extra)
    assert proc.returncode != 0
    assert message in proc.stdout, proc.stdout[-3000:]
    assert plans(proc) == {}
