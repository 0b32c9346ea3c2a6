"""Summary tables of results for the terminal (rich)."""
from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..results import CheckReport, PlanResult, Result, RolloutResult, WheelhouseResult, smoke_results, torch_busbw

_STYLE = {"ok": "green", "changed": "yellow", "failed": "bold red", "unreachable": "bold red"}


# Host names, task names, messages and versions come from the hosts and the saved results: printed as text,
# never as rich markup (a host "[/x]" was a traceback), their control characters shown as \xNN (an escape
# sequence would reach the terminal).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(value: object) -> str:
    return _CONTROL.sub(lambda found: "\\x%02x" % ord(found.group()), str(value))


def _safe(value: object) -> str:
    """A value to put inside markup."""
    return escape(_visible(value))


def _cells(*values: object) -> list[Text]:
    return [Text(_visible(value)) for value in values]


def render(result: Result, console: Console) -> None:
    if isinstance(result, PlanResult):
        _plan(result, console)
    elif isinstance(result, CheckReport):
        _check(result, console)
    elif isinstance(result, WheelhouseResult):
        _wheelhouse(result, console)
    _run(result if isinstance(result, RolloutResult) else result.run, console)
    if isinstance(result, RolloutResult):  # a rollout's closing smoke test (a check shows its own above)
        _settled(result.settled, console)
        _smoke(smoke_results(result.smoke), console)
    verdict = "[bold green]OK[/]" if result.ok else "[bold red]FAILED[/]"
    console.print(f"{result.kind}: {verdict}")


def _run(run: RolloutResult, console: Console) -> None:
    if not run.hosts and not run.error:
        console.print(f"{run.playbook}: no host ran", markup=False)
        return
    table = Table(title=Text(_visible(f"{run.playbook}  ({run.duration:.1f} s)")), title_justify="left")
    for column in ("host", "status", "ok", "changed", "failed", "unreachable", "skipped", "time"):
        table.add_column(column, justify="left" if column in ("host", "status") else "right")
    for host in sorted(run.hosts.values(), key=lambda h: h.name):
        style = _STYLE.get(host.status, "")
        table.add_row(Text(_visible(host.name)), Text(host.status, style=style),
                      *_cells(host.ok, host.changed, host.failed, host.unreachable, host.skipped,
                              f"{host.duration:.1f}s"))
    console.print(table)
    console.print(f"artifacts: {run.artifacts or '-'}", markup=False, highlight=False, soft_wrap=True)  # a path whole
    # Messages go below the table: they are long and must stay readable on a narrow CI log.
    for host in sorted(run.hosts.values(), key=lambda h: h.name):
        for warning in host.warnings:
            console.print(f"[bold yellow]WARNING[/] {_safe(host.name)}: ", end="")
            console.print(_visible(warning), markup=False, highlight=False)
    for host in sorted(run.hosts.values(), key=lambda h: h.name):
        if host.failure:
            console.print(f"[bold red]{_safe(host.name)}[/] {host.status} at task [bold]"
                          f"{_safe(host.failure.task)}[/] (play {_safe(host.failure.play)}):")
            console.print("  " + _visible(host.failure.message), markup=False, highlight=False)
    if run.error:
        console.print(f"[bold red]the run failed[/] (rc {run.rc}):")
        console.print(_visible(run.error), markup=False, highlight=False)


def _plan(result: PlanResult, console: Console) -> None:
    """Each host's roles in run order (as the plan lists them), then what the cluster as a whole will do."""
    table = Table("host", "role", "action", "method", "reason", title="plan", title_justify="left")
    for host, roles in sorted(result.hosts.items()):
        failure = result.run.hosts[host].failure if host in result.run.hosts else None
        for role, plan in roles.items():
            plan = plan if isinstance(plan, dict) else {"action": str(plan)}
            reason = str(plan.get("reason", ""))
            if failure and reason and reason in failure.message:  # a refusal: printed once, below the run
                reason = "(the failure below)"
            table.add_row(*_cells(host, role, plan.get("action", ""), plan.get("method", ""), reason))
    console.print(table)
    keys = result.platform_keys
    if keys:
        per_key = Table("Horovod platform key", "hosts", "compiled by", title="platform keys", title_justify="left")
        for key, entry in sorted(keys.items()):
            builder = ", ".join(entry["compiles"]) or ("a cached wheel" if entry["builder"] == "cache"
                                                       else "none needed")
            per_key.add_row(*_cells(key, ", ".join(entry["hosts"]), builder))
        console.print(per_key)
    _job_groups(result.job_groups, console)
    compiles = sum(len(entry["compiles"]) for entry in keys.values())
    console.print(f"cluster: {len(result.hosts)} hosts, {len(keys)} platform keys, {compiles} Horovod "
                  f"compile{'s' if compiles != 1 else ''}, {len(result.downloads)} wheel "
                  f"set{'s' if len(result.downloads) != 1 else ''} to download", highlight=False)


def _job_groups(job_groups: dict, console: Console) -> None:
    """Which hosts can run one job together, per controller, and why a controller cannot span every host."""
    if not job_groups.get("groups"):
        return
    table = Table("controller", "hosts", "tensors", title="job groups (hosts that can run one job)",
                  title_justify="left")
    for group in job_groups["groups"]:
        table.add_row(*_cells(group["controller"], ", ".join(group["hosts"]), group["tensors"]))
    console.print(table)
    for controller, reason in sorted((job_groups.get("reasons") or {}).items()):
        console.print(f"no {_safe(controller)} job spans every host: {_safe(reason)}", highlight=False)


def _wheelhouse(result: WheelhouseResult, console: Console) -> None:
    """One row per wheel set (folder name); the folders they live in are printed whole below."""
    table = Table("wheel set", "frameworks", "wheels", "hosts", title="controller wheelhouse", title_justify="left")
    for folder, entry in sorted(result.sets.items()):
        table.add_row(*_cells(Path(folder).name or "(none)", entry["requirement"] or "-", entry["wheels"],
                              ", ".join(entry["hosts"])))
    console.print(table)
    for parent in sorted({str(Path(folder).parent) for folder in result.sets if folder}):
        console.print(f"wheelhouse: {parent}", markup=False, highlight=False, soft_wrap=True)


def _check(report: CheckReport, console: Console) -> None:
    table = Table("host", "os / arch", "python", "torch", "horovod", "mpirun", "cmake", "health",
                  title="check (- = not installed)", title_justify="left")
    for name, host in sorted(report.hosts.items()):
        versions = host.get("versions", {})
        cells = _cells(*(versions.get(k) or "-" for k in ("python", "torch", "horovod", "mpirun", "cmake")))
        health = Text("problems", style="red") if host.get("problems") else Text("healthy", style="green")
        table.add_row(*_cells(name, f"{host.get('os', '')} {host.get('arch', '')}"), *cells, health)
    console.print(table)
    # Long texts below the table, one per line, so a narrow CI log keeps them whole.
    for name, host in sorted(report.hosts.items()):
        for problem in host.get("problems", []):
            console.print(f"[red]problem[/] {_safe(name)}: {_safe(problem)}")
    for finding in report.findings:
        label = "[yellow]warning[/]" if finding.severity == "warning" else "[bold red]finding[/]"
        console.print(f"{label} {_safe(finding.message)}", highlight=False)
    _job_groups(report.job_groups, console)
    _smoke(report.smoke_results, console)
    if report.bandwidth is not None:
        _bandwidth(report.bandwidth, console)


def _settled(settled: dict | None, console: Console) -> None:
    """site.yml's fast path: taken, or why not, with the hosts that share each reason."""
    if not settled:
        return
    if settled.get("settled"):
        console.print("settled: nothing changed since the last rollout, no role ran (cluster_rollout_fast_path)",
                      markup=False, highlight=False)
        return
    reasons: dict[str, list[str]] = {}
    for host, reason in sorted((settled.get("hosts") or {}).items()):
        reasons.setdefault(reason, []).append(host)
    lines = [f"{reason} ({', '.join(hosts)})" for reason, hosts in reasons.items()]
    console.print(_visible(f"settled: no, every role ran: {'; '.join(lines) or 'no host answered'}"), markup=False,
                  highlight=False)


def _smoke(results: dict[str, dict], console: Console) -> None:
    for name, result in results.items():
        verdict = result.get("status") or ("passed" if result.get("ok") else "failed")
        if result.get("ranks"):
            hosts = sorted({rank["host"] for rank in result["ranks"]})
            detail = f"{result.get('size')} ranks on {', '.join(hosts)} in {result.get('seconds')} s"
        else:
            detail = result.get("reason") or result.get("error") or ""
        label = "smoke" if name == "smoke" else f"smoke {name}"  # the summary form {status, reason}
        console.print(_visible(f"{label}: {verdict} {detail}"), markup=False, highlight=False)
        if result.get("command") and not result.get("ok"):
            console.print(_visible(f"  command: {result['command']}"), markup=False, highlight=False)


def _bandwidth(bandwidth: dict, console: Console) -> None:
    """The allreduce table in nccl-tests' terms, torch.distributed's busbw beside it, then the link it ran over."""
    allreduce = bandwidth.get("allreduce") or {}
    torch = bandwidth.get("torch_allreduce") or {}
    if allreduce.get("rows"):
        beside = torch_busbw(bandwidth)
        extra = ("torch busbw (GB/s)", "Horovod / torch") if beside else ()
        table = Table("size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", *extra,
                      title=Text(f"allreduce: {allreduce.get('size')} ranks, {allreduce.get('algorithm')}"
                                 + (f", beside {torch.get('algorithm')}" if beside else "")),
                      title_justify="left")
        for row in allreduce["rows"]:
            other = beside.get(row["bytes"])
            versus = ("-", "-") if other is None else (f"{other:.4f}",
                                                        f"{row['busbw_GBps'] / other:.2f}" if other > 0 else "-")
            table.add_row(*_cells(row["bytes"], f"{row['seconds'] * 1e6:.1f}", f"{row['algbw_GBps']:.4f}",
                                  f"{row['busbw_GBps']:.4f}", *(versus if beside else ())))
        console.print(table)
        if torch.get("error"):
            console.print(_visible(f"torch.distributed allreduce: {torch['error']}"), markup=False, highlight=False)
    elif bandwidth.get("status") or allreduce.get("error") or bandwidth.get("error"):
        reason = bandwidth.get("reason") or allreduce.get("error") or bandwidth.get("error")
        console.print(_visible(f"allreduce bandwidth: not measured: {reason}"), markup=False, highlight=False)
    link = bandwidth.get("link") or {}
    if link.get("GBps"):
        console.print(f"link {link['from']} -> {link['to']} (iperf3): {link['GBps']:.3f} GB/s", markup=False,
                      highlight=False)
    elif link.get("error"):
        console.print(_visible(f"link bandwidth: {link['error']}"), markup=False, highlight=False)
    if bandwidth.get("busbw_over_link") is not None:
        console.print(f"best busbw / link bandwidth: {bandwidth['busbw_over_link']:.3f}", highlight=False)
