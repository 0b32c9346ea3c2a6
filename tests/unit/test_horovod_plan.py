"""Decision logic of the horovod role: rebuild on key change, nothing when unchanged, recovery
after an interrupted build/install, one builder per platform key."""
import pytest

from horovod_build import horovod_platform_key
from horovod_plan import horovod_builders, horovod_host_state, horovod_plan

PLATFORM = {"os": "debian12", "arch": "x86_64", "python": "3.11.2", "frameworks": {"pytorch": "2.13.0+cpu"},
            "mpi_version": "4.1.4", "horovod": "0.28.1", "gpu_operations": "none"}
KEY = horovod_platform_key(PLATFORM)
DONE = {"platform_key": KEY, "installed": "0.28.1", "marker": {"platform_key": KEY}, "cached_wheels": ["w.whl"]}


def decide(hosts, options=None):
    """hosts: {name: state} -> {name: plan}, as decide.yml does across the play."""
    states = {h: dict(horovod_host_state(s, options), platform_key=s["platform_key"]) for h, s in hosts.items()}
    builders = horovod_builders([dict(host=h, **s) for h, s in states.items()])
    return {h: horovod_plan(dict(host=h, **s), builders, options) for h, s in states.items()}


def test_unchanged_does_nothing():
    plans = decide({"a": DONE, "b": DONE})
    assert {p["action"] for p in plans.values()} == {"none"}
    assert "matches" in plans["a"]["reason"]


def test_torch_pin_change_rebuilds_once():
    new_key = horovod_platform_key(dict(PLATFORM, frameworks={"pytorch": "2.14.1+cpu"}))
    assert new_key != KEY
    changed = dict(DONE, platform_key=new_key, cached_wheels=[])
    plans = decide({"b": changed, "a": changed, "c": changed})
    assert [h for h, p in plans.items() if p["action"] == "build"] == ["a"]
    assert plans["b"] == {"platform_key": new_key, "action": "install_wheel", "method": "wheel_from_builder",
                          "builder": "a", "reason": f"platform key changed from {KEY}", "rejected_wheels": []}


def test_a_rejected_cached_wheel_is_built_again_and_named_in_the_plan():
    rejected = [{"path": f"/cache/wheels/{KEY}/horovod-0.28.1-cp311-cp311-linux_x86_64.whl",
                 "reason": "no manifest, and not a whole zip archive (File is not a zip file)"}]
    fresh = dict(DONE, installed=None, marker={}, cached_wheels=[], rejected_wheels=rejected)
    plans = decide({"a": fresh, "b": fresh})
    assert plans["a"]["action"] == "build" and plans["b"]["method"] == "wheel_from_builder"
    assert plans["a"]["rejected_wheels"] == rejected


def test_changed_installed_file_reinstalls_the_cached_wheel():
    damaged = dict(DONE, damaged=["horovod/torch/mpi_lib_v2.cpython-311-x86_64-linux-gnu.so"])
    plans = decide({"a": damaged, "b": DONE})
    assert plans["a"]["action"] == "install_wheel" and plans["a"]["method"] == "wheel_from_cache"
    assert plans["a"]["reason"] == ("installed horovod files missing or changed: "
                                    "horovod/torch/mpi_lib_v2.cpython-311-x86_64-linux-gnu.so")
    assert plans["b"]["action"] == "none"


def test_cached_wheel_means_no_compile():
    fresh = {"platform_key": KEY, "installed": None, "marker": {}, "cached_wheels": ["w.whl"]}
    plans = decide({"a": fresh, "b": fresh})
    assert {p["method"] for p in plans.values()} == {"wheel_from_cache"}


def test_fresh_cluster_one_build_per_key():
    other = horovod_platform_key(dict(PLATFORM, arch="aarch64"))
    fresh = {"installed": None, "marker": {}, "cached_wheels": []}
    plans = decide({"x1": dict(fresh, platform_key=KEY), "x2": dict(fresh, platform_key=KEY),
                    "pi": dict(fresh, platform_key=other)})
    assert plans["x1"]["action"] == "build" and plans["x2"]["builder"] == "x1"
    assert plans["pi"]["action"] == "build" and plans["pi"]["builder"] == "pi"  # its key has no other builder


def test_up_to_date_host_is_not_the_builder():
    fresh = {"platform_key": KEY, "installed": None, "marker": {}, "cached_wheels": []}
    plans = decide({"a": dict(DONE, cached_wheels=[]), "b": fresh})
    assert plans["a"]["action"] == "none" and plans["b"]["action"] == "build"


@pytest.mark.parametrize("marker", [{}, {"corrupt": True}])
def test_interrupted_install_is_redone(marker):
    """A killed build never installs; a killed install removed the marker first: both redo the work."""
    half = {"platform_key": KEY, "installed": "0.28.1", "marker": marker, "cached_wheels": []}
    plan = decide({"a": half})["a"]
    assert plan["action"] == "build" and "did not finish" in plan["reason"]


def test_force_rebuild_builds_even_with_cache():
    plans = decide({"a": DONE, "b": DONE}, {"force_rebuild": True})
    assert plans["a"]["action"] == "build" and plans["b"]["method"] == "wheel_from_builder"


def test_no_sharing_every_host_builds():
    fresh = {"platform_key": KEY, "installed": None, "marker": {}, "cached_wheels": ["w.whl"]}
    plans = decide({"a": fresh, "b": fresh}, {"share_wheels": False, "source": "git"})
    assert {p["method"] for p in plans.values()} == {"build_git"}


def test_missing_key():
    with pytest.raises(ValueError, match="platform_key"):
        horovod_host_state({})
