"""The python_env role's decision, as pure functions (used by roles/python_env/tasks/decide.yml).

decide.yml gathers the inputs (facts, the role's variables with their booleans already read by
Ansible's `bool`, the tables of vars/main.yml and what the controller's file system shows) and calls:

Step 1: `python_env_platform(inputs)` -> the platform, the manager and the torch build:
    {"system", "arch", "machine", "gpu_count", "cuda_fact", "cuda_version", "venv_interpreter",
     "conda_platform", "method", "variant", "torch_requirement", "torch_version", "distro_packages", "framework_pins",
     "py", "set_dir", "marker", "flat_glob", "checks"}
  `checks` are the variable checks, one {"var", "ok", "msg"} per variable (decide.yml asserts them
  in a loop, so a refusal names the variable and the allowed form).
  `set_dir`, `marker` and `flat_glob` name what decide.yml looks at on the controller next.

Step 2: `python_env_plan(decided, inputs, seen)` -> step 1's result updated with
    {"wheel_dir", "fill", "fill_env", "wheels", "pip_options", "requirements", "plan", "checks"}
  seen: what the controller's file system shows for step 1's paths:
    {"set_dir_is_dir": bool, "complete": bool (the set's marker is a file),
     "flat_torch": [paths matching flat_glob], "wheelhouse_wheels": [names], "set_wheels": [names],
     "present": [paths of python_env_wheelhouse_files found in the wheelhouse or the set's folder]}
  `plan` is the published plan but its installer (decide-conda.yml adds it for conda); it shows index URLs
  without their passwords (hvc_redact_url), while `pip_options` (the host's 0600 requirements file) and
  `fill_env` (each fill attempt's PIP_EXTRA_INDEX_URL) hold them as given.

`python_env_wheels(names, system, arch)` -> the wheel names that fit the host (sorted).

`python_env_wheel_manifest(requirement, found, pip_output)` -> a filled set's marker text (wheelhouse-fill.yml): the
requirement, then `<sha256>  <wheel>` per wheel of pip's download; `python_env_changed_wheels(marker_text, found,
wheels)` -> the wheels whose sha256 is no longer the recorded one (wheelhouse.yml refuses to ship them).

`python_env_conda_dependencies(inputs)` -> the conda dependencies of environment.yml (decide-conda.yml), from
    {"variant", "cuda_version", "arch", "python_version", "packages", "nvcc_metapackages"};
  with commented=True each as {"spec", "comment"} (the comment line above it, or ""), which the template prints.
"""
from __future__ import annotations

import os
import re
import sys

try:  # under Ansible: the collection's own filter module
    from ansible_collections.hvc.horovod_cluster.plugins.filter.hvc_redact_url import has_credentials, redact_url
except ImportError:  # plain Python (unit tests): the file beside this one
    if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
        sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from hvc_redact_url import has_credentials, redact_url

from packaging.requirements import InvalidRequirement, Requirement

_BOOL_WORDS = ("true", "false", "yes", "no", "1", "0")


def _text(value) -> str:
    """A value as Jinja's `string` filter writes it."""
    return str(value)


def _int(value, default: int = 0) -> int:
    """Jinja's `int` filter: a number, else the default."""
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return default


def _machine(system: str, arch: str) -> str:
    """The host's platform.machine() (macOS says arm64), in wheel names and environment markers alike."""
    return "arm64" if system == "Darwin" and arch == "aarch64" else arch


# A line of a filled set's marker after its requirement: sha256sum's format, `<sha256>  <wheel>`.
_SUM_LINE = re.compile(r"^([0-9a-f]{64})  ([A-Za-z0-9._+!-]+\.whl)\Z")


# pip download's line for each wheel of its resolution: new ("Saved") or already in --dest.
_PIP_DOWNLOAD_LINE = re.compile(r"^\s*(?:Saved|File was already downloaded) (.+\.whl)\s*$", re.MULTILINE)


def python_env_wheel_manifest(requirement: str, found, pip_output: str = "") -> str:
    """A filled wheel set's marker: its requirement, then the sha256 of each wheel as pip downloaded it. `found`:
    ansible.builtin.find's files of the set (path, checksum with checksum_algorithm sha256); `pip_output`: that
    download's stdout. Only the wheels pip's output names, when it names any: the folder may also hold a wheel of an
    earlier fill that a newer release of the same project replaced, which pip cannot install beside it."""
    resolved = {os.path.basename(m) for m in _PIP_DOWNLOAD_LINE.findall(str(pip_output or ""))}
    names = sorted((os.path.basename(f["path"]), f["checksum"]) for f in found or []
                   if not resolved or os.path.basename(f["path"]) in resolved)
    return "\n".join([str(requirement)] + [f"{checksum}  {name}" for name, checksum in names]) + "\n"


def _recorded_sums(marker_text: str) -> dict:
    """{wheel: sha256} of a set's marker (none in a marker written before sums were recorded)."""
    return dict(reversed(m.groups()) for m in map(_SUM_LINE.match, str(marker_text or "").splitlines()[1:]) if m)


def python_env_changed_wheels(marker_text: str, found, wheels) -> list:
    """The wheels (names) of `wheels` whose sha256 now (`found`, as above) is not the one the set's marker recorded:
    truncated or replaced since the download. A marker written before sums were recorded holds none to compare."""
    recorded = _recorded_sums(marker_text)
    now = {os.path.basename(f["path"]): f.get("checksum") for f in found or []}
    return sorted(name for name in wheels or [] if name in recorded and now.get(name) != recorded[name])


def python_env_hashed_wheels(marker_text: str, wheels, dest: str) -> str:
    """pip's requirements for the wheels of its set a host got: each wheel of `wheels` the set's marker lists, by its
    path on the host (`dest`) and the sha256 the marker recorded, for pip's hash-checking mode ("" for a marker
    without sums). By path, not by name: no index or other file offering the same release (a wheel of a tag pip
    prefers, added to a PyPI release) takes its place. Only the marker's wheels: the set's folder may also hold the
    wheels of another torch release's set."""
    if re.search(r"\s", str(dest)):
        raise ValueError(f"python_env_wheelhouse_dest: {dest!r} holds whitespace, which a requirements file splits")
    recorded = _recorded_sums(marker_text)
    return "".join(f"{dest}/{name} --hash=sha256:{recorded[name]}\n" for name in sorted(wheels or [])
                   if name in recorded)


def python_env_wheels(names, system: str, arch: str) -> list:
    """The wheels whose platform tag is 'any' or names this OS and architecture."""
    machine = _machine(system, arch)
    fitting = []
    for name in sorted(names or []):
        tag = re.sub(r"\.whl$", "", name).split("-")[-1]
        if (tag == "any"
                or (system == "Linux" and "linux" in tag and machine in tag)
                or (system == "Darwin" and "macosx" in tag and (machine in tag or "universal2" in tag))):
            fitting.append(name)
    return fitting


def _is_requirement(text: str) -> bool:
    """A PEP 508 requirement as pip reads one line of a requirements file (no option, path or second line)."""
    try:
        Requirement(text)
    except InvalidRequirement:
        return False
    return "\n" not in text and "\r" not in text


def _check(var: str, ok: bool, msg: str) -> dict:
    return {"var": var, "ok": bool(ok), "msg": msg}


def python_env_platform(inputs: dict) -> dict:
    inputs = dict(inputs or {})
    facts = dict(inputs.get("facts") or {})
    v = dict(inputs.get("vars") or {})
    tables = dict(inputs.get("tables") or {})
    seen = dict(inputs.get("seen") or {})

    # preflight's hvc_platform normalizes arch (macOS arm64 -> aarch64) and knows the userland:
    # a Pi with a 64-bit kernel and 32-bit Pi OS is armv7l for installers.
    hvc = dict(facts.get("hvc_platform") or {})
    system = hvc["system"] if "system" in hvc else facts.get("system")
    arch = hvc["arch"] if "arch" in hvc else facts.get("architecture")
    if _int(hvc.get("userland_bits", 64)) == 32 and arch in ("aarch64", "arm64"):
        arch = "armv7l"
    gpu = hvc["gpu"] if "gpu" in hvc else {}
    gpu = dict(gpu or {})
    gpu_count = _int(gpu.get("count", 0))
    # The driver's CUDA version: only a fallback for python_env_cuda_version (the toolkit's).
    cuda_fact = gpu.get("cuda_version") or ""
    venv_python = v.get("python_env_venv_python") or ""
    venv_interpreter = venv_python if len(venv_python) > 0 else tables.get("venv_python_default")

    torch_version = _text(v.get("python_env_torch_version"))
    python_version = _text(v.get("python_env_python_version"))
    conda_version = _text(v.get("python_env_conda_version"))
    cuda_version = _text(v.get("python_env_cuda_version"))
    fill_raw = v.get("python_env_wheelhouse_fill")
    fill_wanted = bool(v.get("python_env_wheelhouse_fill_bool"))
    offline = bool(v.get("python_env_offline"))
    wheelhouse = v.get("python_env_wheelhouse") or ""
    ca_bundle = v.get("cluster_ca_bundle") or ""
    wheelhouse_files = list(v.get("python_env_wheelhouse_files") or [])
    pip_packages = [str(p) for p in v.get("python_env_pip_packages") or []]
    training = [str(p) for p in v.get("python_env_training_packages") or []]
    unpinned = [p for p in pip_packages if re.search(tables["framework_re"], p) and not re.search("==", p)]
    # The other frameworks pinned in python_env_pip_packages (tensorflow==X): the wheelhouse carries them with torch.
    framework_pins = [p for p in pip_packages if re.search(tables["framework_re"], p) and re.search("==", p)
                      and not re.match(r"(?i)\s*torch\b", p)]
    not_requirements = [p for p in pip_packages if not _is_requirement(p)]
    bad_training = [p for p in training if not re.search(tables["package_re"], p)]

    checks = [
        _check("python_env_torch_version",
               torch_version == "" or re.search(tables["version_regex"], torch_version),
               f"python_env_torch_version is '{torch_version}'; expected a release like 2.13.0"
               " (no operator, no local tag), or empty"),
        _check("python_env_python_version", re.search(r"^3\.[0-9]+$", python_version),
               f"python_env_python_version is '{python_version}'; expected major.minor like 3.11"),
        _check("python_env_conda_version",
               conda_version == "" or re.search(tables["conda_version_regex"], conda_version),
               f"python_env_conda_version is '{conda_version}'; expected like 25.3.0-3 (Miniforge)"
               " or py311_24.9.2-0 (Miniconda), or empty"),
        _check("python_env_cuda_version",
               cuda_version == "" or re.search(tables["cuda_version_regex"], cuda_version),
               f"python_env_cuda_version is '{cuda_version}'; expected major.minor like 12.4, or empty"),
        _check("python_env_wheelhouse_fill", str(fill_raw).lower() in _BOOL_WORDS,
               f"python_env_wheelhouse_fill is '{fill_raw}'; allowed: true, false"),
        _check("python_env_offline", not offline or len(wheelhouse) > 0,
               "python_env_offline is true but python_env_wheelhouse is empty: offline installs need a wheelhouse"),
        _check("python_env_wheelhouse",
               len(wheelhouse) == 0 or seen.get("wheelhouse_is_dir") or fill_wanted,
               f"python_env_wheelhouse '{wheelhouse}' is not a folder on the controller, and"
               " python_env_wheelhouse_fill is false (nothing would fill it)"),
        _check("cluster_ca_bundle", len(ca_bundle) == 0 or seen.get("ca_bundle_is_file"),
               f"cluster_ca_bundle '{ca_bundle}' is not a file on the controller"),
        _check("python_env_wheelhouse_files", len(wheelhouse_files) == 0 or len(wheelhouse) > 0,
               "python_env_wheelhouse_files is set but python_env_wheelhouse (the folder) is empty"),
        # Each is a line of pip's requirements file: an option line (--index-url, -r) would change its sources.
        _check("python_env_pip_packages", not not_requirements,
               f"python_env_pip_packages lists {_json(not_requirements)}; allowed: pip requirement specifiers (PEP"
               " 508: numpy, numpy>=1.26,<3, tensorflow==2.15.1, pkg[extra]; python_version<'3.12'), no options or"
               " paths"),
        # Horovod is compiled against the framework installed here: an unpinned one changes under it.
        _check("python_env_pip_packages", not unpinned,
               f"python_env_pip_packages lists {_json(unpinned)} without an exact version; allowed for the"
               " frameworks Horovod builds against or runs with: a pin with == (e.g. torch==2.13.0,"
               " tensorflow==2.15.1, tf-keras==2.18.0), or"
               " python_env_torch_version for torch"),
        # They reach pip's argv and a marker's file name: a requirement, never an option or a path.
        _check("python_env_training_packages", not bad_training,
               f"python_env_training_packages lists {_json(bad_training)}; allowed: a package name with"
               " optional extras and version (numpy, numpy==2.2.6, numpy>=1.26,<3), or [] for none"),
    ]

    # The manager (armv7l has no conda installer).
    manager = v.get("python_env_manager")
    conda_platform = ((tables.get("conda_platforms") or {}).get(system) or {}).get(arch) or ""
    method = "conda" if manager == "conda" and len(conda_platform) > 0 else "venv"
    distribution = v.get("python_env_conda_distribution")
    checks.append(_check(
        "python_env_conda_force",
        not (manager == "conda" and method == "venv" and v.get("python_env_conda_force")),
        f"python_env_conda_force is true but {system}/{arch} has no {distribution} installer (conda exists"
        " for Linux-x86_64, Linux-aarch64, MacOSX-x86_64, MacOSX-arm64). Set python_env_conda_force: false"
        " to fall back to venv, or python_env_manager: venv."))

    # The torch build and its requirement.
    variant_wanted = v.get("python_env_torch_variant")
    variant = ("cpu" if system == "Darwin"
               else variant_wanted if variant_wanted != "auto"
               else "cuda" if gpu_count > 0 or v.get("python_env_cuda_build_host")
               else "cpu")
    # The CPU build of torch for Linux x86_64 carries the +cpu local version; PyPI's is the CUDA build.
    cpu_local = variant == "cpu" and system == "Linux" and arch == "x86_64"
    distro = v.get("python_env_torch_source") == "distro"
    requirement = "" if torch_version == "" or distro else f"torch=={torch_version}" + ("+cpu" if cpu_local else "")
    checks += _distro_torch_checks(distro, system, method, variant, torch_version, tables, pip_packages)
    distro_table = _distro_torch_packages(tables) if distro and torch_version else {}
    # apt's version glob: Debian's 2.6.0+dfsg-7 for a pin 2.6.0
    distro_packages = ([f"{name}={torch_version}*" for name in distro_table.get("pinned") or []]
                       + list(distro_table.get("unpinned") or []))
    # The environment's Python, for the wheels the controller downloads: conda's is pinned; a default
    # venv on Linux uses the distro python3, the one Ansible runs (facts); else python_env_python_version.
    python = facts.get("python")
    if manager == "venv" and len(venv_python) == 0 and system == "Linux" and python is not None:
        py = f"{python['version']['major']}.{python['version']['minor']}"
    else:
        py = python_version

    # The controller wheelhouse holds one folder per wheel set (OS, arch, Python, torch build, other frameworks),
    # e.g. linux-x86_64-cp311-cpu, linux-x86_64-cp311-cpu-tensorflow-cpu-2.15.1 (a host gets every wheel of its
    # set: a torch-only host must not get TensorFlow's); the marker names everything the set was filled with, so a
    # set filled before a training package was added is filled again (pip keeps the wheels already there).
    machine = _machine(system, arch)
    pins = [re.sub(r"[^A-Za-z0-9.+_-]", "_", p.strip().replace("==", "-")).lower() for p in framework_pins]
    set_name = "-".join([f"{str(system).lower()}-{arch}-cp{py.replace('.', '')}-{variant}"] + pins)
    marker = re.sub(r"[^A-Za-z0-9.+_-]", "_",
                    "_".join([requirement] + framework_pins + training).replace("==", "-")) + ".complete"
    # A flat folder of the user's own that already has this host's torch needs no download.
    flat_glob = (f"{wheelhouse}/{requirement.replace('==', '-')}-*{machine}.whl"
                 if len(wheelhouse) > 0 and seen.get("wheelhouse_is_dir") and len(requirement) > 0 else "")
    return {
        "system": system, "arch": arch, "machine": machine, "gpu_count": gpu_count, "cuda_fact": cuda_fact,
        "cuda_version": cuda_version if len(cuda_version) > 0 else cuda_fact,
        "venv_interpreter": venv_interpreter, "conda_platform": conda_platform, "method": method,
        "variant": variant, "torch_requirement": requirement,
        # the version the environment will report (torch.__version__): the OS's build carries its local tag
        "torch_version": torch_version + (distro_table.get("local_version") or "" if distro_packages else ""),
        "distro_packages": distro_packages, "framework_pins": framework_pins, "py": py,
        "set_dir": f"{wheelhouse}/{set_name}", "marker": marker, "flat_glob": flat_glob, "checks": checks,
    }


def _distro_torch_packages(tables: dict) -> dict:
    return dict(tables.get("distro_torch_packages") or {})


def _distro_torch_checks(distro: bool, system, method: str, variant: str, torch_version: str, tables: dict,
                         pip_packages: list) -> list:
    """python_env_torch_source distro: the OS's CPU torch at the pinned version, in a venv; nothing else gives it."""
    if not distro:
        return []
    torch_items = [p for p in pip_packages if re.match(r"(?i)\s*torch\s*($|[\[<>=!~;@ ])", p)]
    return [
        _check("python_env_torch_source", _distro_torch_packages(tables),
               f"python_env_torch_source is distro but {system} has no python3-torch package; allowed there: pip"
               " (distro needs Debian, Ubuntu or Raspberry Pi OS)"),
        _check("python_env_torch_source", method == "venv",
               "python_env_torch_source is distro, which a venv sees (--system-site-packages) but a conda environment"
               " does not; set python_env_manager: venv, or python_env_torch_source: pip"),
        _check("python_env_torch_source", variant == "cpu",
               f"python_env_torch_source is distro, a CPU build of torch, but python_env_torch_variant is {variant};"
               " set python_env_torch_variant: cpu (or auto on a host without a GPU), or python_env_torch_source: pip"),
        _check("python_env_torch_version", torch_version != "",
               "python_env_torch_source is distro but python_env_torch_version is empty; set it to the version of the"
               " OS's python3-torch (Debian 13: 2.6.0)"),
        _check("python_env_pip_packages", not torch_items,
               f"python_env_pip_packages lists {_json(torch_items)} but python_env_torch_source is distro (the OS's"
               " python3-torch); drop the item, or set python_env_torch_source: pip"),
    ]


def _json(value) -> str:
    import json

    return json.dumps(value)


def _index_argv(url: str) -> list:
    """pip's argv for an extra index: none for an URL with credentials (it goes by _index_env, out of `ps`)."""
    return ["--extra-index-url", url] if len(url) > 0 and not has_credentials(url) else []


def _index_env(url: str, shown: bool = False) -> dict:
    """pip's environment for an extra index with credentials (ansible-core prints no `environment:`)."""
    return {"PIP_EXTRA_INDEX_URL": redact_url(url) if shown else url} if has_credentials(url) else {}


def python_env_plan(decided: dict, inputs: dict, seen: dict | None = None) -> dict:
    d = dict(decided or {})
    inputs = dict(inputs or {})
    v = dict(inputs.get("vars") or {})
    tables = dict(inputs.get("tables") or {})
    seen = dict(seen or {})
    system, arch, py, variant = d["system"], d["arch"], d["py"], d["variant"]
    requirement = d["torch_requirement"]
    # what the host's wheel set is filled with: torch and the other frameworks pinned (tensorflow==X, tf-keras==X)
    set_requirement = " ".join([r for r in [requirement] + d["framework_pins"] if r])
    wheelhouse = v.get("python_env_wheelhouse") or ""
    training = list(v.get("python_env_training_packages") or [])
    pip_packages = list(v.get("python_env_pip_packages") or [])
    wheelhouse_files = list(v.get("python_env_wheelhouse_files") or [])
    offline = bool(v.get("python_env_offline"))
    cpu_index = v.get("python_env_torch_cpu_index_url") or ""
    cuda_index = v.get("python_env_torch_cuda_index_url") or ""
    set_dir = d["set_dir"]

    # The wheel set and whether the controller must download it.
    complete = bool(seen.get("complete"))
    in_flat = bool(d.get("flat_glob")) and len(seen.get("flat_torch") or []) > 0
    fill_wanted = (bool(v.get("python_env_wheelhouse_fill_bool")) and len(wheelhouse) > 0
                   and len(requirement) > 0 and not complete and not in_flat)
    if len(wheelhouse) == 0:
        wheel_dir = ""
    elif in_flat and not complete:
        wheel_dir = wheelhouse
    else:
        wheel_dir = set_dir if (seen.get("set_dir_is_dir") or fill_wanted) else wheelhouse
    fill, fill_env = {}, []
    if fill_wanted:
        index = cpu_index if variant == "cpu" else cuda_index
        # A +cpu pin is tried with the controller's own pip configuration first (a mirror or find-links
        # may have it), then with the CPU index; other builds go straight to their index, if any.
        index_second = len(index) > 0 and "+cpu" in requirement
        indexes = ["", index] if index_second else [index]
        platforms = (tables.get("pip_platforms") or {}).get(f"{system}-{arch}") or []
        argv = (["pip", "download", "--disable-pip-version-check", "--no-input", "--only-binary=:all:",
                 "--dest", set_dir, "--python-version", py, "--implementation", "cp"]
                + ["--platform=" + p for p in platforms] + [requirement] + d["framework_pins"] + training)
        # target: the host's platform as pip's environment markers see it (system, machine, Python X.Y);
        # env: what each attempt adds to pip's environment, as shown (fill_env: as given to pip)
        fill = {"dir": set_dir, "requirement": set_requirement, "marker": d["marker"],
                "target": [system, d["machine"], py],
                "attempts": [argv + _index_argv(i) for i in indexes],
                "env": [_index_env(i, shown=True) for i in indexes]}
        fill_env = [_index_env(i) for i in indexes]

    # The wheels this host gets: python_env_wheelhouse_files, or every wheel of its folder that fits it.
    checks = []
    if wheelhouse_files:
        names = wheelhouse_files
        if not fill:
            present = set(seen.get("present") or [])
            checks += [_check("python_env_wheelhouse_files", f"{wheel_dir}/{name}" in present,
                              f"python_env_wheelhouse_files: '{name}' is missing from"
                              f" '{wheel_dir}' (python_env_wheelhouse)") for name in wheelhouse_files]
    elif len(wheel_dir) == 0:
        names = []
    elif wheel_dir == set_dir and wheel_dir != wheelhouse:
        names = seen.get("set_wheels") or []
    else:
        names = seen.get("wheelhouse_wheels") or []
    wheels = python_env_wheels([str(n) for n in names], system, arch)
    # the host's wheels are a set this role downloads now (no wheels listed yet) or did download (its marker lists
    # them, with their sums): either way installed by its hashes, so a second run changes nothing
    wheel_set = ((bool(fill) or (len(wheels) > 0 and complete)) and len(requirement) > 0 and not wheelhouse_files
                 and wheel_dir == set_dir and wheel_dir != wheelhouse)

    # pip sources, written as option lines at the top of the requirements file (pip honours them there).
    torch_in_wheelhouse = bool(fill) or any(
        re.match(re.escape(requirement.replace("==", "-")) + "-", w) for w in wheels)
    has_wheels = len(wheels) > 0 or bool(fill)
    if offline or requirement == "" or torch_in_wheelhouse:
        index = ""
    elif variant == "cpu" and system == "Linux":
        index = cpu_index
    elif variant == "cuda":
        index = cuda_index
    else:
        index = ""
    sources = ((["--find-links " + str(v.get("python_env_wheelhouse_dest"))] if has_wheels else [])
               + (["--no-index"] if offline else []))
    # The file on the host (0600) holds the index as given; the plan shows it without its password.
    pip_options = sources + (["--extra-index-url " + index] if len(index) > 0 else [])
    shown_options = sources + (["--extra-index-url " + redact_url(index)] if len(index) > 0 else [])
    requirements = ([requirement] if len(requirement) > 0 else []) + training + pip_packages

    torch_version = _text(v.get("python_env_torch_version"))
    checks.append(_check(
        "python_env_offline",
        not offline or requirement == "" or bool(fill)
        or any(re.match("torch-" + re.escape(torch_version), w) for w in wheels),
        f"python_env_offline is true but python_env_wheelhouse '{wheelhouse}' has no wheel for"
        f" {requirement} on {system}/{arch} (python_env_torch_version)"))

    manager = v.get("python_env_manager")
    method = d["method"]
    if manager == "conda" and method == "venv":
        reason = f"{arch}: no {v.get('python_env_conda_distribution')} installer, using venv"
    else:
        reason = f"python_env_manager: {manager} on {system}/{arch}"
    env_path = (f"{v.get('python_env_conda_prefix')}/envs/{v.get('python_env_conda_env_name')}"
                if method == "conda" else v.get("python_env_path"))
    plan = {
        "action": "install", "method": method, "reason": reason, "platform": f"{system}/{arch}",
        "env_path": env_path, "python": f"{env_path}/bin/python", "torch_variant": variant,
        "torch_requirement": requirement, "torch_version": d.get("torch_version", ""),
        # the OS's torch packages (python_env_torch_source distro), installed with apt before the venv
        "distro_packages": d.get("distro_packages") or [], "wheels": wheels, "wheel_dir": wheel_dir,
        # a set the controller downloaded (one resolution): the host installs it first, each wheel by its sha256
        "hashed": wheel_set,
        # What the controller downloads into its wheelhouse first ({} = nothing: present or not wanted).
        "fill": fill, "pip_options": shown_options, "requirements": requirements,
        "installer": {},
        # whether the rollout creates it as root (the inventory's ansible_become; a user-space host: false)
        "become": bool(v.get("become")),
    }
    return {**d, "wheel_dir": wheel_dir, "set_requirement": set_requirement, "fill": fill, "fill_env": fill_env,
            "wheels": wheels, "pip_options": pip_options,
            "requirements": requirements, "plan": plan, "checks": checks}


# conda-forge's nvcc wrapper of the system toolkit where __python_env_nvcc_metapackage names no architecture.
_NVCC_DEFAULT = "nvcc_linux-64"


def python_env_conda_dependencies(inputs: dict, commented: bool = False) -> list:
    """environment.yml's conda dependencies (its pip section aside), in order.

    CUDA 12 and later: conda-forge's cuda-version and cuda-nvcc pinned to the host's CUDA major.minor; CUDA 11 and
    earlier (and an unknown version): the nvcc_linux-* wrapper of the system toolkit, which conda-forge built only up
    to 11.8. Both with cudnn, nccl and cxx-compiler; then python_env_conda_packages as given.
    """
    i = dict(inputs or {})
    cuda = _text(i.get("cuda_version") or "")
    arch = i.get("arch")
    nvcc_table = dict(i.get("nvcc_metapackages") or {})
    deps = [(f"python={_text(i.get('python_version'))}", ""), ("pip", ""),
            ("cmake>=3.13,<4",
             "CMake so that Horovod builds its Gloo controller (Horovod 0.28.1 needs >= 3.13 and < 4)."),
            ("mpi4py", "mpi4py brings an MPI (conda-forge's OpenMPI/MPICH builds) Horovod can build against.")]
    cuda_libraries = ["cudnn", "nccl", "cxx-compiler"]
    if i.get("variant") == "cuda" and _int(cuda.split(".")[0]) >= 12:
        deps += [(f"cuda-version={cuda}", f"CUDA host: conda-forge's CUDA {cuda} (cuda-version pins the release nvcc,"
                                          " cuDNN and NCCL are built for)."),
                 (f"cuda-nvcc={cuda}", "")]
        deps += [(name, "") for name in cuda_libraries]
    elif i.get("variant") == "cuda":
        nvcc = nvcc_table[arch] if arch in nvcc_table else _NVCC_DEFAULT
        deps += [(cuda_libraries[0], "CUDA <= 11 (Debian 12's 11.8): no cuda-nvcc on conda-forge, so as before its"
                                     " nvcc_linux-* wrapper of the system toolkit.")]
        deps += [(name, "") for name in cuda_libraries[1:]] + [(f"{nvcc}={cuda}", "")]
    deps += [(_text(package), "") for package in i.get("packages") or []]
    if commented:
        return [{"spec": spec, "comment": comment} for spec, comment in deps]
    return [spec for spec, _ in deps]


class FilterModule:
    """python_env_platform, python_env_plan, python_env_wheels, python_env_wheel_manifest, python_env_changed_wheels,
    python_env_hashed_wheels, python_env_conda_dependencies."""

    def filters(self):
        return {"python_env_platform": python_env_platform, "python_env_plan": python_env_plan,
                "python_env_wheels": python_env_wheels, "python_env_wheel_manifest": python_env_wheel_manifest,
                "python_env_changed_wheels": python_env_changed_wheels,
                "python_env_hashed_wheels": python_env_hashed_wheels,
                "python_env_conda_dependencies": python_env_conda_dependencies}
