"""horovod_build_info run by Ansible itself against a fake interpreter that prints check-build fixtures."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_run import module_env

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "check_build"
ANSIBLE = shutil.which("ansible") or str(Path(sys.executable).parent / "ansible")

pytestmark = pytest.mark.skipif(not Path(ANSIBLE).exists(), reason="ansible CLI not installed")


def run_module(tmp_path, fixture, args):
    (tmp_path / "env" / "bin").mkdir(parents=True, exist_ok=True)
    fake = tmp_path / "env" / "bin" / "python"
    fake.write_text(
        "#!/bin/sh\n"
        # the import probe (-c "...find_spec('horovod')...") succeeds; check-build prints the fixture
        f"case \"$*\" in *--check-build*) cat '{FIXTURES / fixture}';; esac\nexit 0\n")
    fake.chmod(0o755)
    env = module_env()
    proc = subprocess.run(
        [ANSIBLE, "localhost", "-c", "local", "-i", "localhost,", "--check", "-m", "horovod_build_info",
         "-a", json.dumps(dict(args, python=str(fake)))],
        env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    data = json.loads(proc.stdout)
    return data["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_module_reports_capabilities_in_check_mode(tmp_path):
    res = run_module(tmp_path, "cpu_gloo_mpi.txt", {"expect": {"controllers": ["gloo", "mpi"]}})
    assert not res.get("failed") and res["changed"] is False
    assert res["installed"] is True and res["version"] == "0.28.1"
    assert res["capabilities"]["frameworks"] == ["pytorch"]
    assert res["ansible_facts"]["horovod_build_info"]["capabilities"]["controllers"] == ["gloo", "mpi"]


def test_module_fails_naming_missing_capability(tmp_path):
    res = run_module(tmp_path, "cpu_gloo_mpi.txt", {"expect": {"tensor_operations": ["nccl"]}})
    assert res["failed"] is True and "tensor_operations:nccl" in res["msg"]


def test_module_nothing_built_fails(tmp_path):
    res = run_module(tmp_path, "nothing_built.txt", {"expect": {"frameworks": ["pytorch"]}})
    assert res["failed"] is True and res["missing"] == ["frameworks:pytorch"]


@pytest.mark.parametrize("prefix, reported", [
    ("/opt/horovod/openmpi", "/opt/horovod/openmpi"),
    ("/opt/x; touch /tmp/pwned", ""),  # reaches horovodrun's shell line: only a plain path is passed on
])
def test_module_reports_the_markers_open_mpi_prefix(tmp_path, prefix, reported):
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / ".horovod-platform-key.json").write_text(json.dumps({"mpi_prefix": prefix}))
    res = run_module(tmp_path, "cpu_gloo_mpi.txt", {})
    assert res["mpi_prefix"] == reported
    assert res["ansible_facts"]["horovod_build_info"]["mpi_prefix"] == reported
