"""What preflight detected on the container, checked against the container itself."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

EXPECTED_IS_PI = os.environ.get("HVC_EXPECT_RASPBERRY_PI", "0") == "1"


@pytest.fixture
def recorded(host):
    name = host.backend.get_hostname()
    path = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / f"preflight-{name}.json"
    return json.loads(path.read_text())


def test_arch_matches_uname(host, recorded):
    machine = host.check_output("uname -m")
    assert recorded["hvc_platform"]["kernel_arch"] == machine
    assert recorded["hvc_platform"]["arch"] == {"x86_64": "x86_64", "aarch64": "aarch64"}[machine]


def test_os_matches_os_release(host, recorded):
    os_release = host.file("/etc/os-release").content_string
    facts = recorded["hvc_platform"]
    assert "ID=debian" in os_release and facts["os_id_raw"] == "debian"
    release = re.search(r'^VERSION_ID="([0-9]+)"$', os_release, re.M)
    assert release and release[1] in ("12", "13"), os_release
    assert facts["os_version"] == release[1] and facts["os_family"] == "debian"
    assert facts["os_id"] == ("raspios" if EXPECTED_IS_PI else "debian")


def test_cores_and_python(host, recorded):
    facts = recorded["hvc_platform"]
    assert facts["cores"] == int(host.check_output("nproc"))
    python = host.check_output("python3 -c 'import platform; print(platform.python_version())'")
    assert facts["python_version"] == python


def test_raspberry_pi_detection(recorded):
    facts = recorded["hvc_platform"]
    assert facts["is_raspberry_pi"] is EXPECTED_IS_PI
    if EXPECTED_IS_PI:
        assert facts["device_model"].startswith("Raspberry Pi")


def test_no_gpu_and_plan_passes(recorded):
    assert recorded["hvc_platform"]["gpu"]["present"] is False
    assert recorded["hvc_platform"]["gpu"]["count"] == 0
    assert recorded["plan"]["action"] == "pass" and recorded["plan"]["errors"] == []


def test_nothing_changed_on_the_host(host):
    """No file under the system's folders is newer than the marker prepare left before converge."""
    assert host.file("/var/tmp/hvc-preflight-marker").exists
    changed = host.check_output(
        "find /etc /usr /opt /var/lib/dpkg /var/lib/apt /home /root -xdev -newer /var/tmp/hvc-preflight-marker "
        "-not -path '/root/.ansible*' -not -path '/root/.cache*' -print")
    assert changed == "", changed
