"""Across both hosts: SSH mesh with real host keys, the hostfile, and an MPI allreduce over SSH."""
import re

import pytest

HOSTS = ("mpic-1", "mpic-2")


def test_ssh_to_peer_with_host_key_checking(host):
    me = host.backend.get_hostname()
    peer = HOSTS[1] if me == HOSTS[0] else HOSTS[0]
    out = host.check_output(
        f"ssh -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/dev/null {peer} hostname"
    )
    assert out.strip() == peer


def test_known_hosts_holds_real_host_keys(host):
    known = host.file("/etc/ssh/ssh_known_hosts").content_string
    own_key = " ".join(host.file("/etc/ssh/ssh_host_ed25519_key.pub").content_string.split()[:2])
    me = host.backend.get_hostname()
    lines = [line for line in known.splitlines() if own_key in line]
    assert lines, known
    assert me in lines[0].split()[0].split(",")
    assert lines[0].split()[1:] == own_key.split()  # "names type key", the host's comment dropped
    # names AND addresses
    assert re.search(r"(^|,)\d+\.\d+\.\d+\.\d+(,|$)", lines[0].split()[0])


def test_hostfile_slots_are_cores(host):
    content = host.file("/etc/horovod/hostfile").content_string
    entries = dict(re.findall(r"^(\S+) slots=(\d+)$", content, re.MULTILINE))
    assert set(entries) == set(HOSTS)
    assert entries[host.backend.get_hostname()] == host.check_output("nproc").strip()


def test_mpi_allreduce_across_hosts(host):
    if host.backend.get_hostname() != HOSTS[0]:
        pytest.skip("mpirun is started from mpic-1 only")
    cmd = host.run(
        "OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 120 mpirun --allow-run-as-root "
        "--hostfile /etc/horovod/hostfile --map-by node -np 4 /usr/local/bin/hvc_allreduce"
    )
    assert cmd.rc == 0, cmd.stderr
    ranks = re.findall(r"rank=(\d+) size=(\d+) host=(\S+) sum=(\d+)", cmd.stdout)
    assert sorted(int(r[0]) for r in ranks) == [0, 1, 2, 3]
    assert {r[2] for r in ranks} == set(HOSTS)
    assert {(int(r[1]), int(r[3])) for r in ranks} == {(4, 10)}
