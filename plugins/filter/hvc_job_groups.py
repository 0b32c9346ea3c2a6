# -*- coding: utf-8 -*-
# Apache-2.0
"""Which hosts can run one Horovod job together, with which controller and on which tensor device: the
cluster's job groups, as one pure function (plan.yml publishes them as `hvc_job_groups`).

The rules, from Horovod 0.28.1's sources and the packages each OS ships:
- every rank runs one training script and one pickled object format: one Python major.minor;
- Gloo: one transport, since Horovod builds Gloo's tcp transport on Linux and its uv (libuv) transport on macOS
  (horovod/common/gloo/gloo_context.cc), and the two do not talk to each other (pytorch/gloo#383);
- MPI: one Open MPI major, since Open MPI 4.1 and 5.0 do not run one job;
- tensors: NCCL (CUDA tensors) only when every host of the group has GPU operations; a collective whose ranks
  put their tensors on different devices is refused by Horovod (horovod/common/controller.cc, "Mismatched ...
  CPU/GPU device selection"), so a group of GPU and CPU hosts trains on CPU tensors.
"""
from __future__ import annotations

# controller -> the host value its jobs need to agree on, and what that value is called in a reason
_AGREE = {"gloo": ("gloo_transport", "Gloo transports"), "mpi": ("mpi_major", "Open MPI majors")}


def _values_text(hosts, key):
    return ", ".join("%s=%s" % (host, data.get(key) or "none") for host, data in sorted(hosts.items()))


def job_groups(hosts):
    """`hosts`: {host: {python, gloo_transport, mpi_major, gpu (bool), controllers: [gloo, mpi]}}.
    Returns {groups: [{controller, hosts, tensors (cuda or cpu), agree: {python, <key>}, gpus_of (true for the
    GPU hosts of the group before it)}],
    spans: {controller: true when one group holds every host}, reasons: {controller: why it does not}}."""
    hosts = {host: dict(data or {}) for host, data in sorted((hosts or {}).items())}
    groups, spans, reasons = [], {}, {}
    for controller, (key, name) in _AGREE.items():
        able = {host: data for host, data in hosts.items() if controller in (data.get("controllers") or [])}
        parts = {}
        for host, data in able.items():
            parts.setdefault((str(data.get("python") or ""), str(data.get(key) or "")), []).append(host)
        for (python, value), members in sorted(parts.items(), key=lambda item: item[1][0]):
            gpus = [host for host in members if hosts[host].get("gpu")]
            agree = {"python": python, key: value}
            groups.append({"controller": controller, "hosts": members,
                           "tensors": "cuda" if gpus == members else "cpu", "agree": agree, "gpus_of": False})
            if gpus and gpus != members:  # its GPU hosts alone can train on CUDA tensors (NCCL)
                groups.append({"controller": controller, "hosts": gpus, "tensors": "cuda", "agree": agree,
                               "gpus_of": True})
        spans[controller] = len(parts) == 1 and len(able) == len(hosts)
        if spans[controller] or not hosts:
            continue
        if len(able) < len(hosts):
            reasons[controller] = "Horovod is built without %s on %s" % (
                controller, ", ".join(sorted(set(hosts) - set(able))))
        elif len({python for python, _ in parts}) > 1:
            reasons[controller] = "Python versions differ (%s)" % _values_text(able, "python")
        else:
            reasons[controller] = "%s differ (%s)" % (name, _values_text(able, key))
    return {"groups": groups, "spans": spans, "reasons": reasons}


def _limits(groups, controller, tensors):
    """The --limit of each group of `controller` that can run `tensors` (cuda: its GPU hosts only)."""
    return ["--limit " + ",".join(g["hosts"]) for g in groups["groups"]
            if g["controller"] == controller and (not g["gpus_of"] if tensors == "cpu" else g["tensors"] == "cuda")]


def job_refusal(hosts, controller, tensors="cpu"):
    """Why the hosts of one job ({host: as job_groups' input}) cannot run it with `controller` on `tensors` (cpu,
    cuda), naming the hosts and the ways out; '' when they can."""
    hosts = {host: dict(data or {}) for host, data in sorted((hosts or {}).items())}
    groups = job_groups(hosts)
    ways = _limits(groups, controller, tensors)
    other = "gloo" if controller == "mpi" else "mpi"
    if not groups["spans"][controller]:
        why = groups["reasons"][controller]
        if groups["spans"][other] and "Python" not in why and "built without" not in why:
            ways.insert(0, "--controller " + other)
        return "%s: no %s job spans these hosts; run one with %s" % (
            why, controller, " or ".join(ways) or "another controller")
    if tensors == "cuda":
        cpu = [host for host, data in hosts.items() if not data.get("gpu")]
        if cpu:
            return ("CUDA tensors need NCCL on every rank and %s %s none: Horovod refuses a collective whose ranks "
                    "put their tensors on different devices (horovod/common/controller.cc); run on CPU tensors "
                    "(--tensors cpu)%s" % (", ".join(cpu), "has" if len(cpu) == 1 else "have",
                                           "".join(" or " + way for way in ways)))
    return ""


class FilterModule(object):
    def filters(self):
        return {"hvc_job_groups": job_groups, "hvc_job_refusal": job_refusal}
