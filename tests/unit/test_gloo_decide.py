"""gloo decide step over recorded facts: libuv packages per platform, skip with a reason, bad input."""
from ansible_run import host_facts, plans, run_role


def test_packages_per_platform(tmp_path):
    hosts = {"deb": host_facts("debian12", "deb"), "mac": host_facts("macos14", "mac")}
    proc = run_role(tmp_path, "gloo", hosts, host_vars={"mac": {}})
    assert proc.returncode == 0, proc.stdout
    got = plans(proc)
    assert got["deb"]["packages"] == ["libuv1-dev", "pkg-config"]
    assert got["deb"]["method"] == "distro"
    assert got["mac"]["packages"] == ["libuv", "pkg-config"]
    assert got["mac"]["method"] == "homebrew"


def test_disabled_is_skipped_with_reason_and_bad_value_refused(tmp_path):
    proc = run_role(tmp_path, "gloo", {"h": host_facts("debian12", "h")}, {"gloo_enabled": False})
    assert plans(proc)["h"]["action"] == "skip"
    assert plans(proc)["h"]["reason"] == "gloo_enabled is false"
    proc = run_role(tmp_path, "gloo", {"h": host_facts("debian12", "h")}, {"gloo_enabled": "sometimes"})
    assert proc.returncode != 0
    assert "gloo_enabled" in proc.stdout
