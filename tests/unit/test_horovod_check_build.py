"""horovod_build_info parsing over check-build outputs (tests/fixtures/check_build)."""
import pytest

from horovod_check_build import CheckBuildParseError, missing_capabilities, parse_check_build


def test_cpu_gloo_mpi(fixture_text):
    got = parse_check_build(fixture_text("check_build/cpu_gloo_mpi.txt"))
    assert got["version"] == "0.28.1"
    assert got["frameworks"] == ["pytorch"]
    assert got["controllers"] == ["gloo", "mpi"]
    assert got["tensor_operations"] == ["gloo", "mpi"]
    assert got["built"]["tensor_operations"]["nccl"] is False


def test_nccl(fixture_text):
    got = parse_check_build(fixture_text("check_build/nccl_torch_cuda.txt"))
    assert "nccl" in got["tensor_operations"]
    assert got["frameworks"] == ["pytorch"]
    assert missing_capabilities(got, {"tensor_operations": ["NCCL"], "controllers": ["gloo"]}) == []


def test_mpi_only(fixture_text):
    got = parse_check_build(fixture_text("check_build/mpi_only_tensorflow.txt"))
    assert got["frameworks"] == ["tensorflow"]
    assert got["controllers"] == ["mpi"]
    assert missing_capabilities(got, {"controllers": ["gloo", "mpi"]}) == ["controllers:gloo"]


def test_nothing_built(fixture_text):
    got = parse_check_build(fixture_text("check_build/nothing_built.txt"))
    assert got["frameworks"] == [] and got["controllers"] == [] and got["tensor_operations"] == []
    assert set(got["built"]["tensor_operations"]) == {"nccl", "ddl", "ccl", "mpi", "gloo"}
    assert missing_capabilities(got, {"frameworks": ["pytorch"]}) == ["frameworks:pytorch"]


def test_verbose_noise_ignored(fixture_text):
    got = parse_check_build(fixture_text("check_build/gloo_only_verbose.txt"))
    assert got["controllers"] == ["gloo"]
    assert got["frameworks"] == ["pytorch"]


def test_old_release_mlsl_kept():
    text = "Horovod v0.18.1:\n\nAvailable Frameworks:\n    [X] TensorFlow\n\nAvailable Tensor Operations:\n    [X] MLSL\n"
    got = parse_check_build(text)
    assert got["version"] == "0.18.1" and got["tensor_operations"] == ["mlsl"]


@pytest.mark.parametrize("text", ["", "Traceback (most recent call last):\nImportError: no horovod\n",
                                  "usage: horovodrun [-h] ..."])
def test_not_check_build_output(text):
    with pytest.raises(CheckBuildParseError):
        parse_check_build(text)


def test_real_output_captured_from_the_cluster_scenario(fixture_text):
    """`horovodrun --check-build` of the wheel built by molecule horovod_cluster (torch 2.13.0+cpu)."""
    text = fixture_text("check_build/real_molecule_cpu.txt")
    assert text.splitlines()[-1] == "    [X] Gloo    "  # textwrap.dedent keeps the template's trailing spaces
    got = parse_check_build(text)
    assert got == parse_check_build(fixture_text("check_build/cpu_gloo_mpi.txt"))
