"""The compatibility matrix's compiler patches against the real 0.28.1 sdist and this machine's compiler
(tests/compile_patches.py): each patch's regexp matches the file it is written for, and the translation units
that include each patched file first-hand compile after it. Before it, they compile with GCC 12 (the main
controller's); with GCC 14 (the controller of today's) each fails with the error its patch is for. GCC 13.3 on a
GPU host failed without the header patch: tests/unit/test_recorded_gpu_host.py."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
# each unit, the first GCC that rejects it unpatched and that error (Horovod #3957's headers, then flatbuffers' span)
UNITS = {"horovod/common/common.cc": (13, "logic_error"),
         "horovod/common/group_table.cc": (13, "does not name a type"),
         "horovod/common/message.cc": (14, "assignment of read-only member")}


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
    gcc = int(re.search(r"^g\+\+ .* (\d+)\.\d+\.\d+", result["compiler"]).group(1))
    for unit, (rejects_from, error) in UNITS.items():
        sides = result["units"][f"{unit} c++17"]
        assert sides["patched"]["exit"] == 0, (result["compiler"], unit, sides)
        if gcc < rejects_from:
            assert sides["unpatched"]["exit"] == 0, (result["compiler"], unit, sides)
        elif gcc >= 14:  # (GCC 13 is not here to say which of them it rejects)
            assert sides["unpatched"]["exit"] != 0 and error in sides["unpatched"]["first_error"], (unit, sides)
