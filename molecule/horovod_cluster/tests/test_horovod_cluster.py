"""horovod_cluster: one compile per platform key, the wheel installed on every host, a working allreduce."""
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "plugins" / "module_utils"))
from horovod_check_build import parse_check_build  # noqa: E402

VENV = "/opt/horovod/venv"
MARKER = f"{VENV}/.horovod-platform-key.json"
HOSTS = ["horovod-cluster-1", "horovod-cluster-2"]


def _host(name):
    import testinfra
    return testinfra.get_host(f"podman://{name}")


def _marker(host):
    return json.loads(host.file(MARKER).content_string)


def test_check_build_shows_pytorch_gloo_mpi(host):
    out = host.check_output(f"{VENV}/bin/horovodrun --check-build")
    got = parse_check_build(out)
    assert got["version"] == "0.28.1"
    assert "pytorch" in got["frameworks"]
    assert set(got["controllers"]) == {"gloo", "mpi"}
    assert {"gloo", "mpi"} <= set(got["tensor_operations"])


def test_marker_names_the_platform_key(host):
    marker = _marker(host)
    assert marker["platform_key"].startswith("hvd0.28.1-debian12-x86_64-py3.11-pytorch2.13.0_cpu-cpu-gpuopsnone-mpi4")
    assert marker["wheel"].startswith("horovod-0.28.1-cp311-cp311-linux_x86_64")


def test_exactly_one_compile_per_key():
    """All hosts share one key and one wheel; one host compiled it (none when a shared cache had it)."""
    markers = {name: _marker(_host(name)) for name in HOSTS}
    assert len({m["platform_key"] for m in markers.values()}) == 1
    assert len({m["wheel_sha256"] for m in markers.values()}) == 1
    builders = [n for n, m in markers.items() if m["method"].startswith("build_")]
    # Logs of finished builds (side_effect's killed rebuild leaves a .failed.log, not counted).
    finished_logs = "ls /var/log/horovod-build-*.log | grep -v '[.]failed[.]log$'"
    logs = [n for n in HOSTS if _host(n).run(finished_logs).rc == 0]
    assert builders == logs
    if os.environ.get("HOROVOD_ARTIFACTS_DIR"):
        assert len(builders) <= 1
    else:  # the scenario's own cache was emptied by prepare: exactly one compile
        assert builders == ["horovod-cluster-1"]
        # converge: from the builder; after side_effect's simulated interruption: from the cache
        assert markers["horovod-cluster-2"]["method"] in ("wheel_from_builder", "wheel_from_cache")
        log = _host("horovod-cluster-1").check_output(f"cat $({finished_logs})")
        assert "Building wheel for horovod" in log or "Created wheel for horovod" in log


def test_no_build_leftovers(host):
    assert not host.file("/opt/horovod/build").exists


@pytest.mark.parametrize("controller", ["--gloo", "--mpi"])
def test_two_process_allreduce_sum(host, controller):
    script = ("import torch, horovod.torch as hvd; hvd.init(); "
              "t = torch.tensor([float(hvd.rank() + 1), 10.0]); "
              "print('SUM', hvd.size(), hvd.allreduce(t, op=hvd.Sum).tolist())")
    cmd = (f"OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 180 "
           f"{VENV}/bin/horovodrun -np 2 -H localhost:2 {controller} {VENV}/bin/python -c \"{script}\"")
    out = host.check_output(cmd)
    lines = [line for line in out.splitlines() if "SUM" in line]
    assert len(lines) == 2, out
    assert all(line.endswith("SUM 2 [3.0, 20.0]") for line in lines), lines


def test_rerun_after_interruption():
    """side_effect broke host 2's install and left a half build on host 1; the re-run repaired host 2
    from the controller's wheel (no compile) and did nothing on host 1."""
    plans = {}
    for name in HOSTS:
        f = _host(name).file("/root/horovod-rerun-plan.json")
        if not f.exists:
            pytest.skip("side_effect did not run (molecule verify alone)")
        plans[name] = json.loads(f.content_string)
    assert plans["horovod-cluster-2"]["action"] == "install_wheel"
    assert plans["horovod-cluster-2"]["method"] == "wheel_from_cache"
    assert "did not finish" in plans["horovod-cluster-2"]["reason"]
    assert plans["horovod-cluster-1"]["action"] == "none"
    assert _marker(_host("horovod-cluster-2"))["method"] == "wheel_from_cache"


def test_killed_rebuild_left_the_install_working():
    """side_effect killed a forced rebuild on host 1 mid-compile (the build's time limit): the role
    reported it with the log kept, removed the build folder, and the installed horovod is untouched."""
    host = _host("horovod-cluster-1")
    record = host.file("/root/horovod-killed-build.json")
    if not record.exists:
        pytest.skip("side_effect did not run (molecule verify alone)")
    killed = json.loads(record.content_string)
    assert killed["failed_task"].endswith("Horovod | Report the failed build"), killed
    assert "Timeout exceeded (horovod_build_timeout=60 s)" in killed["msg"]
    assert "nothing was installed" in killed["msg"]
    assert host.run("ls /var/log/horovod-build-*.failed.log").rc == 0
    assert not host.file("/opt/horovod/build").exists
    marker = _marker(host)
    assert marker["method"].startswith("build_") or marker["method"].startswith("wheel_")
    out = host.check_output(f"{VENV}/bin/python -c 'import horovod.torch as hvd; print(hvd.gloo_built())'")
    assert out.strip() == "True"
