"""gloo decide step over recorded facts: libuv only where Horovod's Gloo uses it (macOS's uv transport), nothing on
Linux (its tcp transport is built in), the transport each host's Gloo speaks, skip with a reason, bad input."""
from ansible_run import host_facts, plans, run_role


def test_libuv_only_on_macos_and_the_transport_per_platform(tmp_path):
    hosts = {"deb": host_facts("debian12", "deb"), "mac": host_facts("macos14", "mac")}
    proc = run_role(tmp_path, "gloo", hosts, host_vars={"mac": {}})
    assert proc.returncode == 0, proc.stdout
    got = plans(proc)
    assert got["deb"]["packages"] == []
    assert (got["deb"]["action"], got["deb"]["method"], got["deb"]["transport"]) == ("none", "bundled", "tcp")
    assert "built-in tcp transport on Linux" in got["deb"]["reason"]
    assert got["mac"]["packages"] == ["libuv", "pkg-config"]
    assert (got["mac"]["action"], got["mac"]["method"], got["mac"]["transport"]) == ("install", "homebrew", "uv")


def test_a_rootless_linux_host_needs_nothing_for_gloo(tmp_path):
    proc = run_role(tmp_path, "gloo", {"h": host_facts("debian12", "h")}, {"cluster_rootless": True})
    assert proc.returncode == 0, proc.stdout
    assert plans(proc)["h"]["packages"] == [] and plans(proc)["h"]["action"] == "none"


def test_disabled_is_skipped_with_reason_and_bad_value_refused(tmp_path):
    proc = run_role(tmp_path, "gloo", {"h": host_facts("debian12", "h")}, {"gloo_enabled": False})
    assert plans(proc)["h"]["action"] == "skip"
    assert plans(proc)["h"]["reason"] == "gloo_enabled is false"
    proc = run_role(tmp_path, "gloo", {"h": host_facts("debian12", "h")}, {"gloo_enabled": "sometimes"})
    assert proc.returncode != 0
    assert "gloo_enabled" in proc.stdout
