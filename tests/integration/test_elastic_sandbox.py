"""An elastic job (issue 48) on the rolled-out sandbox: examples/train_elastic.py on one slot of each of the 3
hosts; the last host's container is stopped mid-training, the job goes on with 2 ranks from the last commit;
the container is started again, the host rejoins (3 ranks) before the end; the job ends with the same weights
on every rank and a loss that fell. Rank 0's `elastic` lines give the timeline, printed when the test runs.

Slow tier (HVC_SLOW=1): about 3 min of training paced to outlast a host's stop, restart and rejoin.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from horovod_cluster import Cluster
from horovod_cluster.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "inventories" / "sandbox"
EXAMPLE = ROOT / "examples" / "train_elastic.py"
EPOCHS = 30
COMMIT_EVERY = 5  # train_elastic.py's default

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (SANDBOX / "hosts.yml").is_file(), reason="sandbox not up (horovod-cluster sandbox up)"),
    pytest.mark.skipif(os.environ.get("HVC_SLOW") != "1",
                       reason="slow (an elastic job paced to outlast a host's stop and rejoin, 3 min): set HVC_SLOW=1"),
]


class Output:
    """The job's output lines as they come, with the time each came; also written to `path` as they come."""

    def __init__(self, path: Path) -> None:
        self.lines: list[tuple[float, str]] = []
        self.changed = threading.Condition()
        self.file = path.open("a", buffering=1)

    def __call__(self, line: str) -> None:
        with self.changed:
            self.lines.append((time.time(), line))
            self.file.write(line + "\n")
            self.changed.notify_all()

    def timeline(self) -> list[dict]:
        """Rank 0's `elastic {...}` records, in order."""
        return [json.loads(m.group(1)) for _, line in self.lines
                for m in [re.search(r"<stdout>:elastic (\{.*\})$", line)] if m]

    def wait_for(self, what: str, check, timeout: float) -> dict:
        """The first timeline record from now on for which `check` holds."""
        start, deadline = len(self.timeline()), time.time() + timeout
        with self.changed:
            while time.time() < deadline:
                found = [r for r in self.timeline()[start:] if check(r)]
                if found:
                    return found[0]
                self.changed.wait(timeout=5)
        raise AssertionError(f"no {what} within {timeout:.0f} s:\n" + self.text()[-6000:])

    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)


def test_a_host_stopped_mid_training_leaves_and_rejoins(tmp_path):
    cluster = Cluster(SANDBOX, artifacts_dir=tmp_path)
    hosts = cluster.hosts()
    victim = hosts[-1]
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("".join(f"{host} slots=1\n" for host in hosts))
    job = cluster.stage(["python", "train_elastic.py", "--epochs", str(EPOCHS), "--samples", "2048",
                         "--pace", "0.15"], elastic=True, min_np=2, copy=[EXAMPLE], hostfile=hostfile,
                        env={"HOROVOD_GLOO_TIMEOUT_SECONDS": "60"})
    assert job["np"] == 3 and job["elastic"] == {"min_np": 2, "max_np": 3, "hosts": [f"{h}:1" for h in hosts]}
    output, ended = Output(tmp_path / "job-output.txt"), {}
    runner = threading.Thread(target=lambda: ended.setdefault("result", cluster.launch(job, output, timeout=900)))
    runner.start()
    try:
        output.wait_for("commit with 3 ranks", lambda r: r["size"] == 3 and r["epoch"] >= 1, 300)
        subprocess.run(["podman", "stop", "-t", "2", victim], check=True, capture_output=True)
        stopped = time.time()
        shrunk = output.wait_for("commit with 2 ranks", lambda r: r["size"] == 2 and r["event"] == "commit", 300)
        subprocess.run(["podman", "start", victim], check=True, capture_output=True)
        started = time.time()
        Sandbox().up(count=len(hosts))  # its new address in the inventory (for stopping the job), as a lab's DNS would
        grown = output.wait_for("commit with 3 ranks again", lambda r: r["size"] == 3 and r["event"] == "commit", 400)
    finally:
        running = subprocess.run(["podman", "inspect", "-f", "{{.State.Running}}", victim], capture_output=True,
                                 text=True).stdout.strip()
        if running != "true":  # the test failed while it was stopped
            subprocess.run(["podman", "start", victim], capture_output=True)
            Sandbox().up(count=len(hosts))
        runner.join(timeout=900)
    result = ended["result"]
    timeline = output.timeline()
    print(f"\nstopped {victim} at {stopped:.1f}, started it at {started:.1f}")
    print("\n".join(json.dumps(r) for r in timeline if r["event"] == "start" or r is timeline[-1]))
    assert result.rc == 0 and result.elastic, output.text()[-6000:]
    assert shrunk["time"] > stopped and grown["time"] > started
    assert grown["epoch"] < EPOCHS - 1, timeline  # it rejoined before the last epoch
    # The ranks left went on from the last commit (or the one after it, where a commit noticed the change).
    committed = [(r["epoch"], r["batch"]) for r in timeline if r["event"] == "commit" and r["time"] < stopped]
    resumed = next((r["epoch"], r["batch"]) for r in timeline if r["event"] == "start" and r["size"] == 2)
    assert committed[-1] <= resumed <= (committed[-1][0], committed[-1][1] + COMMIT_EVERY) or \
        resumed == (committed[-1][0] + 1, 0), (committed[-1], resumed)
    sizes = [r["size"] for r in timeline if r["event"] == "start"]
    assert sizes[0] == 3 and 2 in sizes and sizes[-1] == 3, timeline
    losses = [float(x) for x in re.findall(r"<stdout>:epoch \d+ loss ([0-9.]+)$", output.text(), re.M)]
    assert losses and losses[-1] < losses[0] / 2, losses
    ends = re.findall(r"<stdout>:rank (\d+) of (\d+) on (\S+) weights (\w+)$", output.text(), re.M)
    assert sorted(int(rank) for rank, *_ in ends) == [0, 1, 2], output.text()[-6000:]
    assert {host for *_, host, _ in ends} == set(hosts) and all(size == "3" for _, size, *_ in ends), ends
    assert len({digest for *_, digest in ends}) == 1, ends
