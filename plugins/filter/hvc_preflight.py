# -*- coding: utf-8 -*-
# Apache-2.0
"""The preflight role's decide step as pure functions: facts + variables in, findings out.

Each finding is one line naming the host, the variable and what is allowed, so an operator can
fix the inventory without reading the role.
"""
from __future__ import annotations

import posixpath
import re

_VERSION_RE = re.compile(r"^\d+(\.\d+){0,3}$")
# Values that mean "this option is off" for a GPU option.
_OFF = (None, "", False, "none", "skip", "no", "false", "off")
UNDEFINED = "__hvc_undefined__"


def _version_tuple(text):
    return tuple(int(p) for p in re.findall(r"\d+", str(text))[:4])


def _fmt_platform(entry):
    if entry.get("versions"):
        return "%s %s" % (entry["os"], ", ".join(str(v) for v in entry["versions"]))
    if entry.get("min_version"):
        return "%s >= %s" % (entry["os"], entry["min_version"])
    return str(entry.get("os"))


def supported_platforms_text(platforms):
    return "; ".join(_fmt_platform(p) for p in platforms or [])


def check_platform(host, platform, platforms, archs):
    """OS, version and arch against the support matrix."""
    errors = []
    os_id = platform.get("os_id")
    version = str(platform.get("os_version") or "")
    major = str(platform.get("os_version_major") or "")
    matrix = supported_platforms_text(platforms)
    entry = next((p for p in platforms or [] if p.get("os") == os_id), None)
    if entry is None:
        errors.append(
            "host %s: OS %r (hvc_platform.os_id, %s) is not supported; supported "
            "(preflight_supported_platforms): %s" % (host, os_id, platform.get("os_name"), matrix))
    elif entry.get("versions") and version not in [str(v) for v in entry["versions"]] \
            and major not in [str(v) for v in entry["versions"]]:
        errors.append(
            "host %s: %s version %r (hvc_platform.os_version) is not supported; supported "
            "(preflight_supported_platforms): %s" % (host, os_id, version, matrix))
    elif entry.get("min_version") and (not version or _version_tuple(version) < _version_tuple(entry["min_version"])):
        errors.append(
            "host %s: %s %s (hvc_platform.os_version) is older than the supported minimum %s; "
            "supported (preflight_supported_platforms): %s" % (host, os_id, version or "?",
                                                                entry["min_version"], matrix))
    arch = platform.get("arch")
    if arch not in (archs or []):
        errors.append(
            "host %s: architecture %r (hvc_platform.arch, kernel %s) is not supported; supported "
            "(preflight_supported_archs): %s" % (host, arch, platform.get("kernel_arch"), ", ".join(archs or [])))
    return errors


def check_version_requirement(host, variable, required, running, what):
    """`running` must be >= `required`; a malformed requirement is an error of its own."""
    if required in (None, ""):
        return []
    if not _VERSION_RE.match(str(required)):
        return ["host %s: %s: %r is not a version; allowed: dotted numbers such as 2.16 or 3.8.0"
                % (host, variable, required)]
    if _version_tuple(running) < _version_tuple(required):
        return ["host %s: %s %s is older than %s %s; allowed: %s >= %s"
                % (host, what, running, variable, required, what, required)]
    return []


def check_choices(host, choices, values):
    """Each variable named in `choices` that is set must take (or, for a list, hold) allowed values."""
    errors = []
    for name in sorted(choices or {}):
        value = (values or {}).get(name, UNDEFINED)
        if value == UNDEFINED or value is None:
            continue
        allowed = list(choices[name])
        items = value if isinstance(value, (list, tuple)) else [value]
        unknown = [item for item in items if item not in allowed]
        if unknown:
            errors.append("host %s: %s has unknown value%s %s; allowed values: %s"
                          % (host, name, "s" if len(unknown) > 1 else "",
                             ", ".join(repr(u) for u in unknown), ", ".join(str(a) for a in allowed)))
    return errors


def check_gpu_options(host, platform, gpu_options, values, build_host, gpu_required):
    """GPU options need an NVIDIA GPU (a build host may compile GPU code without one; a Mac never)."""
    errors = []
    has_gpu = bool(platform.get("has_nvidia_gpu"))
    is_mac = platform.get("os_family") == "darwin"
    if gpu_required and not has_gpu:
        errors.append(
            "host %s: preflight_gpu_required is true but no NVIDIA GPU was detected (hvc_platform.gpu: "
            "no /dev/nvidia*, /proc/driver/nvidia or nvidia-smi GPU); allowed on this host: false"
            % host)
    if has_gpu and not is_mac:
        return errors
    for name in sorted(gpu_options or {}):
        value = (values or {}).get(name, UNDEFINED)
        if value == UNDEFINED:
            continue
        needs_gpu = [str(v) for v in gpu_options[name]]
        items = value if isinstance(value, (list, tuple)) else [value]
        hits = [item for item in items if item not in _OFF and str(item) in needs_gpu]
        if not hits:
            continue
        if is_mac:
            errors.append("host %s: %s=%s needs CUDA, which macOS does not have; allowed on this host: "
                          "anything but %s" % (host, name, hits[0], ", ".join(needs_gpu)))
        elif not build_host:
            errors.append(
                "host %s: %s=%s needs an NVIDIA GPU and none was detected on this host; allowed on this "
                "host: anything but %s (or mark it a GPU build host: preflight_gpu_build_host / "
                "cuda_toolkit_build_host: true)" % (host, name, hits[0], ", ".join(needs_gpu)))
    return errors


def address_clashes(addresses):
    """{host: address} of every play host -> {host: {address, others: [the other hosts with its address]}},
    only for hosts that share one. Run once per batch (run_once): each host then reads its own entry, not every
    host's address, and the address is derived in one place (the run_once task)."""
    by_key = {}
    for host, address in (addresses or {}).items():
        if address:
            by_key.setdefault(_address_key(address), []).append(host)
    return {host: {"address": addresses[host], "others": sorted(h for h in hosts if h != host)}
            for hosts in by_key.values() if len(hosts) > 1 for host in hosts}


def check_duplicate_addresses(host, clashes):
    """Two inventory hosts with one address are one machine configured twice."""
    clash = (clashes or {}).get(host)
    if not clash:
        return []
    return ["host %s: ansible_host %s is also the address of %s; allowed values: an address no other "
            "host of the play uses" % (host, clash["address"], ", ".join(clash["others"]))]


def _address_key(address):
    return str(address).strip().rstrip(".").lower()


def check_inventory_groups(host, group_names, platform_groups, cluster_size, require_cluster):
    """One platform group per host (two give it both groups' settings, whichever Ansible merges last),
    and a `cluster` group with hosts in it (site.yml provisions only those)."""
    errors = []
    mine = sorted(g for g in (group_names or []) if g in (platform_groups or []))
    if len(mine) > 1:
        errors.append("host %s: is in the platform groups %s; allowed: exactly one of preflight_platform_groups (%s), "
                      "or its settings come from whichever group Ansible merges last"
                      % (host, " and ".join(mine), ", ".join(platform_groups)))
    if require_cluster and not cluster_size:
        errors.append("host %s: the inventory has no `cluster` group or it is empty (site.yml provisions only the "
                      "hosts of `cluster`); allowed: an inventory whose `cluster` group holds the hosts, as in "
                      "inventories/lab/hosts.yml" % host)
    return errors


def check_homebrew(host, platform, require_homebrew):
    if platform.get("os_family") != "darwin" or not require_homebrew:
        return []
    if (platform.get("homebrew") or {}).get("present"):
        return []
    return ["host %s: Homebrew was not found (hvc_platform.homebrew: /opt/homebrew/bin/brew or "
            "/usr/local/bin/brew) and preflight_require_homebrew is true; allowed: a Mac with Homebrew "
            "installed" % host]


def check_dpkg(host, platform, rootless):
    """An interrupted dpkg fails every apt task after it ("dpkg was interrupted"): refused before any change.
    A rootless host installs no package, so its dpkg state is not the cluster's business."""
    if not platform.get("dpkg_interrupted") or (rootless or {}).get("enabled"):
        return []
    return ["host %s: dpkg was interrupted (a package operation stopped half-way: files are left in "
            "/var/lib/dpkg/updates), so every apt task would fail; run `sudo dpkg --configure -a` on %s, then "
            "roll out again" % (host, host)]


def check_armv7l_torch(host, platform, torch):
    """32-bit Raspberry Pi OS (armv7l): PyTorch publishes no wheels for it, so a host that needs torch is refused
    unless the wheelhouse holds a torch wheel of the user's own for armv7l (python_env then installs that one)."""
    torch = dict(torch or {})
    if platform.get("arch") != "armv7l" or not torch.get("wanted") or torch.get("wheels"):
        return []
    version = torch.get("version") or "<version>"
    wheelhouse = torch.get("wheelhouse") or "<python_env_wheelhouse>"
    return ["host %s: %s (armv7l, a 32-bit userland) has no PyTorch wheels: PyTorch publishes none for armv7l, "
            "so torch %s cannot be installed here and Horovod cannot be built against it (python_env_torch_version, "
            "horovod_frameworks); allowed: the 64-bit Raspberry Pi OS (aarch64) on this board, or a torch wheel of "
            "your own for armv7l in python_env_wheelhouse (put torch-%s-<python tags>-linux_armv7l.whl directly in %s, "
            "python_env installs it from there)"
            % (host, platform.get("os_name") or platform.get("os_id"), version, version, wheelhouse)]


def _in_home(path, home):
    """Whether `path` (as given) stays inside `home`; `~` and `~/...` are the home."""
    path = str(path)
    if path == "~" or path.startswith("~/"):
        return True
    if not path.startswith("/") or not home:
        return False
    home = posixpath.normpath(str(home))
    return posixpath.normpath(path).startswith(home.rstrip("/") + "/")


def check_rootless(host, rootless):
    """cluster_rootless: no become, no system package installed, no file outside the user's home. Refuses what
    cannot work so, naming the variable (and its allowed values) or the missing package (and the way out)."""
    r = dict(rootless or {})
    if not r.get("enabled"):
        return []
    errors = []
    where = "host %s: cluster_rootless is true" % host
    if r.get("become"):
        errors.append("%s but ansible_become is true (a rootless run never becomes root); allowed: "
                      "ansible_become: false, or cluster_rootless: false on a host where you have sudo" % where)
    if r.get("user_space") in (False, "false", "False", "no"):
        errors.append("%s but cluster_user_space is false (a rootless host keeps its files under "
                      "cluster_user_prefix); allowed: cluster_user_space: true, or leave it unset" % where)
    allowed = r.get("allowed_methods") or {}
    values = r.get("values") or {}
    for name in sorted(allowed):
        value = values.get(name, UNDEFINED)
        if value in (UNDEFINED, None) or value in allowed[name]:
            continue
        errors.append("%s but %s=%s needs root (system packages or folders); allowed with cluster_rootless: %s"
                      % (where, name, value, ", ".join(str(a) for a in allowed[name])))
    home = r.get("home") or ""
    for name in sorted(r.get("paths") or []):
        value = values.get(name, UNDEFINED)
        if value in (UNDEFINED, None, "") or _in_home(value, home):
            continue
        errors.append("%s but %s=%s is outside the user's home %s (a rootless run writes nowhere else); "
                      "allowed: a path under %s, or leave %s unset (its default is under cluster_user_prefix)"
                      % (where, name, value, home or "(unknown)", home or "the home", name))
    user = r.get("user") or ""
    mesh_user = values.get("ssh_mesh_user", UNDEFINED)
    if mesh_user not in (UNDEFINED, None, "") and user and mesh_user != user:
        errors.append("%s but ssh_mesh_user=%s is not the connecting user %s (only that user's ~/.ssh can be "
                      "written without root); allowed: ssh_mesh_user: %s, or leave it unset"
                      % (where, mesh_user, user, user))
    installed = r.get("packages")
    if installed is None:  # not read (a plan over recorded facts, not an apt host): the apply checks again
        return errors
    installed = set(installed)
    for need in r.get("needs") or []:
        missing = [name for name in need.get("packages") or [] if name not in installed]
        if missing:
            errors.append("%s and the system package%s %s %s not installed (needed for %s; a rootless run installs "
                          "no system package); allowed: %s"
                          % (where, "s" if len(missing) > 1 else "", ", ".join(missing),
                             "are" if len(missing) > 1 else "is", need.get("for"), need.get("way_out")))
    return errors


def preflight_errors(platform, host, checks):
    """All findings for one host; `checks` carries the knobs and the variables' values."""
    platform = dict(platform or {})
    checks = dict(checks or {})
    errors = []
    if not platform.get("os_id"):
        return ["host %s: hvc_platform is missing (run the preflight detect step, or record the host's "
                "facts with playbooks/record_facts.yml); allowed: facts from hvc_platform_facts" % host]
    if not checks.get("allow_unsupported"):
        errors += check_platform(host, platform, checks.get("platforms"), checks.get("archs"))
    errors += check_version_requirement(host, "preflight_min_ansible_version", checks.get("min_ansible_version"),
                                        checks.get("ansible_version", "0"), "Ansible (ansible-core)")
    errors += check_version_requirement(host, "preflight_min_python_version", checks.get("min_python_version"),
                                        platform.get("python_version") or "0", "the host's Python")
    errors += check_homebrew(host, platform, checks.get("require_homebrew"))
    errors += check_dpkg(host, platform, checks.get("rootless"))
    errors += check_choices(host, checks.get("choices"), checks.get("values"))
    errors += check_gpu_options(host, platform, checks.get("gpu_options"), checks.get("values"),
                                checks.get("gpu_build_host"), checks.get("gpu_required"))
    errors += check_armv7l_torch(host, platform, checks.get("armv7l_torch"))
    errors += check_rootless(host, checks.get("rootless"))
    errors += check_inventory_groups(host, checks.get("group_names"), checks.get("platform_groups"),
                                     checks.get("cluster_size"), checks.get("require_cluster_group"))
    if checks.get("check_duplicate_addresses", True):
        errors += check_duplicate_addresses(host, checks.get("address_clashes"))
    return errors


def preflight_summary(platform):
    """One line for the plan: what this host is."""
    p = dict(platform or {})
    gpu = p.get("gpu") or {}
    parts = ["%s %s %s" % (p.get("os_id"), p.get("os_version"), p.get("arch"))]
    if p.get("is_raspberry_pi"):
        parts.append(p.get("device_model") or "Raspberry Pi")
    if gpu.get("present"):
        parts.append("%d NVIDIA GPU%s (driver %s, CUDA %s)" % (gpu.get("count", 0), "s" if gpu.get("count", 0) > 1 else "",
                                                               gpu.get("driver_version"), gpu.get("cuda_version")))
    else:
        parts.append("no NVIDIA GPU")
    parts.append("%s cores" % p.get("cores"))
    parts.append("Python %s" % p.get("python_version"))
    return ", ".join(parts)


def preflight_plan(platform, host, checks, settings_errors=()):
    """The preflight plan of one host: its findings (these checks', then the settings check's) decide the action;
    `platform` is the fields of hvc_platform the plan shows."""
    p = dict(platform or {})
    errors = preflight_errors(p, host, checks) + list(settings_errors or [])
    gpu = p.get("gpu") or {}
    return {
        "action": "fail" if errors else "pass",
        "method": "validate",
        "reason": " | ".join(errors) if errors else "supported: " + preflight_summary(p),
        "errors": errors,
        "platform": {"os_id": p.get("os_id"), "os_version": p.get("os_version"), "arch": p.get("arch"),
                     "is_raspberry_pi": p.get("is_raspberry_pi"), "gpu_count": gpu.get("count", 0),
                     "cuda_version": gpu.get("cuda_version"), "cores": p.get("cores"),
                     "python_version": p.get("python_version")},
    }


def missing_packages(wanted, preflight=None):
    """The packages of `wanted` the host lacks, by the list preflight read this run (hvc_preflight.packages);
    all of them when that list is unknown (a plan over recorded facts, a role run without preflight, not
    apt), so the package task then runs as it always would. A pinned `name=version` counts as missing."""
    if isinstance(wanted, str):
        wanted = [wanted]
    installed = (preflight or {}).get("packages")
    if installed is None:
        return list(wanted)
    installed = set(installed)
    return [name for name in wanted if "=" in name or name not in installed]


class FilterModule(object):
    def filters(self):
        return {"hvc_preflight_plan": preflight_plan, "hvc_missing_packages": missing_packages,
                "hvc_address_clashes": address_clashes}
