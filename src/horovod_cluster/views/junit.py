"""Results as JUnit XML, for CI test reports: one testsuite per run, one testcase per host (or role, check)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from ..results import CheckReport, PlanResult, Result, RolloutResult, WheelhouseResult


def junit(result: Result) -> str:
    """The whole document for any result."""
    if isinstance(result, RolloutResult):
        suites = [rollout_suite(result)]
    elif isinstance(result, PlanResult):
        suites = [plan_suite(result), rollout_suite(result.run)]
    elif isinstance(result, WheelhouseResult):
        suites = [rollout_suite(result.run)]
    else:
        suites = [check_suite(result)]
    root = ET.Element("testsuites")
    root.extend(suites)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def rollout_suite(run: RolloutResult) -> ET.Element:
    """One testcase per host; a failure/error names the task."""
    hosts = run.hosts.values()
    suite = ET.Element("testsuite", name=run.playbook, tests=str(len(hosts)),
                       failures=str(sum(1 for h in hosts if h.failed and not h.unreachable)),
                       errors=str(sum(1 for h in hosts if h.unreachable)), time=f"{run.duration:.3f}")
    for host in hosts:
        case = ET.SubElement(suite, "testcase", classname=run.playbook, name=host.name, time=f"{host.duration:.3f}")
        if host.failure:
            tag = "error" if host.failure.unreachable else "failure"
            node = ET.SubElement(case, tag, message=f"{host.failure.task}: {host.failure.message}"[:500])
            node.text = host.failure.message
        elif not host.succeeded:
            ET.SubElement(case, "failure", message=host.status)
        if host.warnings:
            ET.SubElement(case, "system-err").text = "\n".join(f"WARNING: {w}" for w in host.warnings)
    if run.error:
        case = ET.SubElement(suite, "testcase", classname=run.playbook, name="run")
        ET.SubElement(case, "error", message="playbook run failed").text = run.error
        suite.set("tests", str(len(hosts) + 1))
        suite.set("errors", str(int(suite.get("errors", "0")) + 1))
    return suite


def plan_suite(plan: PlanResult) -> ET.Element:
    """One testcase per host and role, the role's plan as its output."""
    suite = ET.Element("testsuite", name="plan", tests=str(sum(len(r) for r in plan.hosts.values())))
    for host, roles in plan.hosts.items():
        for role, decided in roles.items():
            case = ET.SubElement(suite, "testcase", classname=f"plan.{host}", name=role)
            ET.SubElement(case, "system-out").text = json.dumps(decided)
    return suite


def check_suite(report: CheckReport) -> ET.Element:
    """A testcase per host, per consistency finding and per smoke-test controller."""
    suite = ET.Element("testsuite", name="check")
    for name in sorted(set(report.hosts) | set(report.run.hosts)):
        case = ET.SubElement(suite, "testcase", classname="check.hosts", name=name)
        run_host = report.run.hosts.get(name)
        problems = list(report.hosts.get(name, {}).get("problems", []))
        if run_host and run_host.failure:
            problems.insert(0, f"{run_host.failure.task}: {run_host.failure.message}")
        elif name not in report.hosts:
            problems.append("no check result")
        if problems:
            ET.SubElement(case, "failure", message="; ".join(problems)[:500]).text = "\n".join(problems)
    for finding in report.findings:
        case = ET.SubElement(suite, "testcase", classname="check.consistency", name=finding.key)
        if finding.severity == "warning":
            ET.SubElement(case, "system-out").text = f"warning: {finding.message}"
        else:
            ET.SubElement(case, "failure", message=finding.message[:500]).text = json.dumps(finding.values)
    for name, result in report.smoke_results.items():
        case = ET.SubElement(suite, "testcase", classname="check.smoke", name=name)
        if result.get("status") == "skipped":
            ET.SubElement(case, "skipped", message=str(result.get("reason", "")))
        elif not result.get("ok"):
            reason = result.get("error") or result.get("reason") or "failed"
            node = ET.SubElement(case, "failure", message=str(reason)[:500])
            node.text = "\n".join(str(result.get(k, "")) for k in ("command", "output") if result.get(k))
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(len(suite.findall("testcase/failure"))))
    return suite
