"""The horovod role's whole per-host decision, as one function (roles/horovod/tasks/decide.yml).

`horovod_decide(inputs)` -> {"errors": [...], "note": ""} when anything is refused (each message names the variable, the
value and the way out; decide.yml asserts on them), else {"errors": [], "note", "probe", "platform", "combo",
"fixes", "cxx_standard", "build_env", "platform_key", "state", "plan_extra"}.
  inputs: what horovod_platform takes (probe as `probe_stdout`, the probe's JSON text, '' when it did not run),
          plus "host", "roles_dir" (meta/rules.yml), "env": {"probed": the probe's stat ran, "exists": the
          environment's interpreter exists}, "matrix" (vars/compat.yml, loaded once per batch) and "role": the
          role's own values (log_dir, become, marker_name, plan_options).
Checks in order, each stage refusing before the next is computed: the variables (meta/rules.yml, their forms,
the paths and names that reach a shell or an environment); the environment (frameworks it lacks, or in plan a
framework nothing pins); the compatibility matrix. Then the build settings, the platform key, and the host's
state given the wheels cached for that key (horovod_artifacts_dir/<key>, each checked against its sha256).
Step 2 (each key's builder, once per batch) and step 3 (horovod_plan) stay in decide.yml: they need every host.
"""
from __future__ import annotations

import glob
import json
import os
import re
import sys
from collections.abc import Mapping

from ansible.module_utils.parsing.convert_bool import boolean

try:  # under Ansible: the collection's own filter modules
    from ansible_collections.hvc.horovod_cluster.plugins.filter import horovod_build, horovod_compat, \
        horovod_plan, horovod_platform, horovod_wheels, hvc_settings
except ImportError:  # plain Python (unit tests): the files beside this one
    if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
        sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    import horovod_build
    import horovod_compat
    import horovod_plan
    import horovod_platform
    import horovod_wheels
    import hvc_settings

# Forms of the values that reach a shell command line or an environment; \Z, not $ (which takes a trailing newline).
PATH_RE = re.compile(r"^/[A-Za-z0-9._+/-]*\Z")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
# How a framework is pinned for python_env to install it (named when one is listed without a version).
PIN_HOW = {"pytorch": 'python_env_torch_version pinned (e.g. "2.13.0") or an item torch==2.13.0 in '
                      "python_env_pip_packages",
           "tensorflow": "an item tensorflow==2.15.1 in python_env_pip_packages"}


def _variable_errors(host: str, roles_dir: str, v: dict) -> list:
    """The role's variables: meta/rules.yml's patterns, then the forms a shell or an environment needs."""
    required = ["horovod_version"] + (["horovod_git_commit"] if v["horovod_source"] == "git" else [])
    errors = hvc_settings.hvc_rule_errors({"horovod_version": v["horovod_version"],
                                           "horovod_git_commit": v["horovod_git_commit"]}, roles_dir, host, required)
    overrides = v["horovod_build_env_overrides"]
    if (v["horovod_source"] == "path" and not v["horovod_source_path"]) or not v["horovod_controllers"] \
            or not isinstance(overrides, Mapping):
        errors.append(
            "Bad horovod variables: horovod_source path needs horovod_source_path; horovod_controllers a non-empty "
            "list; horovod_build_env_overrides a mapping (allowed values: meta/argument_specs.yml). Got source=%s "
            "source_path=%s controllers=%s."
            % (v["horovod_source"], v["horovod_source_path"], v["horovod_controllers"]))
    for name in ("horovod_python", "horovod_build_root"):
        value = v[name]
        if not (isinstance(value, str) and PATH_RE.search(value)):
            errors.append("%s is %s; expected an absolute path of letters, digits and . _ - + /"
                          % (name, json.dumps(str(value), ensure_ascii=False)))
    bad_names = [str(k) for k in overrides if not ENV_NAME_RE.search(str(k))] if isinstance(overrides, Mapping) else []
    if bad_names:
        errors.append("horovod_build_env_overrides has the name(s) %s; expected environment variable names: a letter "
                      "or _, then letters, digits and _ (the values are free text)"
                      % json.dumps(bad_names, ensure_ascii=False))
    return errors


def _environment_errors(inputs: dict, decided: dict) -> list:
    """Frameworks the environment lacks; in plan (nothing to ask yet), a framework nothing pins."""
    v, env = inputs["vars"], inputs.get("env") or {}
    wanted = [str(f) for f in v["horovod_frameworks"]]
    if env.get("exists"):
        have = [name for name, version in decided["platform"]["frameworks"].items() if version]
        lacking = [f for f in wanted if f not in have]
        if lacking:
            return ["horovod_frameworks=%s but the environment %s lacks %s: install them first "
                    "(python_env_torch_version / python_env_pip_packages) or drop them from horovod_frameworks."
                    % (wanted, v["horovod_python"], lacking)]
    # an environment of the user's own (horovod_python not python_env's) is asked by the rollout's probe instead
    python_env_python = (inputs.get("python_env") or {}).get("python", v["horovod_python"])
    if not env.get("probed") and v["horovod_python"] == python_env_python:
        unpinned = [f for f in wanted if f in PIN_HOW and not decided["combo"].get(f)]
        if unpinned:
            return ["horovod_frameworks lists %s without a version to check against the compatibility matrix; allowed: "
                    "%sor drop it from horovod_frameworks"
                    % (", ".join(unpinned), "".join("for %s, %s; " % (f, PIN_HOW[f]) for f in unpinned))]
    return []


def _cached_wheels(folder: str) -> dict:
    """The controller's cached wheels of one platform key, each checked against its builder's sha256."""
    paths = [p for p in glob.glob(os.path.join(folder, "*.whl")) if os.path.isfile(p)] \
        if os.path.isdir(folder) else []
    return horovod_wheels.horovod_verified_wheels(paths)


def _build(inputs: dict, decided: dict, compat: dict) -> dict:
    """The build settings, the platform key and the host's state (step 1 of horovod_plan.py)."""
    v, role, probe = inputs["vars"], inputs["role"], decided["probe"]
    fixes = [f["fix"] for f in compat["fixes"] if f.get("fix")]
    policy = ((inputs.get("cmake") or {}).get("policy_version_minimum") or "3.5") if "cmake_policy" in fixes else ""
    build_env = horovod_build.horovod_build_env(decided["platform"], {
        "frameworks": v["horovod_frameworks"], "controllers": v["horovod_controllers"],
        "gpu_operations": v["horovod_gpu_operations"], "cuda_cc_list": v["horovod_cuda_cc_list"],
        "cmake": v["horovod_cmake"], "make_jobs": v["horovod_make_jobs"], "cmake_policy_version_minimum": policy,
        "env": v["horovod_build_env_overrides"]})
    key = horovod_build.horovod_platform_key({
        **decided["platform"], "gpu_operations": build_env.get("HOROVOD_GPU_OPERATIONS", "none"),
        "cuda_cc_list": build_env.get("HOROVOD_BUILD_CUDA_CC_LIST", ""), "build_overrides": v["horovod_build_env_overrides"],
        "patches": [f["wheel_key"] for f in compat["fixes"] if f.get("wheel_key")]})
    wheel_dir = "%s/%s" % (v["horovod_artifacts_dir"], key)
    cache = _cached_wheels(wheel_dir)
    state = horovod_plan.horovod_host_state({
        "platform_key": key, "installed": probe.get("horovod"), "damaged": probe.get("horovod_damaged") or [],
        "marker": probe.get("marker") or {}, "cached_wheels": [w["path"] for w in cache["ok"]],
        "rejected_wheels": cache["rejected"]}, role["plan_options"])
    cxx = compat["cxx_standard"] or ""  # the C++ standard the build patches in ('' = the source's own is right)
    platform = decided["platform"]
    # what another host must share to run one job with this one (plugins/filter/hvc_job_groups.py)
    job = {"python": ".".join(str(platform["python"]).split(".")[:2]),
           "mpi_major": str(platform["mpi_version"] or "").split(".")[0],
           "gloo_transport": (inputs.get("gloo") or {}).get("transport") or "",
           "gpu": "HOROVOD_GPU_OPERATIONS" in build_env, "controllers": list(v["horovod_controllers"])}
    return {"fixes": fixes, "cxx_standard": cxx, "build_env": build_env, "platform_key": key,
            "state": {**state, "host": inputs["host"]},
            # what the plan (horovod_plan, once the builders are known) carries beside the decision
            "plan_extra": {"wheel_dir": wheel_dir,
                           "marker": "%s/%s" % (os.path.dirname(os.path.dirname(v["horovod_python"])),
                                                role["marker_name"]),
                           "fixes": fixes, "cxx_standard": cxx, "build_root": v["horovod_build_root"],
                           "log_dir": role["log_dir"], "become": bool(role["become"]), "build_env": build_env,
                           "job": job}}


def horovod_decide(inputs: dict) -> dict:
    v = {**inputs["vars"], "horovod_allow_untested": boolean(inputs["vars"]["horovod_allow_untested"], strict=False)}
    inputs = {**inputs, "vars": v}
    errors = _variable_errors(inputs["host"], inputs["roles_dir"], v)
    if errors:
        return {"errors": errors, "note": ""}
    probe = json.loads(inputs.get("probe_stdout") or "{}")
    hvc = (inputs.get("facts") or {}).get("hvc_platform") or {}  # preflight's platform, when it ran
    decided = {"probe": probe, **horovod_platform.horovod_platform({**inputs, "probe": probe, "hvc_platform": hvc})}
    errors = _environment_errors(inputs, decided)
    if errors:
        return {"errors": errors, "note": ""}
    compat = horovod_compat.horovod_compat_check(decided["combo"], inputs["matrix"])
    if not compat["ok"]:
        return {"errors": [compat["message"]], "note": ""}
    note = "compatible (known good: %s; fixes: %s)" % (compat["known_good"], [f["id"] for f in compat["fixes"]])
    return {"errors": [], "note": note, **decided, **_build(inputs, decided, compat)}


class FilterModule:
    """horovod_decide."""

    def filters(self):
        return {"horovod_decide": horovod_decide}
