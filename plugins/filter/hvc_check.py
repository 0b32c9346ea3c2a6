# -*- coding: utf-8 -*-
# Apache-2.0
"""check.yml's consistency rules as a pure function: what each host reported in, findings out.

Which differences break a Horovod job and which do not:
- horovod: the wire format of Horovod's messages is the version's own; two versions in one job is an error.
- controllers: a job started with --gloo or --mpi needs that controller in every host's build (read from
  the check-build result the horovod role keeps in its marker; a host without one, `unknown`, is left out).
- mpi_major: Open MPI 4 and 5 daemons do not talk to each other: an MPI job cannot span them (a Gloo job can:
  horovodrun starts it over ssh and Horovod does not initialise MPI then).
- gloo_transport: Horovod's Gloo speaks tcp on Linux and uv (libuv) on macOS, which do not talk to each other
  (pytorch/gloo#383): a Gloo job cannot span them (an MPI job can).
- python: one training script and one pickled object format on every rank (major.minor).
- torch: tensors travel as raw buffers, so torch on an arm64 board may be another release than on the
  x86 hosts (PyTorch publishes other builds per architecture: a Pi often has an older CPU build). A
  difference only *across* architectures, with one major version, is a warning; a difference between
  hosts of one architecture, a major version apart, or torch missing somewhere is an error.
"""
from __future__ import annotations

KEYS = ("python", "torch", "horovod", "mpi_major", "controllers", "gloo_transport")
# The one job controller a difference breaks (every one unless named here), and what to do instead.
ONLY_FOR = {"mpi_major": ("mpi", "a Gloo job can span them (--controller gloo), an MPI job cannot"),
            "gloo_transport": ("gloo", "Gloo's tcp (Linux) and uv (macOS) transports do not talk to each other "
                                       "(pytorch/gloo#383): an MPI job can span them (--controller mpi), a Gloo "
                                       "job cannot")}


def _values_text(values):
    return ", ".join("%s=%s" % (host, value) for host, value in sorted(values.items()))


def _torch_warning(values, arches):
    """Why a torch difference is harmless, or None when it is not."""
    if "absent" in values.values():
        return None
    by_arch = {}
    for host, version in values.items():
        by_arch.setdefault(arches.get(host, "?"), set()).add(version)
    if any(len(versions) > 1 for versions in by_arch.values()):
        return None
    if len({str(version).split(".")[0] for version in values.values()}) > 1:
        return None
    per_arch = "; ".join("%s: %s" % (arch, ", ".join(sorted(versions))) for arch, versions in sorted(by_arch.items()))
    return ("torch differs only across architectures (%s): harmless for a Horovod job (tensors travel as raw "
            "buffers), but a model must load and train alike under both releases" % per_arch)


def check_findings(hosts, keys=KEYS):
    """`hosts`: {host: {'arch': ..., 'compare': {key: value}}}. Returns [{key, severity, message, values,
    only_for}], severity `error` (the hosts cannot train together: in a job of any controller, or only of the
    controller `only_for` names) or `warning` (they can; said so the user knows)."""
    hosts = dict(hosts or {})
    arches = {host: (data or {}).get("arch") for host, data in hosts.items()}
    findings = []
    for key in keys:
        values = {host: ((data or {}).get("compare") or {}).get(key, "absent") for host, data in hosts.items()}
        if key in ("controllers", "gloo_transport"):
            values = {host: value for host, value in values.items() if value != "unknown"}
        if len(set(values.values())) < 2:
            continue
        warning = _torch_warning(values, arches) if key == "torch" else None
        only, why = ONLY_FOR.get(key, ("", ""))
        message = ("%s: %s" % (warning, _values_text(values)) if warning
                   else "hosts disagree on %s: %s" % (key, _values_text(values)))
        findings.append({
            "key": key,
            "severity": "warning" if warning else "error",
            "message": "%s (%s)" % (message, why) if why else message,
            "values": values,
            "only_for": only,
        })
    return findings


def _major_minor(version):
    return ".".join(str(version or "").split(".")[:2])


def check_record(versions):
    """One host's record from what hvc_probe.py printed on it: {compare: the values check_findings compares,
    absent and unknown as values too; job: what another host must share with this one to run one job (as the
    plan's hvc_horovod.plan.job, here measured); problems, healthy}."""
    versions = dict(versions or {})
    python = _major_minor(versions.get("python"))
    mpi_major = (versions.get("mpirun") or "").split(".")[0]
    problems = ["%s not installed" % name for name in ("horovod", "torch") if not versions.get(name)]
    return {
        "compare": {
            "python": python,
            "torch": versions.get("torch") or "absent",
            "horovod": versions.get("horovod") or "absent",
            "mpi_major": mpi_major or "absent",
            "controllers": versions.get("controllers") or "unknown",
            "gloo_transport": versions.get("gloo_transport") or "unknown",
        },
        "job": {
            "python": python,
            "gloo_transport": versions.get("gloo_transport") or "",
            "mpi_major": mpi_major,
            "gpu": "nccl" in (versions.get("tensor_operations") or "").split(","),
            "controllers": [name for name in (versions.get("controllers") or "").split(",") if name],
        },
        "problems": problems,
        "healthy": not problems,
    }


class FilterModule(object):
    def filters(self):
        return {"hvc_check_findings": check_findings, "hvc_check_record": check_record}
