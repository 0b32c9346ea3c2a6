"""The summary of one tests/device/gpu_check.sh run, as JSON on stdout, from the record folder it wrote.

Read with the project's own parsers: check-build through plugins/module_utils/horovod_check_build.py, the
GPU facts from the facts file playbooks/record_facts.yml wrote (hvc_platform, the module's output), the
collectives from the `HVC_RESULT` / `HVC_ALLREDUCE` lines the scripts print.
  python tests/device/summarize.py RECORD_DIR
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plugins" / "module_utils"))
from horovod_check_build import CheckBuildParseError, parse_check_build  # noqa: E402

# horovodrun prefixes each rank's line with "[rank]<stdout>:"; the payload is the JSON after the marker.
_MARKED = re.compile(r"(HVC_RESULT|HVC_ALLREDUCE) (\{.*\})\s*$")


def marked_lines(text: str, marker: str) -> list:
    found = []
    for line in text.splitlines():
        match = _MARKED.search(line)
        if match and match.group(1) == marker:
            found.append(json.loads(match.group(2)))
    return found


def read(path: pathlib.Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def steps(record: pathlib.Path) -> dict:
    rows = {}
    for line in read(record / "steps.tsv").splitlines():
        name, code, seconds = line.split("\t")
        rows[name] = {"exit": int(code) if code.lstrip("-").isdigit() else code, "seconds": int(seconds)}
    return rows


def check_build(record: pathlib.Path):
    try:
        return parse_check_build(read(record / "raw" / "check-build"))
    except CheckBuildParseError as error:
        return {"error": str(error)}


def ranks(records: list) -> list:
    return sorted(records, key=lambda record: record["rank"])


def compiled(text: str):
    """tests/compile_patches.py's JSON, the units where the patches made a difference first."""
    start = text.find("{")
    if start < 0:
        return None
    result = json.loads(text[start:])
    result["fixed"] = sorted(unit for unit, sides in result["units"].items()
                             if sides["unpatched"]["exit"] != 0 and sides["patched"]["exit"] == 0)
    return result


def first(items: list):
    return items[0] if items else None


def summarize(record: pathlib.Path) -> dict:
    logs = record / "logs"
    facts = sorted((record / "facts").glob("*.json"))
    platform = json.loads(facts[0].read_text()).get("hvc_platform", {}) if facts else {}
    host = read(record / "raw" / "python-torch").strip()
    shared = read(logs / "two_ranks_one_gpu.log")
    return {
        "steps": steps(record),
        "host": json.loads(host) if host.startswith("{") else host,
        "os": dict(line.split("=", 1) for line in read(record / "raw" / "os-release").splitlines() if "=" in line),
        "gcc": first(read(record / "raw" / "gcc-version").splitlines()),
        "nvcc": read(record / "raw" / "nvcc-version").strip().splitlines()[-2:],
        "gpu_facts": platform.get("gpu"),
        "check_build": check_build(record),
        "smoke": first(marked_lines(read(logs / "smoke.log"), "HVC_RESULT")),
        "horovod_bench": first(marked_lines(read(logs / "bench.log"), "HVC_RESULT")),
        "horovod_bench_cycle_0.1ms": first(marked_lines(read(logs / "bench_cycle_0.1ms.log"), "HVC_RESULT")),
        "torch_bench": first(marked_lines(read(logs / "torch_bench.log"), "HVC_RESULT")),
        "two_ranks_one_gpu": ranks(marked_lines(shared, "HVC_ALLREDUCE")),
        "nccl_messages": [line for line in shared.splitlines() if re.search(r"(?i)nccl (warn|error)|duplicate gpu",
                                                                            line)][:5],
        "mixed_device": ranks(marked_lines(read(logs / "mixed_device.log"), "HVC_ALLREDUCE")),
        "compile_patches": compiled(read(logs / "compile_patches.log")),
    }


if __name__ == "__main__":
    print(json.dumps(summarize(pathlib.Path(sys.argv[1])), indent=1))
