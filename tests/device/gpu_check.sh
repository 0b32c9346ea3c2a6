#!/usr/bin/env bash
# Record a GPU host and run Horovod on it the project's way, in one go (tests/device/README.md):
#   1. the host as the project records it (playbooks/record_facts.yml) and the raw texts its parser reads
#      (nvidia-smi, /proc/driver/nvidia, os-release), the compilers, CUDA and the torch installed there;
#   2. Horovod built with NCCL by the horovod role (tests/device/build.yml), then check-build;
#   3. the check's smoke test and allreduce benchmark on GPU tensors, torch.distributed's NCCL beside it,
#      and one allreduce of two ranks on the one GPU (what NCCL says of a shared GPU);
#   4. one allreduce whose ranks mix a GPU and a CPU tensor (tests/device/rank_devices.py);
#   5. the compatibility matrix's compiler patches, with this host's compiler (tests/compile_patches.py).
# Every step runs, whatever an earlier one gave, under its own time limit; OUT gets summary.json, the
# console log and record.tgz (everything recorded).
#   tests/device/gpu_check.sh OUT
# Environment: HVC_PYTHON   the environment's interpreter, with torch (default: python3 on PATH)
#              HVC_WHEELS   a folder with the Horovod sdist and every wheel needed (tests/device/prepare.sh):
#                           then nothing is downloaded (pip --no-index)
#              HVC_HOST_PYTHON  the interpreter Ansible's modules run with (default: Ansible's discovery)
#              HVC_HOST     the host's inventory name, i.e. the facts file's name (default: gpu-host)
#              HVC_SIZES    allreduce sizes in bytes (default 4 KiB .. 1 GiB)
#              HVC_WORK     scratch folder (default: /tmp/hvc-gpu-check; emptied first)
#              HVC_DEADLINE seconds for the whole run (default 3600): a step gets what is left of it, less 20 s
#                           for the summary, so a run under an outer time limit still writes its record
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$(mkdir -p "${1:?usage: gpu_check.sh OUT}" && cd "$1" && pwd)"
WORK="${HVC_WORK:-/tmp/hvc-gpu-check}"
PY="${HVC_PYTHON:-$(command -v python3)}"  # not resolved: a venv's python is a link to its base
HOST="${HVC_HOST:-gpu-host}"
SIZES="${HVC_SIZES:-4096 65536 1048576 16777216 67108864 268435456 1073741824}"
REC="$WORK/record"
rm -rf "$WORK" && mkdir -p "$REC/raw" "$REC/logs" "$REC/facts"
exec > >(tee "$OUT/console.log") 2>&1
cd "$ROOT" || exit 2
T0=$SECONDS

pack() {  # what comes back: the summary and the whole record
  "$PY" "$ROOT/tests/device/summarize.py" "$REC" > "$OUT/summary.json" 2> "$REC/logs/summarize.err"
  tar -C "$WORK" -czf "$OUT/record.tgz" record
  echo "=== gpu_check: $((SECONDS - T0)) s in all; $OUT/summary.json"
}
trap pack EXIT

DEADLINE="${HVC_DEADLINE:-3600}"
step() {  # step NAME SECONDS CMD...: run with a time limit, log to logs/NAME.log, keep its exit status and time
  local name="$1" limit="$2" start=$SECONDS code left
  shift 2
  left=$((DEADLINE - (SECONDS - T0) - 20))
  (( left < limit )) && limit=$left
  if (( limit < 5 )); then
    printf '%s\t%s\t%s\n' "$name" "not run (deadline)" 0 >> "$REC/steps.tsv"
    return 124
  fi
  echo "=== ${name}: $*"
  timeout --kill-after=10 "$limit" "$@" > "$REC/logs/${name}.log" 2>&1
  code=$?
  printf '%s\t%s\t%s\n' "$name" "$code" "$((SECONDS - start))" >> "$REC/steps.tsv"
  echo "=== ${name}: exit ${code} after $((SECONDS - start)) s"
  tail -n 5 "$REC/logs/${name}.log" | sed 's/^/    /'
  return "$code"
}

raw() {  # raw FILE CMD...: a command's own output, byte for byte (stderr and status beside it)
  local file="$1"; shift
  "$@" > "$REC/raw/$file" 2> "$REC/raw/$file.stderr"
  echo "$?" > "$REC/raw/$file.rc"
}

# --- 1. the host ---------------------------------------------------------------------------------------
raw os-release cat /etc/os-release
raw uname uname -a
raw cpus-memory bash -c "nproc; free -m"
raw gcc-version gcc --version
raw gxx-version g++ --version
raw nvcc-version nvcc --version
raw nvidia-smi nvidia-smi
raw nvidia-smi-query nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,compute_cap \
  --format=csv,noheader,nounits
raw proc-driver-nvidia-version cat /proc/driver/nvidia/version
for info in /proc/driver/nvidia/gpus/*/information; do
  [[ -e "$info" ]] && raw "proc-driver-nvidia-gpu-$(basename "$(dirname "$info")")" cat "$info"
done
raw dev-nvidia ls -l /dev/
raw python-torch "$PY" -c 'import json, platform, sys, torch
print(json.dumps({"python": platform.python_version(), "executable": sys.executable, "torch": torch.__version__,
  "torch_cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
  "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
  "capabilities": [list(torch.cuda.get_device_capability(i)) for i in range(torch.cuda.device_count())],
  "nccl": ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else None}))'
raw pip-list "$PY" -m pip list --format=freeze
raw python-headers "$PY" -c 'import os, sysconfig; i = sysconfig.get_paths()["include"]
print(i, os.path.isfile(i + "/Python.h"))'
raw tools bash -c 'for t in gcc g++ make cmake ninja nvcc mpicc mpirun patch; do echo "$t: $(command -v "$t")"; done'

GPU=0
grep -q '"cuda_available": true' "$REC/raw/python-torch" && GPU=1
echo "=== host: GPU=${GPU} python=${PY} $(head -c 300 "$REC/raw/python-torch")"

WHEELS=""
if [[ -n "${HVC_WHEELS:-}" ]]; then  # offline: every pip (ours and the role's) takes only these files
  WHEELS="$(cd "$HVC_WHEELS" && pwd)"
  export PIP_NO_INDEX=1 PIP_FIND_LINKS="$WHEELS"
fi

# The controller: ansible-core in a venv of its own (the host environment stays the role's to change).
ctl() {
  "$PY" -m venv "$WORK/ctl" || { rm -rf "$WORK/ctl" && "$PY" -m venv --without-pip "$WORK/ctl" \
    && "$PY" -m pip --python "$WORK/ctl/bin/python" install -q ansible-core==2.19.14; } || return 1
  [[ -x "$WORK/ctl/bin/ansible-playbook" ]] || "$WORK/ctl/bin/python" -m pip install -q ansible-core==2.19.14
}
export PY WORK
export -f ctl
step controller 300 bash -c ctl
export ANSIBLE_CONFIG="$ROOT/ansible.cfg" ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=False
cat > "$WORK/hosts.yml" <<EOF
all:
  hosts:
    ${HOST}:
      ansible_connection: local
      ansible_python_interpreter: ${HVC_HOST_PYTHON:-auto_silent}
EOF
step record_facts 300 "$WORK/ctl/bin/ansible-playbook" -i "$WORK/hosts.yml" playbooks/record_facts.yml \
  -e "cluster_record_dir=$REC/facts"

# --- 2. Horovod built by the role ----------------------------------------------------------------------
NVCC="$(command -v nvcc || true)"
CUDA_HOME_FOUND="${CUDA_HOME:-$([[ -n "$NVCC" ]] && dirname "$(dirname "$(readlink -f "$NVCC")")")}"
CUDA_VERSION="$(sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p' "$REC/raw/nvcc-version")"
NCCL_HOME="$WORK/nccl-home"
if [[ "$GPU" == 1 ]]; then
  # As the nccl role's pip method lays it out: the wheel's headers, libnccl.so.2 and a libnccl.so link.
  nccl_dir="$("$PY" -c 'import importlib.util as u; print(u.find_spec("nvidia.nccl").submodule_search_locations[0])')"
  mkdir -p "$NCCL_HOME/lib"
  ln -sfn "$nccl_dir/include" "$NCCL_HOME/include"
  ln -sfn "$(find "$nccl_dir" -name 'libnccl.so.2' | head -n 1)" "$NCCL_HOME/lib/libnccl.so.2"
  ln -sfn libnccl.so.2 "$NCCL_HOME/lib/libnccl.so"
  raw nccl-home ls -lR "$NCCL_HOME/" "$nccl_dir"
  if ! ls "$CUDA_HOME_FOUND"/lib64/libcudart.so* > /dev/null 2>&1; then
    # nvcc from the nvidia-* wheels: the home the cuda_toolkit role's pip method assembles from them
    "$PY" roles/cuda_toolkit/files/assemble_cuda_home.py "$(dirname "$(dirname "$PY")")" "$WORK/cuda-home" \
      && CUDA_HOME_FOUND="$WORK/cuda-home"
  fi
  raw cuda-home ls -l "$CUDA_HOME_FOUND/" "$CUDA_HOME_FOUND/lib64/"
fi
# The role's variables, from the environment (no value is pasted into code).
GPU="$GPU" WHEELS="$WHEELS" CUDA_HOME_FOUND="$CUDA_HOME_FOUND" CUDA_VERSION="$CUDA_VERSION" NCCL_HOME="$NCCL_HOME" \
  "$PY" - "$WORK/vars.json" <<'EOF'
import json, os, sys
env = os.environ
v = {"horovod_python": env["PY"], "horovod_frameworks": ["pytorch"], "horovod_controllers": ["gloo"],
     "horovod_gpu_operations": "NCCL" if env["GPU"] == "1" else "none",
     "horovod_build_root": env["WORK"] + "/build", "horovod_artifacts_dir": env["WORK"] + "/wheels",
     # the host's compilers and headers as they are: no package install (such a host often has no network)
     "cluster_rootless": True,
     # the host's own torch and Python, whatever the compatibility matrix has tested: this run tests them
     "horovod_allow_untested": True}
if env["WHEELS"]:
    v["horovod_sdist_url"] = "file://" + env["WHEELS"] + "/horovod-0.28.1.tar.gz"
if env["GPU"] == "1":
    v.update(horovod_cuda_home=env["CUDA_HOME_FOUND"], horovod_cuda_version=env["CUDA_VERSION"],
             horovod_nccl_home=env["NCCL_HOME"], horovod_nccl_link="SHARED")
json.dump(v, open(sys.argv[1], "w"), indent=1)
EOF
cp "$WORK/vars.json" "$REC/vars.json"
step build 2400 "$WORK/ctl/bin/ansible-playbook" -i "$WORK/hosts.yml" tests/device/build.yml -e "@$WORK/vars.json" -v
cp "$WORK"/build/build.log "$HOME"/.horovod/log/horovod-build-*.log "$REC/logs/" 2>/dev/null
HVDRUN="$(dirname "$PY")/horovodrun"
raw check-build "$HVDRUN" --check-build

# --- 3. collectives on the GPU -------------------------------------------------------------------------
SMOKE=roles/horovod_check/files/hvc_smoke.py
step smoke 180 "$HVDRUN" -np 1 -H localhost:1 --gloo "$PY" "$SMOKE"
# shellcheck disable=SC2086  # SIZES is a list of numbers
step bench 300 "$HVDRUN" -np 1 -H localhost:1 --gloo "$PY" roles/horovod_check/files/hvc_allreduce_bench.py $SIZES
# One rank's allreduce waits for Horovod's background cycle (HOROVOD_CYCLE_TIME, 1 ms by default): the same
# benchmark with a tenth of it shows how much of a small allreduce's time that wait is.
# shellcheck disable=SC2086
step bench_cycle_0.1ms 300 env HOROVOD_CYCLE_TIME=0.1 "$HVDRUN" -np 1 -H localhost:1 --gloo "$PY" \
  roles/horovod_check/files/hvc_allreduce_bench.py $SIZES
# shellcheck disable=SC2086
step torch_bench 300 "$PY" -m torch.distributed.run --standalone --nproc_per_node 1 \
  roles/horovod_check/files/hvc_torch_allreduce_bench.py --backend "$([[ "$GPU" == 1 ]] && echo nccl || echo gloo)" $SIZES
step two_ranks_one_gpu 120 env NCCL_DEBUG=WARN "$HVDRUN" -np 2 -H localhost:2 --gloo "$PY" tests/device/rank_devices.py cuda,cuda

# --- 4. a collective of a GPU rank and a CPU rank ------------------------------------------------------
step mixed_device 120 "$HVDRUN" -np 2 -H localhost:2 --gloo "$PY" tests/device/rank_devices.py cuda,cpu

# --- 5. the compiler patches with this host's compiler: horovod/common before and after them ------------
SDIST="$WORK/horovod-0.28.1.tar.gz"
if [[ -n "$WHEELS" ]]; then
  SDIST="$WHEELS/horovod-0.28.1.tar.gz"
else
  "$PY" -m pip download -q --no-deps --no-binary=:all: -d "$WORK" horovod==0.28.1
fi
step compile_patches 300 "$PY" tests/compile_patches.py "$SDIST" --std c++17 c++20
exit 0
