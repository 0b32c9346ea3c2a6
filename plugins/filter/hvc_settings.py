# -*- coding: utf-8 -*-
# Apache-2.0
"""The variables a user gave (inventory and extra vars), checked on the controller before any host
changes: preflight's decide step calls `hvc_settings_findings`, so `plan` and every plain
`ansible-playbook site.yml` run refuse them first.

- types and choices from every role's meta/argument_specs.yml (and the project-wide settings: the
  `settings` entry point of the preflight role), checked as written: 3.10 unquoted is the number 3.1,
  "ture" and 2 are no booleans, a string is no list (Ansible's own validation converts these);
- each role's meta/rules.yml: anchored patterns (versions, sha256), pins that must travel together (a
  version and its URL and sha256), versions pinned twice that must agree (python_env_torch_version and a
  torch==X item of python_env_pip_packages), files that must exist on the controller; and the serial value;
- misspelt names: a warning naming the closest real name.

Each finding is one line naming the host, the variable and the allowed values or form.
"""
from __future__ import annotations

import difflib
import os
import re
import sys

import yaml

try:  # under Ansible: the collection's own filter modules
    from ansible_collections.hvc.horovod_cluster.plugins.filter.hvc_redact_url import redact_url
except ImportError:  # plain Python (unit tests): the file beside this one
    if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
        sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from hvc_redact_url import redact_url

UNDEFINED = "__hvc_undefined__"
# What ansible.module_utils.parsing.convert_bool accepts, as written in an inventory.
# Settings that were renamed: given under the old name they would be ignored without a word, so they
# are refused with the new one. hvc_ names are the roles' published results; project-wide settings and
# the one CA bundle live in roles/cluster_defaults.
RENAMED = {
    **{"hvc_" + n: "cluster_" + n for n in ("serial", "max_fail_percentage", "facts_dir", "record_dir",
                                           "plan_roles", "check_smoke", "check_bench", "check_python")},
    **{n: "cluster_ca_bundle" for n in ("hvc_ca_bundle", "python_env_ca_bundle", "cuda_toolkit_pip_ca_bundle",
                                        "nccl_pip_ca_bundle", "horovod_ca_bundle")},
}
_BOOL_WORDS = {"yes", "no", "true", "false", "on", "off", "1", "0", "y", "n", "t", "f"}
_SERIAL_PART = re.compile(r"\A(?:[1-9][0-9]*|(?:[1-9][0-9]?|100)%)\Z")
_NAME_RE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_CACHE: dict = {}


def _role_dirs(roles_dir):
    return sorted(os.path.join(roles_dir, d) for d in os.listdir(roles_dir)
                  if os.path.isfile(os.path.join(roles_dir, d, "meta", "argument_specs.yml")))


def load_specs(roles_dir):
    """{variable: [(role, entry point, spec), ...]} over every role's argument specs (cached)."""
    key = ("specs", os.path.realpath(roles_dir))
    if key not in _CACHE:
        specs = {}
        for role_dir in _role_dirs(roles_dir):
            with open(os.path.join(role_dir, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
                data = yaml.safe_load(handle) or {}
            for entry, body in (data.get("argument_specs") or {}).items():
                for name, spec in ((body or {}).get("options") or {}).items():
                    specs.setdefault(name, []).append((os.path.basename(role_dir), entry, spec or {}))
        _CACHE[key] = specs
    return _CACHE[key]


def load_rules(roles_dir):
    """Every role's meta/rules.yml merged (cached): {patterns: {var: {regex, form}}, pins: [{var, with, unless}],
    agree: [{var, list, package, default}], controller_files: [var],
    rootless: {methods: {var: [values]}, paths: [var], needs: {os_family: [need]}}}.
    A pattern's regex is Python's `re`, matched from the start (`\\Z` ends it), against the value, each item of a
    list or each key of a mapping; an empty value is left to the role (there it means "the default"). A pin's
    defaults (of `var` and of `unless.var`) are the argument specs' defaults: written once."""
    key = ("rules", os.path.realpath(roles_dir))
    if key not in _CACHE:
        specs = load_specs(roles_dir)

        def default(name):
            return next((spec["default"] for _, _, spec in specs.get(name, []) if "default" in spec), None)

        rules = {"patterns": {}, "pins": [], "agree": [], "controller_files": [],
                 "rootless": {"methods": {}, "paths": [], "needs": {}}}
        for role_dir in _role_dirs(roles_dir):
            path = os.path.join(role_dir, "meta", "rules.yml")
            if not os.path.isfile(path):
                continue
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle) or {}
            rules["patterns"].update(data.get("patterns") or {})
            for pin in data.get("pins") or []:
                unless = dict(pin.get("unless") or {})
                if unless:
                    unless["default"] = default(unless["var"])
                rules["pins"].append(dict(pin, default=default(pin["var"]), unless=unless))
            rules["agree"] += [dict(rule, default=default(rule["var"])) for rule in data.get("agree") or []]
            rules["controller_files"] += data.get("controller_files") or []
            rootless = data.get("rootless") or {}
            rules["rootless"]["methods"].update(rootless.get("methods") or {})
            rules["rootless"]["paths"] += rootless.get("paths") or []
            for family, needs in (rootless.get("needs") or {}).items():
                rules["rootless"]["needs"].setdefault(family, []).extend(needs)
        _CACHE[key] = rules
    return _CACHE[key]


def hvc_rootless_rules(roles_dir, os_family):
    """What cluster_rootless asks of a host of this OS family, from the roles' meta/rules.yml: the methods each
    role may use without root, the path variables that must lie under the user's home, and the system packages
    the host must already have (a family no role names needs none: macOS's Homebrew runs as the user)."""
    rootless = load_rules(roles_dir)["rootless"]
    return {"methods": rootless["methods"], "paths": rootless["paths"],
            "needs": rootless["needs"].get(os_family, [])}


def hvc_rule_errors(values, roles_dir, host, required=()):
    """The role's own check of its variables' values against the patterns of the roles' meta/rules.yml, the
    same rules preflight applies to what the inventory gives: `{name: value} | hvc_rule_errors(roles_dir, host)`.
    An empty value passes (it means "the default"), except for the names in `required`. Versions that must agree
    (`agree`) are checked when `values` holds both names."""
    rules = load_rules(roles_dir)
    patterns = rules["patterns"]
    agreeing = {rule[key] for rule in rules["agree"] for key in ("var", "list")}
    errors = _agree_errors(host, values, rules["agree"], defaults=False)
    for name, value in sorted(values.items()):
        rule = patterns.get(name)
        if rule is None and name in agreeing:
            continue
        if rule is None:
            raise ValueError("%s has no pattern in any role's meta/rules.yml" % name)
        if value not in (None, ""):
            errors += _pattern_errors(host, name, value, rule["regex"], rule["form"])
        elif name in required:
            errors.append("host %s: %s is empty; allowed: %s" % (host, name, rule["form"]))
    return errors


def known_names(roles_dir):
    """Every variable name the project's roles and playbooks mention (a name used anywhere is real)."""
    key = ("names", os.path.realpath(roles_dir))
    if key not in _CACHE:
        names = set(load_specs(roles_dir))
        for top in (roles_dir, os.path.join(os.path.dirname(roles_dir), "playbooks")):
            for folder, _, files in os.walk(top):
                for name in files:
                    # links point at files read here anyway (or, playbooks/filter_plugins, at plugins/filter)
                    path = os.path.join(folder, name)
                    if name.endswith((".yml", ".yaml", ".j2", ".py")) and not os.path.islink(path):
                        with open(path, encoding="utf-8", errors="replace") as handle:
                            names.update(_NAME_RE.findall(handle.read()))
        _CACHE[key] = names
    return _CACHE[key]


def _prefixes(roles_dir):
    return tuple(sorted({os.path.basename(d) + "_" for d in _role_dirs(roles_dir)} | {"hvc_"}))


def _kind(value):
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "the number %s" % value
    if isinstance(value, float):
        return "the number %r" % value
    if isinstance(value, str):
        return "the string %r" % value
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a %s" % type(value).__name__


def type_error(value, spec):
    """Why `value` (as written) is not of the spec's type and choices, or None."""
    kind = spec.get("type", "str")
    if kind == "raw" or value is None:
        return None
    if kind == "bool":
        ok = isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)) \
            or (isinstance(value, str) and value.strip().lower() in _BOOL_WORDS)
        return None if ok else "is %s; allowed: true or false" % _kind(value)
    if kind == "int":
        ok = (isinstance(value, int) and not isinstance(value, bool)) \
            or (isinstance(value, str) and re.match(r"\A-?[0-9]+\Z", value.strip()) is not None)
        return None if ok else "is %s; allowed: a whole number" % _kind(value)
    if kind == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else "is %s; allowed: a number" % _kind(value)
    if kind in ("str", "path"):
        if isinstance(value, float):
            return ("is %s (YAML reads an unquoted 3.10 as the number 3.1); allowed: a string, quoted as "
                    "written (\"3.10\", not 3.10)" % _kind(value))
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            return "is %s; allowed: a string" % _kind(value)
    elif kind == "list":
        if not isinstance(value, (list, tuple)):
            return "is %s; allowed: a list (YAML: [a, b] or one '- item' per line)" % _kind(value)
        element = {"type": spec.get("elements", "raw"), "options": spec.get("options"),
                   "choices": spec.get("choices")}
        for index, item in enumerate(value):
            why = type_error(item, element)
            if why:
                return "item %d %s" % (index + 1, why)
        return None
    elif kind == "dict":
        if not isinstance(value, dict):
            return "is %s; allowed: a mapping (name: value)" % _kind(value)
        for name, sub in (spec.get("options") or {}).items():
            if sub.get("required") and name not in value:
                return "lacks the key %r" % name
            why = type_error(value[name], sub) if name in value else None
            if why:
                return "key %r %s" % (name, why)
    choices = spec.get("choices")
    if choices and str(value) not in [str(c) for c in choices]:
        return "is %r; allowed values: %s" % (value, ", ".join(str(c) for c in choices))
    return None


def _shown(value) -> str:
    """A refused value as the message repeats it: an URL's credentials masked (they must not reach the output)."""
    return repr(redact_url(value)) if isinstance(value, str) else repr(value)


def _pattern_errors(host, name, value, pattern, form):
    if isinstance(value, dict):  # a mapping's keys: environment variable names reach a shell unquoted
        bad = [key for key in value if re.match(pattern, str(key)) is None]
        return ["host %s: %s has the key %s; allowed: %s" % (host, name, _shown(bad[0]), form)] if bad else []
    items = value if isinstance(value, (list, tuple)) else [value]
    bad = [item for item in items if not isinstance(item, (dict, list)) and re.match(pattern, str(item)) is None]
    if not bad:
        return []
    if isinstance(value, (list, tuple)):
        return ["host %s: %s has the item %s; allowed: %s" % (host, name, _shown(bad[0]), form)]
    return ["host %s: %s is %s; allowed: %s" % (host, name, _shown(value), form)]


SERIAL_FORM = "a positive number of hosts per batch, a percentage 1%-100%, or a list of them"


def serial_error(value):
    """ansible's serial as the plays take it from cluster_serial (and the package from its `serial`
    argument): a positive number, 1-100%, or a list of them."""
    parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
    if isinstance(value, bool) or not parts or not all(_SERIAL_PART.match(str(p).strip()) for p in parts):
        return "is %r; allowed: %s" % (value, SERIAL_FORM)
    return None


def settings_findings(given, host, roles_dir):
    """{'errors': [...], 'warnings': [...], 'checked': [names]} for the variables `given` ({name: value as
    written}); `checked`: the given names the argument specs type and choose (preflight checks no choice again)."""
    rules = load_rules(roles_dir)
    specs = load_specs(roles_dir)
    errors, warnings = [], []
    prefixes = _prefixes(roles_dir)
    known = known_names(roles_dir)
    real = sorted(specs)
    for name in sorted(given):
        value = given[name]
        if name.startswith(("_", "ansible_")) or value == UNDEFINED:
            continue
        if name in RENAMED:
            errors.append("host %s: %s is no longer read; allowed: %s (roles/cluster_defaults), the same value"
                          % (host, name, RENAMED[name]))
            continue
        if name in specs:
            whys = [type_error(value, spec) for _, _, spec in specs[name]]
            if all(whys):
                role, entry, _ = specs[name][0]
                errors.append("host %s: %s %s (meta/argument_specs.yml of role %s)" % (host, name, whys[0], role))
                continue
        elif name not in known:
            close = difflib.get_close_matches(name, real, n=1, cutoff=0.8)
            if close and (name.startswith(prefixes) or difflib.SequenceMatcher(None, name, close[0]).ratio() >= 0.85):
                warnings.append("host %s: %s is not a variable of any role nor a project setting; did you mean %s?"
                                % (host, name, close[0]))
            continue
        rule = rules["patterns"].get(name)
        if rule and value not in (None, ""):
            errors += _pattern_errors(host, name, value, rule["regex"], rule["form"])
    errors += _pin_errors(host, given, rules["pins"])
    errors += _agree_errors(host, given, rules["agree"])
    for name in rules["controller_files"]:
        value = given.get(name)
        if isinstance(value, str) and value and not os.path.isfile(os.path.expanduser(value)):
            errors.append("host %s: %s is %r, which is not a file on the controller; allowed: an existing file "
                          "on the machine that runs Ansible, or empty" % (host, name, value))
    if "cluster_serial" in given and given["cluster_serial"] != UNDEFINED:
        why = serial_error(given["cluster_serial"])
        if why:
            errors.append("host %s: cluster_serial %s" % (host, why))
    checked = sorted(name for name in given if name in specs and given[name] != UNDEFINED)
    return {"errors": errors, "warnings": warnings, "checked": checked}


def _pin_errors(host, given, pins):
    """A version changed from the default needs the pins that belong to it (URL, checksums) given too."""
    errors = []
    for pin in pins:
        name = pin["var"]
        if name not in given or str(given[name]) == str(pin.get("default")):
            continue
        unless = pin.get("unless") or {}
        if unless and str(given.get(unless["var"], unless.get("default"))) in [str(v) for v in unless["values"]]:
            continue
        missing = [var for var in pin["with"] if var not in given]
        if missing:
            errors.append("host %s: %s is %r but %s %s still the default%s, made for %s %s; allowed: set %s together"
                          % (host, name, given[name], " and ".join(missing), "are" if len(missing) > 1 else "is",
                             "s" if len(missing) > 1 else "", name, pin.get("default"),
                             ", ".join([name] + list(pin["with"]))))
    return errors


def _agree_errors(host, values, rules, defaults=True):
    """A version pinned twice, as `var` and as a `<package>==X` item of `list`, must say the same (a local tag like
    +cpu aside: that is the build, not the version); an empty `var` pins nothing. With `defaults`, a name missing
    from `values` has its default (preflight: the inventory gives one, the role's default is the other)."""
    errors = []
    for rule in rules:
        var, items = rule["var"], rule["list"]
        if not defaults and (var not in values or items not in values):
            continue
        version = str(values.get(var, rule.get("default") if defaults else "") or "")
        listed = values.get(items) or []
        if not version or version == UNDEFINED or not isinstance(listed, (list, tuple)):
            continue
        pinned = re.compile(r"\s*%s\s*(?:\[[^\]]*\])?\s*==\s*([^\s,;+]+)" % re.escape(rule["package"]), re.I)
        for item in listed:
            found = pinned.match(str(item))
            if found and found.group(1) != version:
                errors.append("host %s: %s has the item %r but %s is %r; allowed: the same version in both, or "
                              "%s: \"\" to install %s from %s alone" % (host, items, str(item), var, version, var,
                                                                        rule["package"], items))
    return errors


def given_vars(hostvars, names=None):
    """{name: value} of the variables set for a host (inventory, extra vars), templated one by one;
    a value that does not template is left out (the role that uses it reports it)."""
    out = {}
    for name in list(names if names is not None else hostvars.keys()):
        if name.startswith(("_", "ansible_")) or name in ("groups", "group_names", "hostvars", "omit"):
            continue
        try:
            out[name] = hostvars[name]
        except Exception:  # noqa: BLE001 - an undefined or broken template: not ours to judge here
            continue
    return out


def hvc_spec_choices(roles_dir):
    """{variable: allowed values} of every option with `choices` in the roles' argument specs (list options:
    the values each item may take)."""
    return {name: list(spec["choices"]) for name, entries in sorted(load_specs(roles_dir).items())
            for _, _, spec in entries[:1] if spec.get("choices")}


def hvc_settings_findings(hostvars, host, roles_dir):
    """The filter: `hostvars[inventory_hostname] | hvc_settings_findings(inventory_hostname, roles_dir)`."""
    return settings_findings(given_vars(hostvars), host, roles_dir)


class FilterModule(object):
    def filters(self):
        return {"hvc_settings_findings": hvc_settings_findings, "hvc_spec_choices": hvc_spec_choices,
                "hvc_rootless_rules": hvc_rootless_rules, "hvc_rule_errors": hvc_rule_errors}
