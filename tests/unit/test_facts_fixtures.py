"""The fixture hosts' hvc_platform (tests/fixtures/facts/<host>.json) against the parser.

The plan tests read hvc_platform from the fixture files as written there; no test computes it
with plugins/module_utils/hvc_platform.py. Here the parser runs on the raw texts each fixture's
values were written from (SOURCES, listed in tests/fixtures/facts/README.md too) and must give the
same values: a parser change that disagrees with what those texts say fails here, not silently in
the plan tests. The setup keys of the same file must agree with its hvc_platform as well.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import hvc_platform as hp

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FACTS = FIXTURES / "facts"
QUERY_FIELDS = ["index", "name", "uuid", "driver_version", "memory.total", "compute_cap"]

# host: the raw texts (under tests/fixtures/) its hvc_platform was written from, and what the
# module reads from the host itself (Homebrew's path; the Python and core count come from the
# file's own setup keys). cpu-debian12 is left out: its hvc_platform was recorded by the module.
SOURCES = {
    "gpu-ubuntu2404": {"os_release": "os-release/ubuntu-24.04",
                       "nvidia_smi": "nvidia-smi/a100x2-driver580-cuda13.0.txt",
                       "nvidia_smi_query": "nvidia-smi/a100x2-driver580-query.csv"},
    "gpu-ubuntu2204": {"os_release": "os-release/ubuntu-22.04",
                       "nvidia_smi": "nvidia-smi/t4-driver535-cuda12.2.txt",
                       "nvidia_smi_query": "nvidia-smi/t4-driver535-query.csv"},
    "mac-m2": {"sw_vers": "sw_vers/macos-14.5", "brew": "/opt/homebrew/bin/brew"},
    "pi5-64": {"os_release": "os-release/raspios-12-arm64", "device_tree": "device-tree/rpi-5b",
               "rpi_issue": "rpi-issue/bookworm"},
    "pi4-32": {"os_release": "os-release/raspios-12-armhf", "device_tree": "device-tree/rpi-4b",
               "rpi_issue": "rpi-issue/bookworm"},
    "cpu-ubuntu2604": {"os_release": "os-release/ubuntu-26.04"},
    "cpu-debian13": {"os_release": "os-release/debian-13"},
    "pi5-trixie": {"os_release": "os-release/debian-13", "device_tree": "device-tree/rpi-5b"},
    "bad-rocky9": {"os_release": "os-release/rocky-9"},
    "bad-ubuntu2004": {"os_release": "os-release/ubuntu-20.04"},
    "bad-riscv64": {"os_release": "os-release/debian-12"},
    "bad-debian13": {"os_release": "os-release/debian-13"},
    "bad-mac12": {"sw_vers": "sw_vers/macos-12.7.4", "brew": "/usr/local/bin/brew"},
    "bad-mac-nobrew": {"sw_vers": "sw_vers/macos-14.5", "brew": None},
}


def load(host):
    return json.loads((FACTS / f"{host}.json").read_text(encoding="utf-8"))


def parsed(host, facts):
    """What the parser makes of the host's raw texts (with the module's inputs taken from facts)."""
    src = SOURCES[host]
    text = lambda key: (FIXTURES / src[key]).read_text(encoding="utf-8") if key in src else None
    gpu = None
    if "nvidia_smi" in src:
        banner = text("nvidia_smi")
        gpu = hp.build_gpu_facts(
            dev_nodes=[f"/dev/nvidia{g['index']}" for g in hp.parse_nvidia_smi_table(banner)],
            proc_driver_present=True, smi_path="/usr/bin/nvidia-smi", smi_header_text=banner,
            smi_query_rows=hp.parse_nvidia_smi_query(text("nvidia_smi_query"), QUERY_FIELDS))
    cores = facts["ansible_processor_vcpus"]
    return hp.build_platform(
        os_release_text=text("os_release"), system=facts["ansible_system"], machine=facts["ansible_machine"],
        userland_bits=int(facts["ansible_userspace_bits"]),
        device_tree_model_raw=(FIXTURES / src["device_tree"]).read_bytes() if "device_tree" in src else None,
        rpi_issue_text=text("rpi_issue"), sw_vers_text=text("sw_vers"), gpu=gpu, cores=cores,
        python_version=facts["ansible_python_version"], python_executable=facts["ansible_python"]["executable"],
        brew_path=src.get("brew") if facts["ansible_system"] == "Darwin" else None)


@pytest.mark.parametrize("host", sorted(SOURCES))
def test_parser_on_the_raw_texts_gives_the_fixture_values(host):
    facts = load(host)
    assert parsed(host, facts) == facts["hvc_platform"]


RECORDED = ["cpu-debian12", "_recorded-sandbox-debian12-arm64"]


@pytest.mark.parametrize("host", sorted(SOURCES) + RECORDED)
def test_setup_keys_agree_with_hvc_platform(host):
    facts = load(host)
    hvc = facts["hvc_platform"]
    assert facts["ansible_system"] == hvc["system"]
    assert facts["ansible_machine"].lower() == hvc["kernel_arch"]
    assert facts["ansible_python_version"] == hvc["python_version"]
    assert facts["ansible_processor_vcpus"] == hvc["cores"]
    assert int(facts["ansible_userspace_bits"]) == hvc["userland_bits"]
    if hvc["system"] == "Darwin":
        assert facts["ansible_distribution_version"] == hvc["os_version"]
        # Ansible reports the Darwin kernel release there (platform.release())
        assert facts["ansible_distribution_release"] == facts["ansible_kernel"]
    else:
        assert facts["ansible_distribution_major_version"] == hvc["os_version_major"]


@pytest.mark.parametrize("host", sorted(SOURCES) + RECORDED)
def test_no_key_ansible_does_not_emit_there(host):
    """setup sets ansible_userspace_architecture on x86_64 only (module_utils/facts/system/platform.py;
    the sandbox's arm64 recording has none)."""
    facts = load(host)
    if facts["ansible_machine"] != "x86_64":
        assert "ansible_userspace_architecture" not in facts


def test_every_host_has_its_own_address_and_mac():
    hosts = [load(p.stem) for p in FACTS.glob("*.json") if not p.name.startswith("_")]
    ipv4 = [h["ansible_default_ipv4"] for h in hosts]
    addresses = [i["address"] for i in ipv4]
    macs = [i["macaddress"] for i in ipv4]
    assert len(set(addresses)) == len(addresses)
    assert len(set(macs)) == len(macs)
