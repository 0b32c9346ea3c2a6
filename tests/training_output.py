"""What the tests that run an example training script (examples/train*.py) across the sandbox check in its output."""
from __future__ import annotations

import re


def assert_trained_everywhere(stdout: str, job: dict, epochs: int) -> None:
    """Rank 0's loss fell to under half; every slot ran a rank, each line came whole with its own rank's prefix,
    the ranks spanned every host of the job, and all of them ended with the same weights. (Open MPI 5's tag puts a
    space after "<stdout>:", Gloo's and Open MPI 4's do not.)"""
    losses = [float(x) for x in re.findall(r"^\[0\]<stdout>: ?epoch \d+ loss ([0-9.]+)$", stdout, re.M)]
    assert len(losses) == epochs and losses[-1] < losses[0] / 2, stdout
    ends = re.findall(r"^\[(\d+)\]<stdout>: ?rank (\d+) of (\d+) on (\S+) weights (\w+)$", stdout, re.M)
    assert sorted(int(prefix) for prefix, *_ in ends) == list(range(job["np"])), stdout
    assert all(prefix == rank and int(size) == job["np"] for prefix, rank, size, _, _ in ends), ends
    assert {host for *_, host, _ in ends} == set(job["hosts"]), ends
    assert len({digest for *_, digest in ends}) == 1, ends
