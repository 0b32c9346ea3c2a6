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
    assert list(inventory["debian13"]["hosts"]) == ["hvc-t-debian13-1"]  # its group_vars: Debian's own torch
    assert (tmp_path / "inv" / "group_vars" / "debian13" / "python_env.yml").is_file()
    only12 = yaml.safe_load(box.write_inventory(hosts[:1]).read_text())["all"]["children"]
    assert "debian13" not in only12
