"""A check report as one self-contained HTML page, for people who read CI artifacts, not logs.

Inline CSS and an inline SVG plot; no script, no external file or font. Every text that came from
a host (names, versions, problems, command output) is untrusted and goes through `_e`.
"""
from __future__ import annotations

import html
import math
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..results import CheckReport

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #17702a; font-weight: 600; } .bad { color: #b00020; font-weight: 600; }
.muted { color: #777; }
pre { background: #f6f6f6; padding: .5em; overflow-x: auto; max-height: 20em; white-space: pre-wrap; }
svg text { font: 11px sans-serif; fill: #333; }
"""

_VERSIONS = ("python", "torch", "horovod", "mpirun", "cmake")
# The plot's canvas and margins (SVG user units); x is log2 of the message size, y linear busbw.
_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 640, 320, 70, 20, 20, 45


def _e(value: Any) -> str:
    """Untrusted text (from a host or a saved file) as HTML text or attribute value."""
    return html.escape("" if value is None else str(value), quote=True)


def _verdict(ok: bool, good: str = "ok", bad: str = "failed") -> str:
    return f'<span class="ok">{good}</span>' if ok else f'<span class="bad">{bad}</span>'


def _table(head: list[str], rows: list[list[str]], numeric: frozenset[int] = frozenset(), **attrs: str) -> str:
    """A table of cells that are already HTML (escape them before); `numeric` columns right-aligned."""
    extra = "".join(f' {k.replace("_", "-")}="{_e(v)}"' for k, v in attrs.items())
    cells = "".join(f"<th>{h}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                         for i, c in enumerate(row)) + "</tr>\n" for row in rows)
    return f"<table{extra}>\n<thead><tr>{cells}</tr></thead>\n<tbody>\n{body}</tbody></table>\n"


def _pre(text: Any) -> str:
    return f"<pre>{_e(text)}</pre>\n" if text else ""


def check_html(report: CheckReport) -> str:
    """The whole page: verdict, hosts, findings, smoke test, bandwidth, run failures."""
    run = report.run
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(run.started)) if run.started else "-"
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        f"<title>horovod-cluster check: {'OK' if report.ok else 'FAILED'}</title>\n",
        f"<style>{_CSS}</style>\n</head>\n<body>\n",
        f"<h1>horovod-cluster check: {_verdict(report.ok, 'OK', 'FAILED')}</h1>\n",
        f'<p class="muted">{_e(run.playbook)}, started {started}, {run.duration:.1f} s, '
        f"{len(set(report.hosts) | set(run.hosts))} hosts</p>\n",
        _hosts(report), _findings(report), _smoke(report), _bandwidth(report.bandwidth), _run_failures(report),
        "</body>\n</html>\n",
    ]
    return "".join(parts)


def _hosts(report: CheckReport) -> str:
    rows = []
    for name in sorted(set(report.hosts) | set(report.run.hosts)):
        host = report.hosts.get(name, {})
        versions = host.get("versions") or {}
        run_host = report.run.hosts.get(name)
        problems = list(host.get("problems") or [])
        if name not in report.hosts:
            problems.append("no check result" + (f" ({run_host.status})" if run_host else ""))
        health = _verdict(not problems and host.get("healthy", False), "healthy", "problems")
        if problems:
            health += "<ul>" + "".join(f"<li>{_e(p)}</li>" for p in problems) + "</ul>"
        rows.append([_e(name), _e(f"{host.get('os', '')} {host.get('arch', '')}".strip() or "-"),
                     *(_e(versions.get(k) or "-") for k in _VERSIONS), health])
    head = ["host", "os / arch", *_VERSIONS, "health"]
    return "<h2>Hosts</h2>\n" + _table(head, rows, id="hosts") + '<p class="muted">- = not installed</p>\n'


def _findings(report: CheckReport) -> str:
    if not report.findings:
        return '<h2>Consistency</h2>\n<p id="findings"><span class="ok">no finding</span>: the hosts agree</p>\n'
    rows = [[_e(f.key), _e(f.severity), _e(f.message),
             "<br>".join(f"{_e(host)}: {_e(value)}" for host, value in sorted(f.values.items()))]
            for f in report.findings]
    return "<h2>Consistency</h2>\n" + _table(["key", "severity", "finding", "values"], rows, id="findings")


def _smoke(report: CheckReport) -> str:
    if report.smoke is None:
        return "<h2>Smoke test</h2>\n<p>not asked for (--no-smoke)</p>\n"
    parts = ["<h2>Smoke test</h2>\n"]
    for name, result in report.smoke_results.items():
        status = result.get("status") or ("passed" if result.get("ok") else "failed")
        detail = _e(f"{result.get('size')} ranks in {result.get('seconds')} s" if result.get("ranks") else
                    result.get("reason") or result.get("error") or "")
        parts.append(f"<h3>{_e(name)}: {_verdict(bool(result.get('ok')), _e(status), _e(status))}</h3>\n"
                     f"<p>{detail}</p>\n")
        ranks = result.get("ranks") or []
        if ranks:
            rows = [[_e(r.get("rank")), _e(r.get("host")), _e(r.get("device", "")),
                     _e(", ".join(f"{k} {'ok' if v else 'FAILED'}" for k, v in (r.get("checks") or {}).items())),
                     _verdict(bool(r.get("ok"))) + (f" {_e(r['error'])}" if r.get("error") else "")]
                    for r in ranks]
            parts.append(_table(["rank", "host", "device", "checks", "result"], rows, numeric=frozenset({0}),
                                id=f"smoke-{name}", data_controller=name))
        if not result.get("ok"):
            parts.append(_pre(result.get("command")) + _pre(result.get("output")))
    return "".join(parts)


def _bandwidth(bandwidth: dict[str, Any] | None) -> str:
    if bandwidth is None:
        return ""
    parts = ["<h2>Bandwidth</h2>\n"]
    allreduce = bandwidth.get("allreduce") or {}
    rows = allreduce.get("rows") or []
    if rows:
        parts.append(f"<p>allreduce over {_e(allreduce.get('size'))} ranks, {_e(allreduce.get('algorithm'))}"
                     " (bus bandwidth as nccl-tests computes it)</p>\n")
        parts.append(_plot(rows))
        parts.append(_table(
            ["size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)"],
            [[_e(r["bytes"]), f"{float(r['seconds']) * 1e6:.1f}", f"{float(r['algbw_GBps']):.4f}",
              f"{float(r['busbw_GBps']):.4f}"]
             for r in rows], numeric=frozenset({0, 1, 2, 3}), id="bandwidth"))
    else:
        reason = bandwidth.get("reason") or allreduce.get("error") or bandwidth.get("error") or "no table"
        parts.append(f"<p>allreduce bandwidth: not measured: {_e(reason)}</p>\n"
                     + _pre(allreduce.get("command")) + _pre(allreduce.get("output")))
    link = bandwidth.get("link") or {}
    if link.get("GBps"):
        parts.append(f"<p>link {_e(link.get('from'))} &rarr; {_e(link.get('to'))} (iperf3): "
                     f"{float(link['GBps']):.3f} GB/s</p>\n")
    elif link.get("error"):
        parts.append(f"<p>link bandwidth: {_e(link['error'])}</p>\n")
    if bandwidth.get("busbw_over_link") is not None:
        parts.append(f"<p>best busbw / link bandwidth: {float(bandwidth['busbw_over_link']):.3f}</p>\n")
    return "".join(parts)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g}"  # pragma: no cover


def _plot(rows: list[dict[str, Any]]) -> str:
    """busbw (GB/s, linear from 0) over message size (log2 x axis): a line, one circle per row."""
    points = sorted((float(r["bytes"]), float(r["busbw_GBps"])) for r in rows if float(r["bytes"]) > 0)
    if not points:
        return ""
    lo, hi = math.log2(points[0][0]), math.log2(points[-1][0])
    top = max(y for _, y in points) or 1.0
    step = 10 ** math.floor(math.log10(top / 4))  # about four gridlines, at round values
    step *= next(m for m in (1, 2, 2.5, 5, 10) if top / (step * m) <= 5)
    top = step * math.ceil(top / step)
    width, height = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM

    def x(size: float) -> float:
        return _LEFT + (width / 2 if hi == lo else (math.log2(size) - lo) / (hi - lo) * width)

    def y(gbps: float) -> float:
        return _TOP + height - gbps / top * height

    svg = [f'<svg id="busbw-plot" xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
           f'viewBox="0 0 {_W} {_H}" role="img" aria-label="allreduce bus bandwidth by message size">\n']
    for i in range(round(top / step) + 1):
        gy = y(i * step)
        svg.append(f'<line x1="{_LEFT}" y1="{gy:.1f}" x2="{_W - _RIGHT}" y2="{gy:.1f}" stroke="#e4e4e4"/>'
                   f'<text x="{_LEFT - 6}" y="{gy + 4:.1f}" text-anchor="end">{i * step:g}</text>\n')
    for size, _ in points:
        svg.append(f'<text x="{x(size):.1f}" y="{_TOP + height + 16}" text-anchor="middle">{_size(size)}</text>\n')
    svg.append(f'<line x1="{_LEFT}" y1="{_TOP + height}" x2="{_W - _RIGHT}" y2="{_TOP + height}" stroke="#888"/>'
               f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + height}" stroke="#888"/>\n'
               f'<text x="{_LEFT + width / 2}" y="{_H - 6}" text-anchor="middle">message size (log scale)</text>\n'
               f'<text transform="translate(14 {_TOP + height / 2}) rotate(-90)" text-anchor="middle">'
               "busbw (GB/s)</text>\n")
    line = " ".join(f"{x(s):.2f},{y(b):.2f}" for s, b in points)
    svg.append(f'<polyline points="{line}" fill="none" stroke="#1f5fa8" stroke-width="2"/>\n')
    for size, gbps in points:
        svg.append(f'<circle class="point" cx="{x(size):.2f}" cy="{y(gbps):.2f}" r="4" fill="#1f5fa8">'
                   f"<title>{size:.0f} B: {gbps:.4g} GB/s</title></circle>\n")
    svg.append("</svg>\n")
    return "".join(svg)


def _run_failures(report: CheckReport) -> str:
    run = report.run
    failed = [h for h in sorted(run.hosts.values(), key=lambda h: h.name) if h.failure]
    if not failed and not run.error:
        return ""
    parts = ["<h2>Run failures</h2>\n"]
    for host in failed:
        parts.append(f"<p><b>{_e(host.name)}</b> {_e(host.status)} at task <b>{_e(host.failure.task)}</b> "
                     f"(play {_e(host.failure.play)}):</p>\n" + _pre(host.failure.message))
    if run.error:
        parts.append(f"<p>the run failed (rc {_e(run.rc)}):</p>\n" + _pre(run.error))
    return "".join(parts)
