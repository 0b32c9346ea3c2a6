"""The sandbox's inventory (horovod_cluster.sandbox): Debian 13 hosts beside Debian 12 ones, written without podman."""
from __future__ import annotations

import yaml

from horovod_cluster.sandbox import Host, Sandbox, node_image


def test_debian13_hosts_are_named_for_their_release_and_grouped_for_its_settings(tmp_path):
    box = Sandbox(prefix="hvc-t", network="hvc-t", inventory_dir=tmp_path / "inv", state_dir=tmp_path / "state")
    assert box.host_names(1, 1, debian13=2) == [("hvc-t1", "amd64", "12"), ("hvc-t-arm64-1", "arm64", "12"),
                                                 ("hvc-t-debian13-1", "amd64", "13"),
                                                 ("hvc-t-debian13-2", "amd64", "13")]
    assert node_image("amd64", "13") == "localhost/horovod-cluster/node:trixie-amd64"
    assert node_image("arm64") == "localhost/horovod-cluster/node:bookworm-arm64"
    hosts = [Host("hvc-t1", "amd64", "running", "10.0.0.2"), Host("hvc-t-debian13-1", "amd64", "running", "10.0.0.3",
                                                                  "13")]
    inventory = yaml.safe_load(box.write_inventory(hosts).read_text())["all"]["children"]
    assert sorted(inventory["cluster"]["children"]["cpu_nodes"]["hosts"]) == ["hvc-t-debian13-1", "hvc-t1"]
    # its group_vars: Debian's own torch
    assert list(inventory["cluster"]["children"]["debian13"]["hosts"]) == ["hvc-t-debian13-1"]
    assert (tmp_path / "inv" / "group_vars" / "debian13" / "python_env.yml").is_file()
    only12 = yaml.safe_load(box.write_inventory(hosts[:1]).read_text())["all"]["children"]["cluster"]["children"]
    assert "debian13" not in only12


def test_an_arm64_debian13_host_is_a_pi_that_gets_debian13s_torch(tmp_path):
    """The Raspberry Pi OS 13 stand-in is in pis and debian13; Ansible itself resolves its variables: those of
    debian13 (Debian's python3-torch; PyPI has no CPU aarch64 torch for Python 3.13) win over those of pis."""
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    box = Sandbox(prefix="hvc-t", network="hvc-t", inventory_dir=tmp_path / "inv", state_dir=tmp_path / "state")
    assert box.host_names(0, 1, debian13_arm64=1) == [("hvc-t-arm64-1", "arm64", "12"),
                                                       ("hvc-t-debian13-arm64-1", "arm64", "13")]
    hosts = [Host("hvc-t-arm64-1", "arm64", "running", "10.0.0.2"),
             Host("hvc-t-debian13-arm64-1", "arm64", "running", "10.0.0.3", "13")]
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[str(box.write_inventory(hosts))])
    variables = VariableManager(loader=loader, inventory=inventory)

    def torch(name: str) -> tuple[str, str]:
        found = variables.get_vars(host=inventory.get_host(name))
        return found.get("python_env_torch_source", "pip"), found["python_env_torch_version"]

    assert torch("hvc-t-arm64-1") == ("pip", "2.5.1")
    # each sandbox's mesh key in a folder of its own (a test's own sandbox beside the shared one)
    key_dir = variables.get_vars(host=inventory.get_host("hvc-t-arm64-1"))["ssh_mesh_key_dir"]
    assert key_dir == str(tmp_path / "state" / "ssh_mesh")
    assert torch("hvc-t-debian13-arm64-1") == ("distro", "2.6.0")
    assert sorted(inventory.get_groups_dict()["pis"]) == ["hvc-t-arm64-1", "hvc-t-debian13-arm64-1"]
