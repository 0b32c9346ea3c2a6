"""Every module of the project documents itself: `ansible-doc` parses its DOCUMENTATION (a YAML error
there once hid horovod_build_info's docs) and every option has a description and a type."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if not p.name.startswith("_"))
ANSIBLE_DOC = shutil.which("ansible-doc", path=str(Path(sys.executable).parent)) or shutil.which("ansible-doc")


@pytest.mark.parametrize("module", MODULES)
def test_ansible_doc_reads_the_module(module):
    done = subprocess.run([ANSIBLE_DOC, "-t", "module", "--json", module], capture_output=True, text=True,
                          env={**os.environ, "ANSIBLE_LIBRARY": str(ROOT / "plugins" / "modules")})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)[module]["doc"]
    assert doc["short_description"] and doc["description"]
    assert doc["options"], "no options documented"
    for name, option in doc["options"].items():
        assert option.get("description") and option.get("type"), f"{module}: option {name}"
