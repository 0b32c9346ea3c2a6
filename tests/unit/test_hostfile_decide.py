"""hostfile decide step over recorded facts: slots = GPUs, cores, or the per-host override; bad slots refused."""
import json

import pytest

from ansible_run import host_facts, plans, run_role


def test_slots_from_gpus_cores_and_override(tmp_path):
    hosts = {
        "gpu1": host_facts("ubuntu24", "gpu1", vcpus=32,
                           extra={"hvc_platform": {"gpu": {"present": True, "count": 4}, "cores": 32}}),
        "cpu1": host_facts("debian12", "cpu1", vcpus=8, extra={"hvc_platform": {"gpu": None, "cores": 6}}),
        "pi1": host_facts("raspios12", "pi1", vcpus=4),
        "mac1": host_facts("macos14", "mac1", vcpus=10),
    }
    proc = run_role(tmp_path, "hostfile", hosts, host_vars={"mac1": {"hostfile_slots": 2,
                                                                      "hostfile_name": "mac1.lab"}})
    assert proc.returncode == 0, proc.stdout
    got = plans(proc)
    assert {host: (p["line"]["name"], int(p["line"]["slots"]), p["line"]["source"]) for host, p in got.items()} == {
        "gpu1": ("gpu1", 4, "GPUs"), "cpu1": ("cpu1", 6, "CPU cores"), "pi1": ("pi1", 4, "CPU cores"),
        "mac1": ("mac1.lab", 2, "hostfile_slots")}
    # Each host's plan has its own line and the file's size, not every host's lines.
    assert {(p["file_hosts"], p["file_slots"]) for p in got.values()} == {(4, 16)}
    assert "lines" not in got["gpu1"]
    assert "mac1.lab slots=2 (hostfile_slots); the file lists 4 of 4 hosts, 16 slots" in got["mac1"]["reason"]


def test_collected_and_published_once_unless_a_host_differs(tmp_path):
    """The lines are collected and the result published once per batch (on its first host) and shared; a
    host whose hostfile_hosts or hostfile_path differ from that host's gets its own."""
    hosts = {name: host_facts("debian12", name, vcpus=4) for name in ("a1", "a2", "a3", "b1")}
    proc = run_role(tmp_path, "hostfile", hosts, host_vars={"b1": {"hostfile_hosts": ["b1", "a2"]},
                                                           "a3": {"hostfile_path": "/srv/hostfile"}})
    assert proc.returncode == 0, proc.stdout
    found = {host: (plan["file_hosts"], plan["file_slots"], plan["path"]) for host, plan in plans(proc).items()}
    assert found == {"a1": (4, 16, "/etc/horovod/hostfile"), "a2": (4, 16, "/etc/horovod/hostfile"),
                     "a3": (4, 16, "/srv/hostfile"), "b1": (2, 8, "/etc/horovod/hostfile")}


@pytest.mark.parametrize("host_vars, needle", [
    ({"hostfile_slots": "many"}, "hostfile_slots"),
    ({"hostfile_slots": -2}, "hostfile_slots"),
    ({"hostfile_name": "bad name!"}, "hostfile_name"),
    ({"hostfile_path": "etc/hostfile"}, "hostfile_path"),
    ({"hostfile_hosts": ["h", "nothere"]}, "hostfile_hosts"),
])
def test_bad_input_fails_naming_the_variable(tmp_path, host_vars, needle):
    proc = run_role(tmp_path, "hostfile", {"h": host_facts("debian12", "h")}, host_vars={"h": host_vars})
    assert proc.returncode != 0
    assert needle in proc.stdout
    assert plans(proc) == {}


def test_hosts_outside_the_play_come_from_the_controller_record(tmp_path):
    """--limit cpu1: cpu2's line comes from its record of the last run; cpu3, never recorded, is left
    out and named (the play goes on instead of failing)."""
    records = tmp_path / "records"
    records.mkdir()
    (records / "cpu2.json").write_text(json.dumps({"name": "cpu2", "slots": 6, "source": "CPU cores",
                                                   "path": "/etc/horovod/hostfile"}))
    hosts = {name: host_facts("debian12", name, vcpus=4) for name in ("cpu1", "cpu2", "cpu3")}
    proc = run_role(tmp_path, "hostfile", hosts, limit="cpu1",
                    extra_vars={"hostfile_record_dir": str(records), "hostfile_hosts": list(hosts)})
    assert proc.returncode == 0, proc.stdout
    plan = plans(proc)["cpu1"]
    assert (plan["file_hosts"], plan["file_slots"]) == (2, 10)  # cpu1's 4 and cpu2's recorded 6
    assert "the hostfile leaves out cpu3" in proc.stdout
