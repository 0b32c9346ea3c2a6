"""Issue 45, item 3: the mesh key's authorized_keys line carries restrict and from= the mesh hosts' own
addresses (no host can widen it), and a rollout finds this cluster's earlier keys (a rotation, the upgrade from
one key per controller) by their comment, never another cluster's or the user's own keys."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from hvc_ssh_mesh_keys import hvc_mesh_key_options, hvc_mesh_stale_keys

NEW = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEW horovod-cluster mesh key c1"
OLD = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOLDOLDOLDOLDOLDOLDOLDOLDOLDOLDOLDOLDOLDOLD"


def test_the_key_is_accepted_from_the_mesh_hosts_and_loopback_only():
    members = [{"host": "a", "addresses": ["10.0.0.2", "fe80::1"]}, {"host": "b", "addresses": ["10.0.0.3"]}]
    assert hvc_mesh_key_options(members) == 'restrict,from="10.0.0.2,10.0.0.3,127.0.0.1,::1,fe80::1"'


def test_a_host_cannot_widen_from_with_patterns_networks_or_options():
    """The addresses come from the hosts' facts and records: only IP literals are kept."""
    members = [{"host": "evil", "addresses": ["*", "10.0.0.0/8", '10.0.0.9" ,command="sh', "!10.0.0.1",
                                               "fe80::1%eth0", "10.0.0.4"]}]
    assert hvc_mesh_key_options(members) == 'restrict,from="10.0.0.4,127.0.0.1,::1"'


def test_a_record_without_addresses_adds_none():
    assert hvc_mesh_key_options([{"host": "old"}]) == 'restrict,from="127.0.0.1,::1"'


def test_the_users_networks_are_added_and_a_bad_one_is_refused_naming_the_variable():
    assert hvc_mesh_key_options([], ["192.168.1.7/24", "10.1.2.3"]) == \
        'restrict,from="10.1.2.3/32,127.0.0.1,192.168.1.0/24,::1"'
    with pytest.raises(AnsibleFilterError, match=r"ssh_mesh_allow_from has 'lab\.example'"):
        hvc_mesh_key_options([], ["lab.example"])
    with pytest.raises(AnsibleFilterError, match="ssh_mesh_allow_from must be a list"):
        hvc_mesh_key_options([], "10.0.0.0/8")


def test_this_clusters_earlier_keys_and_the_old_controller_key_are_stale():
    text = "\n".join([
        "ssh-rsa AAAAB3NzaC1yc2EADMIN admin@laptop",  # the user's own key
        f'restrict,from="10.0.0.2" {OLD} horovod-cluster mesh key c1',  # this cluster, before a rotation
        f"{OLD} horovod-cluster mesh key",  # the one controller-wide key of older releases
        f'restrict,from="10.0.0.2" {OLD} horovod-cluster mesh key c2',  # another cluster sharing the host
        f'restrict,from="10.0.0.2" {NEW}',  # the current key
        "# a comment", ""])
    assert hvc_mesh_stale_keys(text, NEW, "c1") == [OLD, OLD]


def test_nothing_is_stale_when_only_the_current_key_is_there():
    assert hvc_mesh_stale_keys(f'restrict {NEW}\n', NEW, "c1") == []
    assert hvc_mesh_stale_keys("", NEW, "c1") == []


def test_the_key_types_are_the_host_key_filters_own():
    """One list of SSH key types (hvc_ssh_host_keys.KEY_TYPES): an earlier key of any of them is found."""
    import hvc_ssh_host_keys
    import hvc_ssh_mesh_keys
    assert hvc_ssh_mesh_keys.KEY_TYPES is hvc_ssh_host_keys.KEY_TYPES
    blob = OLD.split()[1]
    for key_type in hvc_ssh_host_keys.KEY_TYPES:
        text = f'restrict,from="10.0.0.2" {key_type} {blob} horovod-cluster mesh key c1\n'
        assert hvc_mesh_stale_keys(text, NEW, "c1") == [f"{key_type} {blob}"]
