"""The compatibility matrix's compiler patches against the real 0.28.1 sdist and this machine's compiler
(tests/compile_patches.py): each patch's regexp matches the file it is written for, and the translation units
that include each patched file first-hand compile before and after (GCC 12 here needs none of them; GCC 13.3
on a GPU host failed without the header patch: tests/unit/test_recorded_gpu_host.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
UNITS = ["horovod/common/common.cc", "horovod/common/group_table.cc", "horovod/common/message.cc"]


def test_patched_units_compile_with_this_compiler(tmp_path):
    defaults = yaml.safe_load((REPO / "roles/horovod/defaults/main.yml").read_text())
    version = defaults["horovod_version"]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary=:all:", "-d",
                    str(tmp_path), f"horovod=={version}"], check=True)
    sdist = tmp_path / f"horovod-{version}.tar.gz"
    digest = subprocess.run(["sha256sum", str(sdist)], capture_output=True, text=True, check=True).stdout.split()[0]
    assert digest == defaults["horovod_sdist_sha256"]
    done = subprocess.run([sys.executable, str(REPO / "tests/compile_patches.py"), str(sdist), "--units", *UNITS],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]  # every patch found its lines (else it exits non-zero)
    result = json.loads(done.stdout)
    assert set(result["units"]) == {f"{unit} c++17" for unit in UNITS}
    for unit, sides in result["units"].items():
        assert sides["unpatched"]["exit"] == 0 and sides["patched"]["exit"] == 0, (result["compiler"], unit, sides)
