"""check.yml's consistency rules (plugins/filter/hvc_check.py): which host differences fail a check."""
from __future__ import annotations

import hvc_check


def host(arch="x86_64", **compare):
    base = {"python": "3.11", "torch": "2.13.0+cpu", "horovod": "0.28.1", "mpi_major": "4",
            "controllers": "gloo,mpi"}
    base.update(compare)
    return {"arch": arch, "compare": base}


def by_key(findings):
    return {f["key"]: f for f in findings}


def test_agreeing_hosts_have_no_finding():
    assert hvc_check.check_findings({"a": host(), "b": host(), "c": host()}) == []


def test_torch_across_architectures_is_a_warning():
    hosts = {"x1": host(), "x2": host(), "pi": host("aarch64", torch="2.5.1")}
    [finding] = hvc_check.check_findings(hosts)
    assert finding["key"] == "torch" and finding["severity"] == "warning"
    assert "aarch64: 2.5.1; x86_64: 2.13.0+cpu" in finding["message"]
    assert finding["values"] == {"x1": "2.13.0+cpu", "x2": "2.13.0+cpu", "pi": "2.5.1"}


def test_torch_within_one_architecture_is_an_error():
    hosts = {"x1": host(), "x2": host(torch="2.12.0+cpu"), "pi": host("aarch64", torch="2.5.1")}
    [finding] = hvc_check.check_findings(hosts)
    assert finding["severity"] == "error" and finding["message"].startswith("hosts disagree on torch")


def test_torch_a_major_version_apart_or_missing_is_an_error():
    major = {"x1": host(), "pi": host("aarch64", torch="1.13.1")}
    assert by_key(hvc_check.check_findings(major))["torch"]["severity"] == "error"
    missing = {"x1": host(), "pi": host("aarch64", torch="absent")}
    assert by_key(hvc_check.check_findings(missing))["torch"]["severity"] == "error"


def test_horovod_mpi_python_and_controllers_are_errors_even_across_architectures():
    hosts = {"x1": host(), "pi": host("aarch64", horovod="0.28.0", mpi_major="5", python="3.12",
                                      controllers="gloo")}
    found = by_key(hvc_check.check_findings(hosts))
    assert sorted(found) == ["controllers", "horovod", "mpi_major", "python"]
    assert {f["severity"] for f in found.values()} == {"error"}
    assert found["controllers"]["message"] == "hosts disagree on controllers: pi=gloo, x1=gloo,mpi"


def test_a_host_without_a_recorded_check_build_is_left_out_of_controllers():
    hosts = {"x1": host(), "x2": host(controllers="unknown")}
    assert hvc_check.check_findings(hosts) == []


def test_open_mpi_majors_break_mpi_jobs_only():
    [finding] = hvc_check.check_findings({"x1": host(), "x2": host(mpi_major="5")})
    assert (finding["key"], finding["severity"], finding["only_for"]) == ("mpi_major", "error", "mpi")
    assert finding["message"] == ("hosts disagree on mpi_major: x1=4, x2=5 (a Gloo job can span them "
                                  "(--controller gloo), an MPI job cannot)")


def test_gloo_transports_break_gloo_jobs_only():
    hosts = {"x1": host(gloo_transport="tcp"), "mac": host("arm64", gloo_transport="uv")}
    [finding] = hvc_check.check_findings(hosts)
    assert (finding["key"], finding["severity"], finding["only_for"]) == ("gloo_transport", "error", "gloo")
    assert finding["message"].startswith("hosts disagree on gloo_transport: mac=uv, x1=tcp (")
    assert "pytorch/gloo#383" in finding["message"] and "--controller mpi" in finding["message"]


def test_every_other_difference_breaks_every_job_and_an_unknown_transport_is_left_out():
    hosts = {"x1": host(gloo_transport="tcp"), "x2": host(horovod="0.28.0", gloo_transport="unknown")}
    [finding] = hvc_check.check_findings(hosts)
    assert (finding["key"], finding["only_for"]) == ("horovod", "")


# What roles/horovod_check/files/hvc_probe.py prints on a rolled-out sandbox host (Debian 12, torch 2.13.0); what
# it cannot find it prints as null
PROBED = {"python": "3.11.2", "torch": "2.13.0+cpu", "horovod": "0.28.1",
          "mpirun": "4.1.4", "mpi_prefix": "", "cmake": "3.25.1", "controllers": "gloo,mpi",
          "tensor_operations": "gloo,mpi", "gloo_transport": "tcp"}


def test_a_hosts_record_from_its_probe():
    record = hvc_check.check_record(PROBED)
    assert record["compare"] == {"python": "3.11", "torch": "2.13.0+cpu", "horovod": "0.28.1", "mpi_major": "4",
                                 "controllers": "gloo,mpi", "gloo_transport": "tcp"}
    assert record["job"] == {"python": "3.11", "gloo_transport": "tcp", "mpi_major": "4", "gpu": False,
                             "controllers": ["gloo", "mpi"]}
    assert record["problems"] == [] and record["healthy"] is True
    assert hvc_check.check_record({**PROBED, "tensor_operations": "gloo,mpi,nccl"})["job"]["gpu"] is True


def test_what_a_bare_host_lacks_is_a_value_compared_and_a_problem():
    bare = {**PROBED, "torch": None, "horovod": None, "mpirun": None, "controllers": None, "tensor_operations": None}
    record = hvc_check.check_record(bare)
    assert record["compare"] == {"python": "3.11", "torch": "absent", "horovod": "absent", "mpi_major": "absent",
                                 "controllers": "unknown", "gloo_transport": "tcp"}
    assert record["job"] == {"python": "3.11", "gloo_transport": "tcp", "mpi_major": "", "gpu": False,
                             "controllers": []}
    assert record["problems"] == ["horovod not installed", "torch not installed"] and not record["healthy"]
    # two such hosts beside a full one: the check's findings name the missing pieces
    hosts = {"a": {"arch": "x86_64", **hvc_check.check_record(PROBED)}, "b": {"arch": "x86_64", **record}}
    assert {f["key"] for f in hvc_check.check_findings(hosts)} == {"torch", "horovod", "mpi_major"}
