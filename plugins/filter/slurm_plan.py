"""The slurm role's decision, as one pure function (used by roles/slurm/tasks/decide.yml).

`slurm_plan(inputs)` -> {"errors": [...], "plan": {...} or {}}. Every host of the play becomes a Slurm node of
one partition, the same slurm.conf on each: so what one host reports of itself (its hostname, its CPUs) becomes
configuration of every other host, and is refused here unless it is a plain node name and a positive count.
The value forms of the role's own variables (names, the key file) are checked before, by the rules engine
against roles/slurm/meta/rules.yml. inputs:
    {"vars": {slurm_controller, slurm_cluster_name, slurm_partition, slurm_slurmctld_port, slurm_slurmd_port},
     "host": inventory_hostname, "limit": ansible_limit ('' without --limit),
     "nodes": [{"host": inventory name, "hostname": the host's short hostname (facts), "address": where the
                others reach it (ansible_host or the name), "cpus": its CPUs (facts), "os_family": facts}],
     "paths": {"conf": slurm.conf, "munge_key": the munge key on the hosts}}
"""
from __future__ import annotations

import json
import re

# slurmd finds its node by the short hostname: a DNS label (what `hostname -s` can print, and Slurm parses)
_NODE_NAME_RE = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z"
# NodeAddr/SlurmctldHost's address: a host name or an IPv4/IPv6 address, nothing slurm.conf would split on
_ADDRESS_RE = r"^[A-Za-z0-9]([A-Za-z0-9.:-]*[A-Za-z0-9])?\Z"
_PORT_RE = r"^[0-9]{1,5}\Z"
# Debian's packages (Debian, Ubuntu, Raspberry Pi OS: os_family Debian)
_PACKAGES = {"controller": ["munge", "slurm-client", "slurmd", "slurmctld"],
             "node": ["munge", "slurm-client", "slurmd"]}


def _quoted(value) -> str:
    return json.dumps(str(value), ensure_ascii=False)


def _node_errors(node: dict) -> list:
    """What this host reported of itself, before it goes into every host's slurm.conf."""
    errors, host = [], node["host"]
    if node.get("os_family") != "Debian":
        errors.append(f"slurm: {host} is a {node.get('os_family') or 'unknown'} host; the role installs Debian's"
                      " Slurm packages (Debian, Ubuntu, Raspberry Pi OS): leave it out with --limit")
    if not re.search(_NODE_NAME_RE, str(node.get("hostname") or "")):
        errors.append(f"slurm: {host} reports the hostname {_quoted(node.get('hostname'))}, not a node name slurm.conf"
                      " can hold; expected letters, digits and - (a DNS label), as slurmd finds its node by it")
    if not re.search(_ADDRESS_RE, str(node.get("address") or "")):
        errors.append(f"slurm: {host}'s address (ansible_host) is {_quoted(node.get('address'))}; expected a host"
                      " name or an IP address")
    cpus = node.get("cpus")
    if not (isinstance(cpus, int) and not isinstance(cpus, bool) and 0 < cpus <= 100000):
        errors.append(f"slurm: {host} reports {_quoted(cpus)} CPUs (processor_vcpus); expected a positive count")
    return errors


def slurm_node(hostvars: dict) -> dict:
    """One host's entry of `nodes`, from its hostvars: its inventory name, what its facts say, its address."""
    facts = hostvars.get("ansible_facts") or {}
    host = hostvars["inventory_hostname"]
    return {"host": host, "hostname": facts.get("hostname"), "address": hostvars.get("ansible_host") or host,
            "cpus": facts.get("processor_vcpus"), "os_family": facts.get("os_family")}


def slurm_errors(inputs: dict) -> list:
    """The refusals beyond the value forms, each naming the variable or the host and what is expected."""
    v, nodes = inputs["vars"], inputs["nodes"]
    names = [node["host"] for node in nodes]
    errors = []
    if inputs.get("limit"):  # slurm.conf lists the play's hosts: a --limit play would drop the others from it
        errors.append(f"slurm: --limit {inputs['limit']}: slurm.conf lists every node of the play, so a limited play"
                      " would write one without the other hosts; expected the whole cluster (no --limit)")
    if v["slurm_controller"] not in names:
        errors.append(f"slurm_controller is {_quoted(v['slurm_controller'])}; expected one of the play's hosts"
                      f" ({', '.join(names)})")
    ports = {}
    for name in ("slurm_slurmctld_port", "slurm_slurmd_port"):
        port = str(v[name])
        if not (re.search(_PORT_RE, port) and 1 <= int(port) <= 65535):
            errors.append(f"{name} is {_quoted(port)}; expected a TCP port number, 1 to 65535")
        ports.setdefault(port, []).append(name)
    errors += [f"{' and '.join(both)} are both {port}; expected two ports" for port, both in ports.items()
               if len(both) > 1]
    for node in nodes:
        errors += _node_errors(node)
    seen = {}
    for node in nodes:
        seen.setdefault(str(node.get("hostname")), []).append(node["host"])
    errors += [f"slurm: {', '.join(hosts)} all report the hostname {_quoted(name)}; expected one node name per host"
               for name, hosts in seen.items() if len(hosts) > 1]
    return errors


def slurm_plan(inputs: dict) -> dict:
    """{"errors": [...], "plan": the published plan ({} when refused)}."""
    errors = slurm_errors(inputs)
    if errors:
        return {"errors": errors, "plan": {}}
    v, host = inputs["vars"], inputs["host"]
    nodes = [{"name": n["hostname"], "address": n["address"], "cpus": n["cpus"], "host": n["host"]}
             for n in inputs["nodes"]]
    controller = next(n for n in nodes if n["host"] == v["slurm_controller"])
    role = "controller" if host == v["slurm_controller"] else "node"
    services = ["munge"] + (["slurmctld"] if role == "controller" else []) + ["slurmd"]
    plan = {
        "action": "install", "role": role, "packages": _PACKAGES[role], "services": services,
        "cluster_name": v["slurm_cluster_name"], "partition": v["slurm_partition"],
        "controller": controller["host"], "controller_name": controller["name"],
        "controller_address": controller["address"],
        "slurmctld_port": int(str(v["slurm_slurmctld_port"])), "slurmd_port": int(str(v["slurm_slurmd_port"])),
        "nodes": nodes, "total_cpus": sum(n["cpus"] for n in nodes),
        "conf": inputs["paths"]["conf"], "munge_key": inputs["paths"]["munge_key"],
        "reason": (f"{'slurmctld and ' if role == 'controller' else ''}slurmd from the distribution; partition"
                   f" {v['slurm_partition']} of {len(nodes)} nodes ({sum(n['cpus'] for n in nodes)} CPUs), controller"
                   f" {controller['name']}; munge with the cluster's one key"),
    }
    return {"errors": [], "plan": plan}


class FilterModule:
    """slurm_plan, slurm_node."""

    def filters(self):
        return {"slurm_plan": slurm_plan, "slurm_node": slurm_node}
