"""benchmarks/cluster_ratios.py's P1 split, over the JSON of a real run (tests/fixtures/benchmarks/: the run of
`--hosts 3 --compare-sharing --plan-scaleout` at d6d65f9 that docs/benchmarks.md quotes)."""
from __future__ import annotations

import json
import re
import sys

from conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import cluster_ratios  # noqa: E402

RUN = json.loads((FIXTURES / "benchmarks" / "cluster_ratios-d6d65f9.json").read_text())


def test_the_split_names_each_rollouts_compile_and_the_rest():
    split = cluster_ratios.p1_split(RUN)
    assert split.startswith("P1 split: sharing, compile 123 s + outside it 150 s; every host compiling, "
                            "compile 396 s + outside it 161 s;"), split
    most = float(re.search(r"outside under (\d+) s", split).group(1))
    # at that bound, with the every-host rollout's extra outside time kept, the ratio is the target
    c, c_every = 122.9, 395.7
    o, o_every = 272.7 - c, 556.2 - c_every
    assert abs((c + most) / (c_every + most + o_every - o) - 0.45) < 0.002
    assert abs(RUN["ratios"]["shared_over_every_host_compiling"] - (c + o) / (c_every + o_every)) < 0.001


def test_no_split_without_the_every_host_rollout():
    warm = {**RUN, "seconds": {k: v for k, v in RUN["seconds"].items() if "every" not in k}}
    assert cluster_ratios.p1_split(warm) is None
