"""The side-by-side benchmarks' figures (P5, P7 of issue 50), recomputed from the rounds of the real runs that
docs/benchmarks.md quotes (tests/fixtures/benchmarks/*-rounds-cycle02.json), and their refusals of bad options."""
from __future__ import annotations

import argparse
import json
import sys

import pytest
from conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import allreduce_vs_torch  # noqa: E402
import training_vs_ddp  # noqa: E402

P7_RUN = json.loads((FIXTURES / "benchmarks" / "training_vs_ddp-rounds-cycle02.json").read_text())
P5_RUN = json.loads((FIXTURES / "benchmarks" / "allreduce_vs_torch-rounds-cycle02.json").read_text())


def test_p7_is_the_median_of_each_rounds_horovod_over_ddp():
    figure, each = training_vs_ddp.paired_ratio(P7_RUN["runs"], "horovod_gloo")
    assert [round(r, 4) for r in each] == [round(r, 4) for r in P7_RUN["ratios_per_round"]["P7_gloo"]]
    assert round(figure, 2) == 0.88 == round(P7_RUN["ratios"]["P7_gloo"], 2)


def test_p5_per_round_figures_pair_each_round_with_its_own_torch_run():
    for got, recorded in zip(P5_RUN["rounds"], P5_RUN["ratios_per_round"]):
        horovod, torch = ({int(size): bw for size, bw in got[name].items()} for name in ("horovod_gloo", "torch_gloo"))
        assert allreduce_vs_torch.ratios(horovod, torch) == recorded["horovod_gloo"]
    size = "16777216"
    median, each = allreduce_vs_torch.paired_median([r["horovod_gloo"][size] for r in P5_RUN["rounds"]],
                                                    [r["torch_gloo"][size] for r in P5_RUN["rounds"]])
    # paired, not the median of one over the median of the other
    assert each == [r["horovod_gloo"][size] / r["torch_gloo"][size] for r in P5_RUN["rounds"]]
    assert median == sorted(each)[1]


@pytest.mark.parametrize(("low", "text"), [(1, "0"), (2, "1"), (1, "-3")])
def test_counts_below_their_floor_are_refused_by_name(low, text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"{text}: expected an integer >= {low}"):
        allreduce_vs_torch.at_least(low)(text)
    assert allreduce_vs_torch.at_least(low)(str(low)) == low
