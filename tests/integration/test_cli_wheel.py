"""`pip install` of the wheel into a fresh venv, then the CLI from another folder uses the
wheel's own content (site.yml, playbooks, roles) with a user inventory given by path.

The venv borrows this environment's dependencies (a .pth line) so the test needs no download
of ansible; only the wheel's build backend comes from the package index.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "api"


def run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)


def test_installed_wheel_works_outside_the_checkout(tmp_path):
    built = run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(tmp_path / "dist")])
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("horovod_cluster-*.whl"))
    with zipfile.ZipFile(wheel) as archive:  # issue 44: typed, licensed
        names = archive.namelist()
    assert "horovod_cluster/py.typed" in names and "horovod_cluster/schemas/rollout.schema.json" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    Path(purelib, "zz-borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)])
    assert installed.returncode == 0, installed.stderr

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "my-inventory").mkdir(parents=True)
    (elsewhere / "my-inventory" / "hosts.yml").write_text((FIXTURES / "local.yml").read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("HOROVOD_CLUSTER_CONTENT", "VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["HOROVOD_CLUSTER_ARTIFACTS"] = str(tmp_path / "runs")

    where = run([str(python), "-c", "import horovod_cluster.content as c; print(c.content_dir())"], env=env,
                cwd=elsewhere)
    assert where.stdout.strip().startswith(str(purelib)), where.stdout + where.stderr

    done = run([str(env_dir / "bin" / "horovod-cluster"), "check", "-i", "my-inventory", "--json", "check.json"],
               env=env, cwd=elsewhere)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1 while horovod is not installed
    report = json.loads((elsewhere / "check.json").read_text())
    assert report["kind"] == "check" and sorted(report["hosts"]) == ["local1", "local2"]
    assert report["run"]["rc"] == 0
