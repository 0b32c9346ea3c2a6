"""Typed results of plan, rollout and check runs, and their JSON form (the data model).

Results are built only from a finished run's events (see `RolloutResult.from_outcome`) and the
`set_stats` data the playbooks publish; `from_json` restores a saved result for `report`.
Their renderings (terminal, JUnit, HTML) live in `horovod_cluster.views`.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from .outcome import RunOutcome

# The JSON documents' form (schemas/<kind>.schema.json); raised when a key goes or changes meaning.
SCHEMA_VERSION = 1

# runner event name -> the HostResult counter it increments
_COUNTERS = {
    "runner_on_ok": "ok",
    "runner_on_failed": "failed",
    "runner_on_unreachable": "unreachable",
    "runner_on_skipped": "skipped",
}


class _Documented:
    """`.to_junit()`, a documented name of every result; the rendering itself is a view's."""

    def to_junit(self) -> str:
        from .views.junit import junit  # at call time: the model never depends on its views
        return junit(self)  # type: ignore[arg-type]


@dataclass
class TaskFailure:
    """The task that failed (or found the host unreachable) and ansible's message."""

    task: str
    play: str
    message: str
    unreachable: bool = False


@dataclass
class HostResult:
    """One host's outcome over the whole run; counts follow ansible's play recap."""

    name: str
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0
    rescued: int = 0
    ignored: int = 0
    duration: float = 0.0
    failure: TaskFailure | None = None
    # play name -> task results seen for this host in that play
    plays: dict[str, int] = field(default_factory=dict)
    # ansible's warnings in this host's task results (e.g. preflight's misspelt variable names)
    warnings: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.unreachable:
            return "unreachable"
        if self.failed:
            return "failed"
        return "changed" if self.changed else "ok"

    @property
    def succeeded(self) -> bool:
        return not (self.failed or self.unreachable)


@dataclass
class RolloutResult(_Documented):
    """The outcome of one playbook run (rollout, retry, or the run under plan/check)."""

    playbook: str
    status: str
    rc: int
    artifacts: str
    started: float
    finished: float
    hosts: dict[str, HostResult] = field(default_factory=dict)
    plays: list[str] = field(default_factory=list)
    limit: str | None = None
    check_mode: bool = False
    error: str = ""  # set when the run failed with no host to blame (syntax error, bad vars)
    options: dict[str, Any] = field(default_factory=dict)  # what was asked, for retry_failed
    # A rollout's closing smoke test as check.yml published it: per controller {ok, ...}, or
    # {status: skipped, reason}; None when the run published none (another playbook, stopped earlier).
    smoke: dict[str, Any] | None = None
    # site.yml's fast path (playbooks/settled.yml): {settled: bool, hosts: {host: "settled" or why not}};
    # None when the run published none (another playbook, or --tags).
    settled: dict[str, Any] | None = None

    kind = "rollout"

    @property
    def duration(self) -> float:
        return self.finished - self.started

    @property
    def ok(self) -> bool:
        return self.rc == 0 and all(h.succeeded for h in self.hosts.values())

    @property
    def failed_hosts(self) -> list[str]:
        return sorted(name for name, h in self.hosts.items() if not h.succeeded)

    @classmethod
    def from_outcome(cls, outcome: RunOutcome, **extra: Any) -> RolloutResult:
        result = cls(
            playbook=outcome.playbook, status=outcome.status, rc=outcome.rc,
            artifacts=str(outcome.artifacts), started=outcome.started,
            finished=outcome.finished, **extra,
        )
        for event in outcome.events:
            result._apply(event)
        result._apply_recap(outcome.stats)
        if outcome.rc != 0 and all(h.succeeded for h in result.hosts.values()):
            result.error = outcome.stdout_tail() or f"ansible-playbook exited with {outcome.rc}"
        return result

    def _host(self, name: str) -> HostResult:
        return self.hosts.setdefault(name, HostResult(name))

    def _apply(self, event: dict[str, Any]) -> None:
        kind = event.get("event", "")
        data = event.get("event_data", {})
        if kind == "playbook_on_play_start":
            self.plays.append(data.get("play", ""))
            return
        if kind not in _COUNTERS or not data.get("host"):
            return
        host = self._host(data["host"])
        play = data.get("play", "")
        host.plays[play] = host.plays.get(play, 0) + 1
        host.duration += float(data.get("duration") or 0.0)
        for warning in (data.get("res") or {}).get("warnings") or []:
            if str(warning) not in host.warnings:
                host.warnings.append(str(warning))
        # The last failure is the one that stopped the host: an earlier one may have been rescued
        # (a block's rescue that then reports why, e.g. the horovod role's stopped compile).
        if kind in ("runner_on_failed", "runner_on_unreachable") and not data.get("ignore_errors"):
            host.failure = TaskFailure(
                task=data.get("task", ""), play=play, message=failure_message(data.get("res", {})),
                unreachable=kind == "runner_on_unreachable",
            )

    def _apply_recap(self, stats: dict[str, Any]) -> None:
        """The play recap is authoritative for the counts (it knows rescued and ignored)."""
        recap = {"ok": "ok", "changed": "changed", "failures": "failed", "dark": "unreachable",
                 "skipped": "skipped", "rescued": "rescued", "ignored": "ignored"}
        for key, attr in recap.items():
            for name, count in (stats.get(key) or {}).items():
                setattr(self._host(name), attr, int(count))
        for host in self.hosts.values():
            if not host.failed and not host.unreachable:
                host.failure = None  # every failure of this host was rescued

    def to_dict(self) -> dict[str, Any]:
        data = {"schema_version": SCHEMA_VERSION, **asdict(self)}
        data.update(kind=self.kind, ok=self.ok, duration=round(self.duration, 3))
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RolloutResult:
        hosts = {}
        for name, h in data.get("hosts", {}).items():
            failure = TaskFailure(**h["failure"]) if h.get("failure") else None
            hosts[name] = HostResult(**{**h, "failure": failure})
        fields = {k: data[k] for k in ("playbook", "status", "rc", "artifacts", "started", "finished",
                                       "plays", "limit", "check_mode", "error", "options", "smoke", "settled") if k in data}
        return cls(hosts=hosts, **fields)


def torch_busbw(bandwidth: dict[str, Any]) -> dict[int, float]:
    """torch.distributed's busbw (GB/s) by message size, measured beside Horovod's by the check ({} if not)."""
    rows = (bandwidth.get("torch_allreduce") or {}).get("rows") or []
    return {row["bytes"]: row["busbw_GBps"] for row in rows}


def smoke_results(smoke: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The smoke test per controller ({gloo: {ok, ...}, mpi: {...}}), as horovod_check records it;
    a summary form {status, reason} counts as one entry named "smoke"."""
    if not smoke:
        return {}
    if "status" in smoke:
        return {"smoke": {**smoke, "ok": smoke["status"] in ("passed", "skipped")}}
    return {name: value for name, value in smoke.items() if isinstance(value, dict)}


def _item_failed(item: Any) -> bool:
    """A loop item that failed: ansible-core <= 2.20 marks it `failed`; 2.21's events leave `failed` out of
    the items and keep a failed item's `exception` (measured with ansible-runner 2.4.3)."""
    return isinstance(item, dict) and bool(item.get("failed", "exception" in item))


def failure_message(res: dict[str, Any]) -> str:
    """ansible's own message for a failed task; falls back to stderr or the return code. A loop's own
    msg is "One or more items failed": the failed items carry the role's messages."""
    items = [failure_message(item) for item in res.get("results") or [] if _item_failed(item)]
    if items:
        return "\n".join(items)
    for key in ("msg", "stderr", "reason"):
        value = res.get(key)
        if value:
            return str(value).strip()
    return f"rc={res['rc']}" if "rc" in res else "failed"


@dataclass
class PlanResult(_Documented):
    """Per host, per role: what the role's decide step will do ({action, method, reason, ...}), and the
    cluster's job groups: which hosts can run one Horovod job together ({groups: [{controller, hosts, tensors,
    agree}], spans: {controller: bool}, reasons: {controller: why not}}; plugins/filter/hvc_job_groups.py)."""

    hosts: dict[str, dict[str, dict[str, Any]]]
    run: RolloutResult
    job_groups: dict[str, Any] = field(default_factory=dict)

    kind = "plan"

    @property
    def ok(self) -> bool:
        return self.run.ok

    @property
    def platform_keys(self) -> dict[str, dict[str, Any]]:
        """Per Horovod platform key: its hosts, the host that compiles it ("" none, "cache" a cached wheel)
        and the hosts that compile it (more than one only where wheels are not shared)."""
        keys: dict[str, dict[str, Any]] = {}
        for host, roles in sorted(self.hosts.items()):
            horovod = roles.get("horovod") if isinstance(roles.get("horovod"), dict) else {}
            if not horovod.get("platform_key"):
                continue
            entry = keys.setdefault(horovod["platform_key"], {"hosts": [], "builder": "", "compiles": []})
            entry["hosts"].append(host)
            entry["builder"] = entry["builder"] or horovod.get("builder") or ""
            if horovod.get("action") == "build":
                entry["compiles"].append(host)
        return keys

    @property
    def downloads(self) -> list[dict[str, Any]]:
        """The wheel sets the controller downloads into its wheelhouse first (python_env's fill), each once."""
        sets = {}
        for roles in self.hosts.values():
            fill = (roles.get("python_env") or {}).get("fill") if isinstance(roles.get("python_env"), dict) else None
            if fill:
                sets.setdefault((fill.get("dir"), fill.get("marker")), fill)
        return list(sets.values())

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "kind": self.kind, "ok": self.ok, "hosts": self.hosts,
                "job_groups": self.job_groups, "run": self.run.to_dict()}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlanResult:
        return cls(hosts=data.get("hosts", {}), run=RolloutResult.from_dict(data["run"]),
                   job_groups=data.get("job_groups") or {})


@dataclass
class WheelhouseResult(_Documented):
    """The controller wheelhouse after a fill: per host its wheel set {dir, requirement, wheels, downloaded}."""

    hosts: dict[str, dict[str, Any]]
    run: RolloutResult

    kind = "wheelhouse"

    @property
    def ok(self) -> bool:
        return self.run.ok

    @property
    def sets(self) -> dict[str, dict[str, Any]]:
        """Per wheel-set folder: its requirement, wheel count and the hosts that use it."""
        sets: dict[str, dict[str, Any]] = {}
        for host, info in sorted(self.hosts.items()):
            entry = sets.setdefault(info.get("dir", ""), {"requirement": info.get("requirement", ""),
                                                          "wheels": info.get("wheels", 0), "hosts": []})
            entry["hosts"].append(host)
        return sets

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "kind": self.kind, "ok": self.ok, "hosts": self.hosts,
                "run": self.run.to_dict()}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WheelhouseResult:
        return cls(hosts=data.get("hosts", {}), run=RolloutResult.from_dict(data["run"]))


@dataclass
class Finding:
    """Hosts that will train together but disagree, e.g. on the torch version. An `error` breaks a
    Horovod job (of any controller, or only of `only_for`'s: Open MPI majors break MPI jobs, Gloo's
    transports Gloo jobs); a `warning` does not (torch differing only across architectures, see check.yml)."""

    key: str
    message: str
    values: dict[str, Any]  # host -> its value
    severity: str = "error"
    only_for: str = ""  # "" every controller, else the one whose jobs it breaks


@dataclass
class CheckReport(_Documented):
    """The structured result check.yml publishes as `hvc_check`, plus the run under it.

    `ok` means: the run had no failed or unreachable host, every host is healthy (check.yml
    lists its `problems`, e.g. "horovod not installed"), there is no consistency error (warnings
    are reported only), and
    the smoke test (when asked for) passed for every controller or was skipped with a reason,
    and at least one host was checked.
    A host without horovod is therefore not ok.
    """

    hosts: dict[str, dict[str, Any]]
    findings: list[Finding]
    smoke: dict[str, Any] | None
    bandwidth: dict[str, Any] | None
    run: RolloutResult
    job_groups: dict[str, Any] = field(default_factory=dict)  # as PlanResult's, over what the hosts have

    kind = "check"

    @property
    def unhealthy_hosts(self) -> list[str]:
        bad = {name for name, host in self.hosts.items() if not host.get("healthy", False)}
        return sorted(bad | set(self.run.failed_hosts))

    @property
    def smoke_results(self) -> dict[str, dict[str, Any]]:
        return smoke_results(self.smoke)

    @property
    def smoke_ok(self) -> bool:
        if self.smoke is None:  # not asked for
            return True
        results = self.smoke_results
        return bool(results) and all(result.get("ok") for result in results.values())

    @property
    def errors(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity != "warning"]

    @property
    def warnings(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "warning"]

    @property
    def ok(self) -> bool:
        checked = bool(self.hosts)  # a check of no host at all proves nothing
        return checked and self.run.ok and not self.unhealthy_hosts and not self.errors and self.smoke_ok

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "kind": self.kind, "ok": self.ok, "hosts": self.hosts,
                "findings": [asdict(f) for f in self.findings], "job_groups": self.job_groups, "smoke": self.smoke,
                "bandwidth": self.bandwidth, "unhealthy_hosts": self.unhealthy_hosts,
                "run": self.run.to_dict()}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_html(self) -> str:
        """One self-contained page (inline CSS and SVG plot) for CI artifacts, a documented name; see views.html."""
        from .views.html import check_html  # at call time: the model never depends on its views
        return check_html(self)

    @classmethod
    def from_stats(cls, data: dict[str, Any] | None, run: RolloutResult) -> CheckReport:
        data = data or {}
        findings = [Finding(key=f.get("key", ""), message=f.get("message", ""), values=f.get("values", {}),
                            severity=f.get("severity", "error"), only_for=f.get("only_for", ""))
                    for f in data.get("findings") or []]
        return cls(hosts=data.get("hosts") or {}, findings=findings, smoke=data.get("smoke"),
                   bandwidth=data.get("bandwidth"), run=run, job_groups=data.get("job_groups") or {})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckReport:
        return cls.from_stats(data, RolloutResult.from_dict(data["run"]))


Result = RolloutResult | PlanResult | CheckReport | WheelhouseResult


def from_json(text: str) -> Result:
    """Restore a result saved with `to_json` (used by `horovod-cluster report`); ValueError for any
    text that is not one (not JSON, truncated, another shape)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        if data.get("schema_version", SCHEMA_VERSION) > SCHEMA_VERSION:  # none: saved before versions, same form
            raise ValueError(f"schema_version {data['schema_version']} is newer than this one reads ({SCHEMA_VERSION})")
        kinds = {"rollout": RolloutResult, "plan": PlanResult, "check": CheckReport,
                 "wheelhouse": WheelhouseResult}
        return kinds[data.get("kind", "rollout")].from_dict(data)
    except (KeyError, TypeError, AttributeError) as err:  # a field missing or of another type
        raise ValueError(f"unexpected shape ({type(err).__name__}: {err})") from None
