"""Compatibility matrix checker of horovod x torch x TensorFlow x Python x CMake x CUDA (pure).

The matrix data lives in ONE place: roles/horovod/vars/compat.yml (`horovod_compat_matrix`).
`horovod_compat_check(combo, matrix)` returns

  {"ok": bool,                 # False when any rule refuses
   "refusals": [rule...],      # verdict bad (or untested while allow_untested is false)
   "warnings": [rule...],      # untested but allowed
   "fixes":    [rule...],      # the combination works with a fix the role applies (fix: name)
   "known_good": bool,         # the combination matches a measured known-good entry
   "message": str}             # one text naming each refusal, its reason and the way out

combo: {"horovod": "0.28.1", "source": "pypi", "pytorch": "2.13.0+cpu", "tensorflow": None,
        "python": "3.11.2", "cmake": "3.25.1", "cuda": None, "os": "debian12", "arch": "x86_64",
        "allow_untested": False}
A rule matches when every key of its `when` holds: a version spec (">=2.16.1,<3"), a list of
allowed strings (for source/os/arch), or `present`/`absent`. A component that is None/"" never
matches a version spec (an absent TensorFlow is not "TF >= 2.16.1").
Preflight uses it the same way: include_vars roles/horovod/vars/compat.yml, then
`combo | horovod_compat_check(horovod_compat_matrix)` and assert `.ok` with `.message`.
"""
from __future__ import annotations

import re

_OPS = ("<=", ">=", "==", "!=", "<", ">")


class HorovodCompatError(ValueError):
    """Bad matrix or bad version string."""


def _vtuple(version) -> tuple:
    text = str(version).strip()
    text = text.split("+", 1)[0]  # local version: 2.13.0+cpu -> 2.13.0
    match = re.match(r"^v?(\d+(?:\.\d+)*)", text)
    if not match:
        raise HorovodCompatError(f"bad version string {version!r}")
    nums = [int(n) for n in match.group(1).split(".")]
    while len(nums) < 3:
        nums.append(0)
    return tuple(nums)


def version_matches(version, spec: str) -> bool:
    """'2.16.1' matches '>=2.16.1,<3'. Comma = and."""
    have = _vtuple(version)
    for clause in str(spec).split(","):
        clause = clause.strip()
        if not clause:
            continue
        for op in _OPS:
            if clause.startswith(op):
                want = _vtuple(clause[len(op):])
                break
        else:
            op, want = "==", _vtuple(clause)
        ok = {
            "<=": have <= want, ">=": have >= want, "==": have == want,
            "!=": have != want, "<": have < want, ">": have > want,
        }[op]
        if not ok:
            return False
    return True


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


def rule_matches(rule: dict, combo: dict) -> bool:
    when = rule.get("when") or {}
    if not when:
        raise HorovodCompatError(f"compat rule {rule.get('id')!r} has no `when`")
    return all(_cond_holds(combo.get(key), cond) for key, cond in when.items())


def horovod_compat_check(combo: dict, matrix: dict) -> dict:
    combo = dict(combo or {})
    matrix = matrix or {}
    allow_untested = bool(combo.get("allow_untested"))
    result = {"ok": True, "refusals": [], "warnings": [], "fixes": [], "known_good": False, "message": ""}
    for rule in matrix.get("rules", []):
        if not rule_matches(rule, combo):
            continue
        entry = {k: rule.get(k) for k in ("id", "verdict", "reason", "way_out", "ref", "fix")}
        verdict = rule.get("verdict")
        if verdict == "bad":
            result["refusals"].append(entry)
        elif verdict == "untested":
            (result["warnings"] if allow_untested else result["refusals"]).append(entry)
        elif verdict == "needs_fix":
            result["fixes"].append(entry)
        else:
            raise HorovodCompatError(f"compat rule {rule.get('id')!r}: verdict {verdict!r} unknown")
    for good in matrix.get("known_good", []):
        if all(_cond_holds(combo.get(k), c) for k, c in (good.get("when") or {}).items()):
            result["known_good"] = True
            break
    if result["refusals"]:
        result["ok"] = False
        lines = [f"[{r['id']}] {r['reason']} Way out: {r['way_out']}"
                 + (f" (see {r['ref']})" if r.get("ref") else "") for r in result["refusals"]]
        result["message"] = "Refused combination: " + " | ".join(lines)
    return result


def horovod_compat_fixes(combo: dict, matrix: dict) -> list:
    """Names of the fixes the role must apply for this combination (e.g. cxx20, cmake_policy)."""
    return [f["fix"] for f in horovod_compat_check(combo, matrix)["fixes"] if f.get("fix")]


class FilterModule:
    """horovod_compat_check, horovod_compat_fixes, horovod_version_matches."""

    def filters(self):
        return {
            "horovod_compat_check": horovod_compat_check,
            "horovod_compat_fixes": horovod_compat_fixes,
            "horovod_version_matches": version_matches,
        }
