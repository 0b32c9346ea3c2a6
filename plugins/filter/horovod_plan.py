"""The horovod role's decision, as pure functions (used by roles/horovod/tasks/decide.yml).

Step 1, per host: `horovod_host_state(state, options)` ->
    {"platform_key": str, "needs": bool, "build_candidate": bool, "reason": str}
  state:   {"platform_key": str, "installed": "0.28.1" | None, "marker": {...} | {}, "cached_wheels": [paths],
            "rejected_wheels": [{"path", "reason"}] (cached wheels that failed their check: horovod_wheels.py),
            "damaged": [installed files that differ from the wheel's RECORD]}
  options: {"force_rebuild": bool, "share_wheels": bool}
  A host needs horovod when it is not installed, its marker names another platform key (or is
  missing/corrupt: an interrupted build or install never wrote it), an installed file is missing or
  differs from its RECORD hash (`damaged`), or a rebuild is forced.
  It must build (build_candidate) when it needs horovod and no wheel of its key is cached (or a
  rebuild is forced, or wheels are not shared).

Step 2, once per batch: `horovod_builders(peers)` -> {platform_key: builder host}
  peers: [{"host", "platform_key", "build_candidate"}] of all play hosts.
  The builder of a key is the first host, sorted by name, among the build candidates of that key.
  Computed once, not by every host: every host reading every host's state grows with the square
  of the hosts (a 200-host plan).

Step 3, per host: `horovod_plan(me, builders, options)` -> the plan
    {"action": build|install_wheel|none, "method", "reason", "platform_key", "builder"}
  The builder builds; the others of its key install its wheel after the controller collected it.
  A key no builder covers (or wheels not shared) is built by the host itself.
"""
from __future__ import annotations


def horovod_host_state(state: dict, options: dict | None = None) -> dict:
    state = dict(state or {})
    options = dict(options or {})
    key = state.get("platform_key")
    if not key:
        raise ValueError("horovod_host_state: state.platform_key is missing")
    force = bool(options.get("force_rebuild"))
    share = options.get("share_wheels", True)
    marker = state.get("marker") or {}
    installed = state.get("installed")
    # the probe's check of the installed files against the wheel's RECORD (hashes): a deleted or
    # changed file makes the host reinstall, as a missing install does
    damaged = list(state.get("damaged") or [])
    if force:
        reason = "horovod_force_rebuild is true"
    elif not installed:
        reason = "horovod not installed"
    elif not marker.get("platform_key"):
        reason = "no marker (an earlier build or install did not finish)"
    elif marker.get("platform_key") != key:
        reason = f"platform key changed from {marker.get('platform_key')}"
    elif damaged:
        reason = "installed horovod files missing or changed: " + ", ".join(damaged)
    else:
        reason = f"installed horovod matches platform key {key}"
    needs = force or not installed or marker.get("platform_key") != key or bool(damaged)
    cached = list(state.get("cached_wheels") or []) if share else []
    build_candidate = bool(needs and (force or not cached or not share))
    return {"platform_key": key, "needs": bool(needs), "build_candidate": build_candidate, "reason": reason,
            "rejected_wheels": list(state.get("rejected_wheels") or []) if share else []}


def horovod_builders(peers: list) -> dict:
    builders = {}
    for peer in sorted(peers or [], key=lambda p: p["host"]):
        if peer.get("build_candidate"):
            builders.setdefault(peer.get("platform_key"), peer["host"])
    return builders


def horovod_plan(me: dict, builders: dict, options: dict | None = None) -> dict:
    me = dict(me or {})
    options = dict(options or {})
    share = options.get("share_wheels", True)
    source = options.get("source", "pypi")
    key = me["platform_key"]
    host = me["host"]
    # the cached wheels of this key that may not be installed: named in the plan, replaced by its builder
    plan = {"platform_key": key, "reason": me.get("reason", ""), "rejected_wheels": list(me.get("rejected_wheels") or [])}
    if not me.get("needs"):
        plan.update(action="none", method="marker_matches", builder="")
        return plan
    if not me.get("build_candidate"):
        plan.update(action="install_wheel", method="wheel_from_cache", builder="cache")
        return plan
    builder = (builders or {}).get(key) if share else None
    builder = builder or host
    if builder == host:
        plan.update(action="build", method=f"build_{source}", builder=host)
    else:
        plan.update(action="install_wheel", method="wheel_from_builder", builder=builder)
    return plan


class FilterModule:
    """horovod_host_state, horovod_builders, horovod_plan."""

    def filters(self):
        return {"horovod_host_state": horovod_host_state, "horovod_builders": horovod_builders,
                "horovod_plan": horovod_plan}
