"""The cluster's job groups (plugins/filter/hvc_job_groups.py): which hosts can run one Horovod job together,
with which controller and on which tensors (issue 51)."""
from __future__ import annotations

import hvc_job_groups


def host(python="3.11", transport="tcp", mpi="4", gpu=False, controllers=("gloo", "mpi")):
    return {"python": python, "gloo_transport": transport, "mpi_major": mpi, "gpu": gpu,
            "controllers": list(controllers)}


def groups_of(result):
    return [(g["controller"], g["hosts"], g["tensors"]) for g in result["groups"]]


def test_linux_hosts_of_one_open_mpi_are_one_group_per_controller():
    result = hvc_job_groups.job_groups({"a": host(), "b": host(), "c": host()})
    assert groups_of(result) == [("gloo", ["a", "b", "c"], "cpu"), ("mpi", ["a", "b", "c"], "cpu")]
    assert result["spans"] == {"gloo": True, "mpi": True} and result["reasons"] == {}


def test_the_lab_mix_a_mac_beside_linux_gpu_and_cpu_hosts():
    """The lab: a GPU server, a CPU server and a Pi (Open MPI 4.1, tcp) and a Mac (Homebrew's Open MPI 5, uv)."""
    result = hvc_job_groups.job_groups({"gpu01": host(gpu=True), "cpu01": host(), "pi01": host(),
                                        "mac01": host(transport="uv", mpi="5")})
    assert groups_of(result) == [
        ("gloo", ["cpu01", "gpu01", "pi01"], "cpu"), ("gloo", ["gpu01"], "cuda"), ("gloo", ["mac01"], "cpu"),
        ("mpi", ["cpu01", "gpu01", "pi01"], "cpu"), ("mpi", ["gpu01"], "cuda"), ("mpi", ["mac01"], "cpu")]
    assert [g["gpus_of"] for g in result["groups"]] == [False, True, False, False, True, False]
    assert result["spans"] == {"gloo": False, "mpi": False}
    assert result["reasons"] == {
        "gloo": "Gloo transports differ (cpu01=tcp, gpu01=tcp, mac01=uv, pi01=tcp)",
        "mpi": "Open MPI majors differ (cpu01=4, gpu01=4, mac01=5, pi01=4)"}


def test_gpu_hosts_alone_train_on_cuda_tensors():
    result = hvc_job_groups.job_groups({"g1": host(gpu=True), "g2": host(gpu=True)})
    assert groups_of(result) == [("gloo", ["g1", "g2"], "cuda"), ("mpi", ["g1", "g2"], "cuda")]


def test_python_and_missing_controllers_split_the_cluster_and_say_why():
    result = hvc_job_groups.job_groups({"a": host(), "b": host(python="3.13", mpi="5"),
                                        "c": host(controllers=["gloo"])})
    assert groups_of(result) == [("gloo", ["a", "c"], "cpu"), ("gloo", ["b"], "cpu"),
                                 ("mpi", ["a"], "cpu"), ("mpi", ["b"], "cpu")]
    assert result["reasons"] == {"gloo": "Python versions differ (a=3.11, b=3.13, c=3.11)",
                                 "mpi": "Horovod is built without mpi on c"}


LAB = {"gpu01": host(gpu=True), "cpu01": host(), "pi01": host(), "mac01": host(transport="uv", mpi="5")}


def test_a_gloo_job_across_a_mac_and_linux_hosts_is_refused_naming_the_way_out():
    why = hvc_job_groups.job_refusal(LAB, "gloo")
    assert why.startswith("Gloo transports differ (cpu01=tcp, gpu01=tcp, mac01=uv, pi01=tcp): no gloo job spans")
    assert "--limit cpu01,gpu01,pi01 or --limit mac01" in why
    same_mpi = {**LAB, "mac01": host(transport="uv", mpi="4")}
    assert "run one with --controller mpi or --limit" in hvc_job_groups.job_refusal(same_mpi, "gloo")
    assert hvc_job_groups.job_refusal(same_mpi, "mpi") == ""


def test_a_cuda_job_across_gpu_and_cpu_hosts_is_refused_naming_the_cpu_hosts():
    linux = {h: LAB[h] for h in ("gpu01", "cpu01", "pi01")}
    why = hvc_job_groups.job_refusal(linux, "mpi", "cuda")
    assert why.startswith("CUDA tensors need NCCL on every rank and cpu01, pi01 have none: Horovod refuses")
    assert why.endswith("run on CPU tensors (--tensors cpu) or --limit gpu01")
    assert hvc_job_groups.job_refusal(linux, "mpi", "cpu") == ""
    assert hvc_job_groups.job_refusal({"gpu01": LAB["gpu01"]}, "gloo", "cuda") == ""
