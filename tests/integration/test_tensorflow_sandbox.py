"""Horovod with TensorFlow and PyTorch in one build on 3 fresh sandbox hosts (issue 47), and the Keras example
(examples/train_keras.py) across every slot with Gloo and with MPI: the loss falls, every rank ends with the same
weights. Two TensorFlows: 2.15.1 (tensorflow-cpu, Keras 2, the last before Keras 3) and 2.18.1 with tf-keras 2.18.0
(tf.keras is Keras 2 through TF_USE_LEGACY_KERAS, which the role sets with a .pth file, and the role's
tf_keras_backend patch; Keras 3 breaks horovod.tensorflow.keras, horovod/horovod#4290).

Slow tier (HVC_SLOW=1): per TensorFlow, a rollout of 3 fresh hosts with its wheels (downloaded once into the
controller's wheelhouse) and a Horovod compile with both frameworks into a wheel cache of this module's own, so the
build is proven every time: 27 min here beside other tests, the compile 11 min of it (docs/testing.md).
The hosts are a sandbox of the test's own (hvc-tf*), from the packaged sandbox inventory.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from horovod_cluster import Cluster
from horovod_cluster.ansible.events import TaskLog
from own_sandbox import own_sandbox, slow_own_sandbox
from training_output import assert_trained_everywhere

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train_keras.py"
MARKER = "/opt/horovod/venv/.horovod-platform-key.json"
COMPILE = "Horovod | Compile with pip wheel"
# Each TensorFlow: its pins in python_env_pip_packages, what the platform key names, and whether the role makes
# tf-keras the environment's tf.keras (TF_USE_LEGACY_KERAS=1 from a .pth file of the venv's site-packages).
TENSORFLOWS = {
    # PyPI's CPU build of TensorFlow 2.15.1, the last before Keras 3, for the hosts' Python 3.11
    "tf2.15": {"pins": ["tensorflow-cpu==2.15.1"], "key": "-pytorch2.13.0_cpu-tensorflow2.15.1-cpu-",
               "legacy_keras": False},
    # tf-keras requires the `tensorflow` distribution (its Linux wheel runs on CPU hosts)
    "tf2.18-tf-keras": {"pins": ["tensorflow==2.18.1", "tf-keras==2.18.0"],
                        "key": "-pytorch2.13.0_cpu-tensorflow2.18.1-cpu-", "legacy_keras": True},
}
LEGACY_KERAS_PTH = "/opt/horovod/venv/lib/python3.11/site-packages/hvc-tf-legacy-keras.pth"
# 6 ranks importing TensorFlow and torch on 2 cores: Gloo's 30 s rendezvous default is too short.
SLOW_START = ["--env", "HOROVOD_GLOO_TIMEOUT_SECONDS=300", "--env", "OMPI_MCA_mpi_yield_when_idle=1"]

pytestmark = slow_own_sandbox("3 fresh hosts with TensorFlow, a Horovod compile: 20-27 min")


@pytest.fixture(scope="module", params=list(TENSORFLOWS))
def rolled_out(request, tmp_path_factory):
    """The 3 hosts rolled out with both frameworks: (inventory, rollout result, task timings, wheel cache, the
    TensorFlow's entry of TENSORFLOWS)."""
    tensorflow = TENSORFLOWS[request.param]
    root = tmp_path_factory.mktemp("tensorflow")
    with own_sandbox(root, "hvc-tf", count=3):
        timings = TaskLog()
        cluster = Cluster(root / "inventory", artifacts_dir=root / "runs", on_event=timings,
                          extravars={"horovod_frameworks": ["pytorch", "tensorflow"],
                                     "python_env_pip_packages": tensorflow["pins"],
                                     "horovod_artifacts_dir": str(root / "wheels")})
        yield root / "inventory", cluster.rollout(), timings, root / "wheels", tensorflow


def on_host(host: str, *argv: str) -> str:
    return subprocess.run(["podman", "exec", host, *argv], check=True, capture_output=True, text=True).stdout


def marker(host: str) -> dict:
    return json.loads(on_host(host, "cat", MARKER))


def test_one_build_with_both_frameworks_on_every_host(rolled_out):
    inventory, rollout, timings, wheels, tensorflow = rolled_out
    assert rollout.ok, rollout.to_json()
    hosts = Cluster(inventory).hosts()
    keys = {host: marker(host)["platform_key"] for host in hosts}
    assert len(set(keys.values())) == 1 and tensorflow["key"] in keys[hosts[0]], keys
    assert ("tfkeras" in keys[hosts[0]].split("-")) == tensorflow["legacy_keras"], keys  # the patched wheel says so
    compiled = [host for host, task in timings.seconds if task == COMPILE]
    assert len(compiled) == 1, timings.seconds  # one compile, the other hosts install its wheel
    assert len(list(wheels.glob("*/horovod-*.whl"))) == 1
    for host in hosts:  # what check-build says of the installed Horovod, on each host
        frameworks = marker(host)["verified"]["info"]["capabilities"]["frameworks"]
        assert sorted(frameworks) == ["pytorch", "tensorflow"], (host, marker(host))
        # every pinned wheel came from the controller's wheelhouse (its set of torch and these pins)
        held = on_host(host, "ls", "/opt/horovod/wheelhouse").split()
        for pin in tensorflow["pins"]:
            name, version = pin.replace("-", "_").split("==")
            assert any(w.startswith(f"{name}-{version}-") for w in held), (host, pin, held)
        pth = on_host(host, "sh", "-c", f"cat {LEGACY_KERAS_PTH} 2>/dev/null || true")
        assert ("os.environ.setdefault('TF_USE_LEGACY_KERAS', '1')" in pth) == tensorflow["legacy_keras"], pth
    print(f"\ntensorflow rollout: compile {timings.seconds[(compiled[0], COMPILE)]:.0f} s on {compiled[0]}")


@pytest.mark.parametrize("controller", ["gloo", "mpi"])
def test_keras_example_trains_across_every_host(rolled_out, controller, tmp_path):
    inventory, rollout, _, _, _ = rolled_out
    assert rollout.ok
    result_file = tmp_path / "job.json"
    run = subprocess.run([shutil.which("horovod-cluster"), "run", "-i", str(inventory), "--controller", controller,
                          "--copy", str(EXAMPLE), "--json", str(result_file), *SLOW_START,
                          "--", "python", "train_keras.py", "--epochs", "4"],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    job = json.loads(result_file.read_text())
    assert job["rc"] == 0 and job["controller"] == controller and len(job["hosts"]) == 3
    assert_trained_everywhere(run.stdout, job, epochs=4)
