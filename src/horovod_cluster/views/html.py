"""A check report as one self-contained HTML page, for people who read CI artifacts, not logs.

Inline CSS and an inline SVG plot; no script, no external file or font. The page is the Jinja2
template templates/check.html.j2, rendered with autoescape on: this module turns the report into
plain data (strings, numbers, lists; the plot's coordinates) and nothing in it is marked safe, so
every text that came from a host (names, versions, problems, command output) is escaped by the
template.
"""
from __future__ import annotations

import functools
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

if TYPE_CHECKING:
    from ..results import CheckReport

TEMPLATES = Path(__file__).resolve().parent / "templates"
_VERSIONS = ("python", "torch", "horovod", "mpirun", "cmake")
# The plot's canvas and margins (SVG user units): x is log2 of the message size, y log10 of busbw.
_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 640, 320, 70, 20, 20, 45
_MIN_LABEL_GAP = 48  # x labels closer than this (user units) to the one before are left out


def _text(value: Any) -> str:
    """A value from a host or a saved file as text for the template (which escapes it); None is empty."""
    return "" if value is None else str(value)


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def check_html(report: CheckReport) -> str:
    """The whole page: verdict, hosts, findings, job groups, smoke test, bandwidth, run failures."""
    run = report.run
    return _environment().get_template("check.html.j2").render(
        ok=report.ok,
        playbook=run.playbook or "",
        started=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(run.started)) if run.started else "-",
        duration=f"{run.duration:.1f}",
        host_count=len(set(report.hosts) | set(run.hosts)),
        versions=_VERSIONS,
        hosts=_hosts(report),
        findings=[{"key": _text(f.key), "severity": _text(f.severity), "message": _text(f.message),
                   "values": sorted((_text(h), _text(v)) for h, v in f.values.items())}
                  for f in report.findings],
        groups=[{"controller": _text(g.get("controller")), "hosts": _text(", ".join(g.get("hosts") or [])),
                 "tensors": _text(g.get("tensors"))} for g in report.job_groups.get("groups") or []],
        group_reasons=sorted((_text(c), _text(r)) for c, r in (report.job_groups.get("reasons") or {}).items()),
        smoke=None if report.smoke is None else _smoke(report),
        bandwidth=_bandwidth(report.bandwidth),
        failures=[{"name": _text(h.name), "status": _text(h.status), "task": _text(h.failure.task),
                   "play": _text(h.failure.play), "message": _text(h.failure.message)}
                  for h in sorted(run.hosts.values(), key=lambda h: h.name) if h.failure],
        run_error=run.error or "",
        run_rc="" if run.rc is None else str(run.rc),
    )


def _hosts(report: CheckReport) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(set(report.hosts) | set(report.run.hosts)):
        host = report.hosts.get(name, {})
        versions = host.get("versions") or {}
        run_host = report.run.hosts.get(name)
        problems = [str(p) for p in host.get("problems") or []]
        if name not in report.hosts:
            problems.append("no check result" + (f" ({run_host.status})" if run_host else ""))
        rows.append({
            "name": _text(name),
            "os_arch": f"{host.get('os', '')} {host.get('arch', '')}".strip() or "-",
            "versions": [str(versions.get(k) or "-") for k in _VERSIONS],
            "healthy": not problems and bool(host.get("healthy", False)),
            "problems": problems,
        })
    return rows


def _smoke(report: CheckReport) -> list[dict[str, Any]]:
    controllers = []
    for name, result in report.smoke_results.items():
        ranks = result.get("ranks") or []
        controllers.append({
            "name": _text(name),
            "ok": bool(result.get("ok")),
            "status": str(result.get("status") or ("passed" if result.get("ok") else "failed")),
            "detail": str(f"{result.get('size')} ranks in {result.get('seconds')} s" if ranks else
                          result.get("reason") or result.get("error") or ""),
            "ranks": [{"rank": _text(r.get("rank")), "host": _text(r.get("host")), "device": _text(r.get("device")),
                       "checks": ", ".join(f"{k} {'ok' if v else 'FAILED'}"
                                           for k, v in (r.get("checks") or {}).items()),
                       "ok": bool(r.get("ok")), "error": _text(r.get("error") or "")}
                      for r in ranks],
            "command": "" if result.get("ok") else str(result.get("command") or ""),
            "output": "" if result.get("ok") else str(result.get("output") or ""),
        })
    return controllers


def _bandwidth(bandwidth: dict[str, Any] | None) -> dict[str, Any] | None:
    if bandwidth is None:
        return None
    from ..results import torch_busbw  # results imports this module to render a report

    allreduce = bandwidth.get("allreduce") or {}
    rows = allreduce.get("rows") or []
    torch = bandwidth.get("torch_allreduce") or {}
    beside = torch_busbw(bandwidth)
    link = bandwidth.get("link") or {}
    over = bandwidth.get("busbw_over_link")

    def versus(row: dict[str, Any]) -> dict[str, str]:
        other = beside.get(row["bytes"])
        if other is None:
            return {"torch": "-", "ratio": "-"}
        return {"torch": f"{float(other):.4f}",
                "ratio": f"{float(row['busbw_GBps']) / float(other):.2f}" if float(other) > 0 else "-"}

    return {
        "size": _text(allreduce.get("size")),
        "algorithm": _text(allreduce.get("algorithm")),
        "torch_algorithm": _text(torch.get("algorithm")) if beside else "",
        "torch_error": "" if beside else _text(torch.get("error") or ""),
        "rows": [{"bytes": _text(r["bytes"]), "us": f"{float(r['seconds']) * 1e6:.1f}",
                  "algbw": f"{float(r['algbw_GBps']):.4f}", "busbw": f"{float(r['busbw_GBps']):.4f}", **versus(r)}
                 for r in rows],
        "plot": _plot(rows, torch.get("rows") or [] if beside else []) if rows else None,
        "reason": "" if rows else str(bandwidth.get("reason") or allreduce.get("error") or bandwidth.get("error")
                                      or "no table"),
        "command": "" if rows else str(allreduce.get("command") or ""),
        "output": "" if rows else str(allreduce.get("output") or ""),
        "link": {"from": _text(link.get("from")), "to": _text(link.get("to")), "GBps": f"{float(link['GBps']):.3f}"}
        if link.get("GBps") else None,
        "link_error": "" if link.get("GBps") else str(link.get("error") or ""),
        "busbw_over_link": None if over is None else f"{float(over):.3f}",
    }


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g}"  # pragma: no cover


def _y_range(lo: float, hi: float) -> tuple[float, float]:
    """The y axis's ends in log10 units: the measured min..max with a margin (no point on the axis),
    at least one decade wide."""
    a, b = math.log10(lo), math.log10(hi)
    if b - a < 1:
        mid = (a + b) / 2
        return mid - 0.5, mid + 0.5
    pad = 0.06 * (b - a)
    return a - pad, b + pad


def _y_ticks(bottom: float, top: float) -> list[float]:
    """Gridline values between the axis's ends (log10 units): 1-2-5 steps within three decades,
    decades beyond that (every other one or fewer where there are many)."""
    span = top - bottom
    steps = (1, 2, 5) if span <= 3 else (1,)
    every = max(1, math.ceil(span / 8))
    ticks = []
    for decade in range(math.floor(bottom), math.ceil(top) + 1):
        if decade % every:
            continue
        for m in steps:
            value = m * 10.0 ** decade
            if bottom <= math.log10(value) <= top:
                ticks.append(value)
    return ticks


def _plot(rows: list[dict[str, Any]], torch_rows: list[dict[str, Any]] = ()) -> dict[str, Any]:
    """busbw (GB/s, log10 y axis) over message size (log2 x axis, from the smallest size measured to the
    largest): a line, one circle per row; torch.distributed's rows, when measured beside, a dashed second line.
    A row without a positive size and busbw has no place on log axes: it stays in the table and is named
    under the plot."""
    measured = sorted((float(r["bytes"]), float(r["busbw_GBps"])) for r in rows)
    sizes = [s for s, _ in measured if 0 < s < math.inf]
    points = [(s, b) for s, b in measured if 0 < s < math.inf and 0 < b < math.inf]
    left_out = [f"{_size(s) if 0 < s < math.inf else f'{s:g} B'} (busbw {b:g} GB/s)"
                for s, b in measured if (s, b) not in points]
    if not points:
        return {"left_out": left_out, "svg": None}
    # torch's points share the axes where they fall inside Horovod's sizes (the same sizes, measured beside)
    torch_points = sorted((float(r["bytes"]), float(r["busbw_GBps"])) for r in torch_rows
                          if sizes[0] <= float(r["bytes"]) <= sizes[-1] and 0 < float(r["busbw_GBps"]) < math.inf)
    lo, hi = math.log2(sizes[0]), math.log2(sizes[-1])
    both = [b for _, b in points + torch_points]
    bottom, top = _y_range(min(both), max(both))
    width, height = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM

    def x(size: float) -> float:
        return round(_LEFT + (width / 2 if hi == lo else (math.log2(size) - lo) / (hi - lo) * width), 2)

    def y(gbps: float) -> float:
        return round(_TOP + height - (math.log10(gbps) - bottom) / (top - bottom) * height, 2)

    labels: list[dict[str, Any]] = []
    for size in sorted(set(sizes)):
        if labels and x(size) - labels[-1]["x"] < _MIN_LABEL_GAP:
            if size != sizes[-1]:
                continue
            labels.pop()  # the largest size is always labelled
        labels.append({"x": x(size), "text": _size(size)})
    return {
        "width": _W, "height": _H, "left": _LEFT, "right": _W - _RIGHT, "top": _TOP, "bottom": _TOP + height,
        "middle_x": _LEFT + width / 2, "middle_y": _TOP + height / 2, "label_y": _TOP + height + 16,
        "title_y": _H - 6,
        "grid": [{"y": y(v), "text_y": round(y(v) + 4, 2), "text": f"{v:g}"} for v in _y_ticks(bottom, top)],
        "x_labels": labels,
        "line": " ".join(f"{x(s)},{y(b)}" for s, b in points),
        "points": [{"x": x(s), "y": y(b), "title": f"{s:.0f} B: {b:.4g} GB/s"} for s, b in points],
        "torch_line": " ".join(f"{x(s)},{y(b)}" for s, b in torch_points),
        "torch_points": [{"x": x(s), "y": y(b), "title": f"torch.distributed {s:.0f} B: {b:.4g} GB/s"}
                         for s, b in torch_points],
        "legend_x": _LEFT + 12, "legend_y": _TOP + 14,
        "left_out": left_out,
        "svg": True,
    }
