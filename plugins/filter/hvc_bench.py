# -*- coding: utf-8 -*-
# Apache-2.0
"""The check's bandwidth benches (hvc_allreduce_bench.py, hvc_torch_allreduce_bench.py) print their table as
one line `HVC_RESULT <json>` from rank 0, which horovodrun passes through to the launcher's output (rank 0 may
run on another host). This turns a registered horovodrun command into that table, or into what went wrong."""
from __future__ import annotations

import json
import re

RESULT = re.compile(r"HVC_RESULT (\{.*\})")


def bench_table(run):
    """{size, algorithm, rows} from the result line; else {error, command, output} (the output's last 3000
    characters, stderr first, to show why)."""
    found = RESULT.search(run.get("stdout") or "")
    if run.get("rc") == 0 and found:
        return json.loads(found.group(1))
    command = run.get("cmd") or []
    return {"error": "horovodrun exited %s" % run.get("rc", "?"),
            "command": " ".join(command) if isinstance(command, list) else str(command),
            "output": ((run.get("stderr") or "") + (run.get("stdout") or ""))[-3000:]}


class FilterModule:
    def filters(self):
        return {"hvc_bench_table": bench_table}
