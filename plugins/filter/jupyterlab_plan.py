"""The jupyterlab role's decision, as one pure function (used by roles/jupyterlab/tasks/decide.yml).

`jupyterlab_plan(inputs)` -> {"errors": [...], "plan": {...} or {}}. The value forms (paths, names,
versions, the address) are checked before, by the rules engine against roles/jupyterlab/meta/rules.yml;
here: the port, the token (never shown), that listening beyond loopback is chosen, that the host is one
of the play's and runs systemd; then the plan. inputs:
    {"vars": {jupyterlab_* as given, jupyterlab_allow_remote read by Ansible's `bool`},
     "host": inventory_hostname, "play_hosts": ansible_play_hosts_all, "system": ansible_facts['system'],
     "gpu_count": GPUs on this host (int), "ssh": {"host", "user", "port" (int)} of jupyterlab_host,
     "loopback": the loopback addresses, "unit": the unit file's path}
"""
from __future__ import annotations

import json
import posixpath
import re

_PORT_RE = r"^[0-9]{1,5}\Z"
# A token goes into an EnvironmentFile line: no newline, quote, $ or backslash; long enough not to guess.
_TOKEN_RE = r"^[A-Za-z0-9._~-]{16,}\Z"
# The role makes the root dir jupyterlab_user's home and owns it to that user: never one of the system's own.
_SYSTEM_DIRS = frozenset(["/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/dev", "/proc", "/sys",
                          "/var", "/opt", "/root", "/home", "/tmp", "/srv", "/run", "/Users", "/System", "/Library"])
# Every interface: the host itself reaches the server on its loopback.
_ANY_TO_LOCAL = {"0.0.0.0": "127.0.0.1", "::": "::1"}


def _bracket(address: str) -> str:
    """An IPv6 address as a URL or ssh -L writes it."""
    return f"[{address}]" if ":" in address else address


def jupyterlab_errors(inputs: dict) -> list:
    """The refusals beyond the value forms, each naming the variable and what is expected."""
    v, host = inputs["vars"], inputs["host"]
    ip, port, token = v["jupyterlab_ip"], v["jupyterlab_port"], v["jupyterlab_token"]
    errors = []
    if not (re.search(_PORT_RE, str(port)) and 1 <= int(str(port)) <= 65535):
        errors.append(f"jupyterlab_port is {json.dumps(str(port), ensure_ascii=False)}; expected a TCP port number,"
                      " 1 to 65535")
    if not (isinstance(token, str) and (token == "" or re.search(_TOKEN_RE, token))):
        errors.append("jupyterlab_token (not shown) is not a token; expected empty (one is generated on the host)"
                      " or 16 or more letters, digits and . _ ~ -")
    if ip not in inputs["loopback"] and not v["jupyterlab_allow_remote"]:
        errors.append(f"jupyterlab_ip is {json.dumps(ip)}: beyond loopback, anyone who reaches the port and has the"
                      f" token runs code as {v['jupyterlab_user']}; expected 127.0.0.1 or ::1 (reach it through an"
                      " SSH tunnel), or jupyterlab_allow_remote: true to choose it")
    root_dir = str(v["jupyterlab_root_dir"])
    if posixpath.normpath("/" + root_dir.lstrip("/")) in _SYSTEM_DIRS:  # "//etc/", "/home/x/.." are those too
        errors.append(f"jupyterlab_root_dir is {json.dumps(root_dir, ensure_ascii=False)}, a folder of the system"
                      f" itself, which the role would give to {v['jupyterlab_user']} (its owner; the home of a user"
                      " it creates); expected a folder of its own beneath one (/srv/jupyterlab, /home/alice/notebooks)")
    if v["jupyterlab_host"] not in inputs["play_hosts"]:
        errors.append(f"jupyterlab_host is {json.dumps(str(v['jupyterlab_host']), ensure_ascii=False)}; expected"
                      f" one of the play's hosts ({', '.join(inputs['play_hosts'])})")
    system = inputs.get("system") or "Linux"
    if host == v["jupyterlab_host"] and system != "Linux":
        errors.append(f"jupyterlab_host is {host}, a {system} host; expected a Linux host (the role runs"
                      " JupyterLab as a systemd service)")
    return errors


def jupyterlab_plan(inputs: dict) -> dict:
    """{"errors": [...], "plan": the published plan ({} when refused)}."""
    errors = jupyterlab_errors(inputs)
    if errors:
        return {"errors": errors, "plan": {}}
    v = inputs["vars"]
    ip, jl_host, version = v["jupyterlab_ip"], v["jupyterlab_host"], v["jupyterlab_version"]
    env_path, service, user = v["jupyterlab_env_path"], v["jupyterlab_service"], v["jupyterlab_user"]
    token_file, has_token = v["jupyterlab_token_file"], len(v["jupyterlab_token"]) > 0
    here = inputs["host"] == jl_host
    port = int(str(v["jupyterlab_port"]))  # digits: checked above
    loopback = ip in inputs["loopback"]
    # where the host itself reaches the server (the check after the start; the tunnel's far end)
    local = _ANY_TO_LOCAL.get(ip, ip)
    ssh = inputs["ssh"]
    target, ssh_user, ssh_port = str(ssh["host"]), ssh["user"], int(ssh["port"])
    tunnel = (f"ssh -N -L {port}:{_bracket(local)}:{port}" + (f" -p {ssh_port}" if ssh_port != 22 else "")
              + " " + (f"{ssh_user}@" if ssh_user else "") + target)
    url = (f"http://localhost:{port}/lab" if loopback
           else f"http://{target if ip in _ANY_TO_LOCAL else _bracket(ip)}:{port}/lab")
    choice, gpus = v["jupyterlab_nvdashboard"], inputs["gpu_count"]
    nvdashboard = choice == "always" or (choice == "auto" and gpus > 0)
    tensorboard = str(v["jupyterlab_tensorboard_version"])
    packages = ([f"jupyterlab=={version}"] + ([f"tensorboard=={tensorboard}"] if tensorboard else [])
                + ([f"jupyterlab-nvdashboard=={v['jupyterlab_nvdashboard_version']}"] if nvdashboard else []))
    exec_start = ([f"{env_path}/bin/jupyter", "lab", "--no-browser", f"--ServerApp.ip={ip}",
                   f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                   f"--ServerApp.root_dir={v['jupyterlab_root_dir']}"] + (["--allow-root"] if user == "root" else []))
    if here:
        reason = (f"JupyterLab {version} in {env_path} as the systemd service {service} (user {user}), listening on"
                  f" {_bracket(local)}:{port}" + ("" if loopback else " (jupyterlab_allow_remote)")
                  + "; packages " + ", ".join(packages)
                  + (f"; GPU dashboards: {gpus} NVIDIA GPU(s)" if nvdashboard and choice == "auto" else "")
                  + "; token " + ("from jupyterlab_token" if has_token else "generated on the host")
                  + f" in {token_file}")
    else:
        reason = f"JupyterLab runs on {jl_host} (jupyterlab_host), not here"
    plan = {
        "action": "install" if here else "skip", "method": "systemd", "host": jl_host, "env_path": env_path,
        "packages": packages, "nvdashboard": nvdashboard, "gpu_count": gpus, "ip": ip, "port": port,
        "local_address": local, "root_dir": v["jupyterlab_root_dir"], "user": user, "token_file": token_file,
        "token_source": "jupyterlab_token" if has_token else "generated on the host once", "service": service,
        "unit": inputs["unit"], "exec_start": exec_start, "url": url, "tunnel": tunnel, "reason": reason,
    }
    return {"errors": [], "plan": plan}


class FilterModule:
    """jupyterlab_plan."""

    def filters(self):
        return {"jupyterlab_plan": jupyterlab_plan}
