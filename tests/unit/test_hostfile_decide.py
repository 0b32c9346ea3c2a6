"""hostfile decide step over recorded facts: slots = GPUs, cores, or the per-host override; bad slots refused."""
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
    lines = plans(proc)["gpu1"]["lines"]
    assert [(line["name"], int(line["slots"]), line["source"]) for line in lines] == [
        ("gpu1", 4, "GPUs"), ("cpu1", 6, "CPU cores"), ("pi1", 4, "CPU cores"), ("mac1.lab", 2, "hostfile_slots")]


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
