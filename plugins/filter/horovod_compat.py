"""Compatibility matrix checker of Horovod x torch x TensorFlow x Python x CMake x CUDA (pure).

The matrix data lives in ONE place: roles/horovod/vars/compat.yml (`horovod_compat_matrix`), with its
`sources`, the `builds` (each Horovod the role builds: the framework ranges that build and the C++ standard
each needs), the `rules` (refusals and fixes) and `known_good`.
`horovod_compat_check(combo, matrix)` returns

  {"ok": bool,                 # False when anything refuses
   "build": str | None,        # id of the matrix build this Horovod is (None: not in the matrix)
   "cxx_standard": int | None, # the C++ standard the role must patch in (None: the source's own is right)
   "refusals": [rule...],      # verdict bad (or untested while allow_untested is false)
   "warnings": [rule...],      # untested but allowed
   "fixes":    [rule...],      # fixes the role applies (fix: cxx17/cxx20, cmake_policy)
   "known_good": bool,         # the combination matches a measured known-good entry
   "message": str}             # one text naming each refusal, the versions, the reason, the way out, the source

combo: {"horovod": "0.28.1", "source": "pypi", "commit": None, "pytorch": "2.13.0+cpu", "tensorflow": None,
        "tensorflow_package": None, "tf_keras": None, "tf_keras_matches": False, "python": "3.11.2",
        "cmake": "3.25.1", "cuda": None, "os": "debian12", "arch": "x86_64", "allow_untested": False}
A `when` holds when every key holds: a version spec (">=2.16.1,<3"), a list of allowed strings (for
source/os/arch/commit), or `present`/`absent`. A component that is None/"" never matches a version spec
(an absent TensorFlow is not "TF >= 2.16.1").
`horovod_compat_markdown(matrix)` renders the matrix as the table of roles/horovod/README.md.
"""
from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# The frameworks the matrix has version ranges for, as the combo names them.
FRAMEWORKS = ("pytorch", "tensorflow")
_LABEL = {"pytorch": "torch", "tensorflow": "tensorflow", "tf_keras": "tf-keras", "mxnet": "mxnet", "python": "Python",
          "cmake": "CMake", "cuda": "CUDA"}


class HorovodCompatError(ValueError):
    """Bad matrix or bad version string."""


def _version(version) -> Version:
    """A PEP 440 version, as pip compares them (2.14.0rc1 < 2.14.0; a local part like +cpu is kept)."""
    try:
        return Version(str(version).strip())
    except InvalidVersion:
        raise HorovodCompatError(f"bad version string {version!r}") from None


def _specifier(spec: str) -> SpecifierSet:
    """'>=2.16.1,<3' as packaging reads it; a clause without an operator means ==."""
    clauses = [c.strip() for c in str(spec).split(",") if c.strip()]
    try:
        return SpecifierSet(",".join(c if c[0] in "<>=!~" else "==" + c for c in clauses))
    except InvalidSpecifier:
        raise HorovodCompatError(f"bad version spec {spec!r}") from None


def version_matches(version, spec: str) -> bool:
    """'2.16.1' matches '>=2.16.1,<3'. Comma = and; pre-releases are compared, never skipped."""
    return _specifier(spec).contains(_version(version), prereleases=True)


def _lower_bound(spec: str):
    lows = [Version(s.version) for s in _specifier(spec) if s.operator == ">="]
    return lows[0] if lows else None


def _cond_holds(value, cond) -> bool:
    if cond == "present":
        return value not in (None, "", False)
    if cond == "absent":
        return value in (None, "", False)
    if isinstance(cond, (list, tuple)):
        return str(value) in [str(c) for c in cond]
    if value in (None, "", False):
        return False
    return version_matches(value, str(cond))


def _holds(when: dict, combo: dict) -> bool:
    return all(_cond_holds(combo.get(key), cond) for key, cond in when.items())


def rule_matches(rule: dict, combo: dict) -> bool:
    when = rule.get("when") or {}
    if not when:
        raise HorovodCompatError(f"compat rule {rule.get('id')!r} has no `when`")
    return _holds(when, combo)


def _refs(matrix: dict, ids) -> list:
    sources = matrix.get("sources") or {}
    unknown = [i for i in ids or [] if i not in sources]
    if unknown:
        raise HorovodCompatError(f"compat matrix: unknown source id(s) {unknown}")
    return [sources[i].get("url") or sources[i].get("says") for i in ids or []]


def _horovod_text(combo: dict) -> str:
    commit = combo.get("commit")
    return "horovod %s" % combo.get("horovod") + (" (commit %s)" % str(commit)[:12] if commit else "")


def _entry(matrix: dict, rule: dict, combo: dict) -> dict:
    entry = {k: rule.get(k) for k in ("id", "verdict", "reason", "way_out", "fix")}
    entry["refs"] = _refs(matrix, rule.get("sources"))
    entry["ref"] = next((r for r in entry["refs"] if r.startswith("http")), None)
    if rule.get("wheel_key"):  # a fix that changes what the wheel does at run time: the wheel's key names it
        entry["wheel_key"] = rule["wheel_key"]
    # the versions this combination brings to the rule, named in the message
    entry["versions"] = ", ".join("%s %s" % (_LABEL.get(key, key), combo.get(key))
                                  for key in (rule.get("when") or {})
                                  if key in _LABEL and combo.get(key) not in (None, "", False, True))
    return entry


def find_build(combo: dict, matrix: dict):
    """The matrix build this Horovod is, or None."""
    return next((b for b in matrix.get("builds") or [] if _holds(b.get("when") or {}, combo)), None)


def _ranges(build: dict, framework: str, combo: dict):
    """(row the version falls in, or None; whether it is below every row)."""
    rows = (build.get("frameworks") or {}).get(framework) or []
    version = combo.get(framework)
    if version in (None, "", False) or not rows:
        return None, False
    row = next((r for r in rows if version_matches(version, r["versions"])), None)
    lows = [b for b in (_lower_bound(r["versions"]) for r in rows) if b]
    below = row is None and bool(lows) and _version(version) < min(lows)
    return row, below


def _framework_findings(matrix: dict, build: dict, combo: dict, refused_keys: set):
    """Per framework: the C++ standard the role sets, a refusal for a version below every range, and a
    refusal for a version in no range that no rule already refused."""
    standards, refusals = [], []
    for framework in FRAMEWORKS:
        rows = (build.get("frameworks") or {}).get(framework) or []
        if combo.get(framework) in (None, "", False) or not rows:
            continue
        row, below = _ranges(build, framework, combo)
        if row is None and not below and framework in refused_keys:
            row = rows[-1]  # above every range, let through by allow_untested: the newest range's standard
        if row is not None:
            if row.get("set_by") == "role":
                standards.append(int(row["cxx"]))
            continue
        if framework in refused_keys:
            continue
        spans = ", ".join(r["versions"] for r in rows)
        refusals.append({
            "id": f"{framework}-range", "verdict": "bad" if below else "untested", "fix": None,
            "versions": "%s %s" % (_LABEL[framework], combo.get(framework)),
            "reason": "%s builds with %s %s only." % (build.get("id"), _LABEL[framework], spans),
            "way_out": "pin %s within %s%s." % (_LABEL[framework], spans,
                                                 "" if below else ", or set horovod_allow_untested true"),
            "refs": _refs(matrix, [s for r in rows for s in r.get("sources") or []]), "ref": None})
    return (max(standards) if standards else None), refusals


def horovod_compat_check(combo: dict, matrix: dict) -> dict:
    combo = dict(combo or {})
    matrix = matrix or {}
    allow_untested = bool(combo.get("allow_untested"))
    result = {"ok": True, "build": None, "cxx_standard": None, "refusals": [], "warnings": [], "fixes": [],
              "known_good": False, "message": ""}
    found = []
    for rule in matrix.get("rules", []):
        if not rule_matches(rule, combo):
            continue
        if rule.get("verdict") not in ("bad", "untested", "needs_fix"):
            raise HorovodCompatError(f"compat rule {rule.get('id')!r}: verdict {rule.get('verdict')!r} unknown")
        found.append(_entry(matrix, rule, combo))
    refused_keys = {key for rule in matrix.get("rules", []) if rule_matches(rule, combo)
                    and rule.get("verdict") != "needs_fix" for key in rule["when"]}
    build = find_build(combo, matrix)
    if build is None:
        names = ", ".join(b.get("title", b.get("id")) for b in matrix.get("builds") or [])
        found.append({"id": "horovod-not-in-matrix", "verdict": "untested", "fix": None,
                      "versions": "",
                      "reason": "from %s, not in the compatibility matrix (vars/compat.yml), which has: %s."
                                % (combo.get("source"), names),
                      "way_out": "use one of those (horovod_version, horovod_source, horovod_git_commit), add it to "
                                 "the matrix, or set horovod_allow_untested true (then no C++ fix is applied).",
                      "refs": [], "ref": None})
    else:
        result["build"] = build.get("id")
        cxx, more = _framework_findings(matrix, build, combo, refused_keys)
        found.extend(more)
        if cxx:
            result["cxx_standard"] = cxx
            found.append({"id": "cxx-standard", "verdict": "needs_fix", "fix": f"cxx{cxx}", "versions": "",
                          "reason": f"{build.get('id')} hard-codes CMAKE_CXX_STANDARD 14; this framework needs C++{cxx}.",
                          "way_out": f"the role patches CMAKE_CXX_STANDARD 14 -> {cxx} in CMakeLists.txt and "
                                     "horovod/torch/CMakeLists.txt.", "refs": [], "ref": None})
    for entry in found:
        verdict = entry["verdict"]
        if verdict == "bad":
            result["refusals"].append(entry)
        elif verdict == "untested":
            (result["warnings"] if allow_untested else result["refusals"]).append(entry)
        else:
            result["fixes"].append(entry)
    result["fixes"].sort(key=lambda f: f["id"] != "cxx-standard")  # the C++ fix first, as the build applies it
    result["known_good"] = any(_holds(good.get("when") or {}, combo) for good in matrix.get("known_good", []))
    if result["refusals"]:
        result["ok"] = False
        lines = ["[%s] %s%s: %s Way out: %s%s" % (
            r["id"], _horovod_text(combo), (" with " + r["versions"]) if r.get("versions") else "",
            r["reason"], r["way_out"], (" (see %s)" % ", ".join(r["refs"])) if r.get("refs") else "")
            for r in result["refusals"]]
        result["message"] = "Refused combination: " + " | ".join(lines)
    return result


def horovod_compat_fixes(combo: dict, matrix: dict) -> list:
    """Names of the fixes the role must apply for this combination (e.g. cxx20, cmake_policy)."""
    return [f["fix"] for f in horovod_compat_check(combo, matrix)["fixes"] if f.get("fix")]


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def horovod_compat_markdown(matrix: dict) -> str:
    """The matrix as Markdown: one table of the builds' framework ranges, one of the rules, the sources."""
    matrix = matrix or {}
    sources = matrix.get("sources") or {}

    def links(ids):
        return ", ".join("[%s](%s)" % (i, sources[i]["url"]) if (sources.get(i) or {}).get("url") else i
                         for i in ids or [])

    out = ["Builds: " + "; ".join("`%s`: %s" % (b["id"], _cell(b.get("title", ""))) for b in matrix.get("builds") or []),
           "", "| Horovod | framework | versions that build | C++ standard | set by | sources |",
           "|---|---|---|---|---|---|"]
    for build in matrix.get("builds") or []:
        for framework, rows in (build.get("frameworks") or {}).items():
            for row in rows:
                out.append("| %s | %s | `%s` | %s | %s | %s |" % (
                    _cell(build["id"]), _LABEL.get(framework, framework), row["versions"], row["cxx"],
                    "the role's patch" if row.get("set_by") == "role" else "Horovod's CMake",
                    links(row.get("sources"))))
    out += ["", "| rule | verdict | when | reason | way out | sources |", "|---|---|---|---|---|---|"]
    for rule in matrix.get("rules") or []:
        when = ", ".join("%s %s" % (k, "/".join(str(x)[:12] for x in v) if isinstance(v, list) else v)
                         for k, v in rule["when"].items())
        verdict = rule["verdict"] + (" (%s)" % rule["fix"] if rule.get("fix") else "")
        out.append("| %s | %s | %s | %s | %s | %s |" % (rule["id"], verdict, _cell(when), _cell(rule["reason"]),
                                                          _cell(rule["way_out"]), links(rule.get("sources"))))
    out += ["", "| source | where | what it says |", "|---|---|---|"]
    for key, source in sources.items():
        out.append("| %s | %s | %s |" % (key, source.get("url") or "this project", _cell(source.get("says"))))
    return "\n".join(out) + "\n"


class FilterModule:
    """horovod_compat_check, horovod_compat_fixes, horovod_version_matches."""

    def filters(self):
        return {
            "horovod_compat_check": horovod_compat_check,
            "horovod_compat_fixes": horovod_compat_fixes,
            "horovod_version_matches": version_matches,
        }
