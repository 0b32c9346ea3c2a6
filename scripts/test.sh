#!/usr/bin/env bash
# The test command: sets itself up, then lint, unit and integration tests, the molecule scenarios
# on real (container) hosts, and the whole site.yml + check on a 3-host sandbox.
#   HVC_SLOW=1          also run the slow tier (large downloads: Debian's CUDA toolkit, 1.6 GB)
#   HVC_SCENARIOS="a b" run only these molecule scenarios (one lane)
#   HVC_SKIP_SANDBOX=1  skip the sandbox stage
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/stage.sh

# Two lanes side by side keep the 2 cores busy: the amd64 scenarios wait mostly on package
# installs and compiles; the other lane runs the arm64 scenarios under qemu (CPU-bound), then the
# tests that need no sandbox (ansible-playbook runs on localhost).
ARM64_SCENARIOS=(preflight_arm64 toolchain_arm64)
AMD64_SCENARIOS=(preflight toolchain mpi_cluster python_env horovod_cluster horovod_nccl)
# The slow tier, documented in README.
SLOW_SCENARIOS=(cuda_distro)

stage setup bash scripts/setup.sh
source "${HVC_VENV:-$ROOT/.venv}/bin/activate"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 ANSIBLE_NOCOLOR=1
# One Horovod wheel cache for the scenarios and the sandbox run, outside the checkout: a wheel is
# compiled at most once per platform key per machine.
export HOROVOD_ARTIFACTS_DIR="${HOROVOD_ARTIFACTS_DIR:-$HOME/.cache/horovod-cluster/wheels}"

stage images horovod-cluster sandbox build --arch amd64 --arch arm64
stage yamllint yamllint --strict .
stage ansible-lint ansible-lint
stage syntax ansible-playbook site.yml -i inventories/lab --syntax-check

run_lane() {  # run scenarios one after another, print each one's time, stop at the first failure
  local scenario start
  for scenario in "$@"; do
    start=$SECONDS
    if molecule test -s "$scenario"; then
      echo "=== molecule ${scenario}: ok in $((SECONDS - start)) s"
    else
      echo "=== molecule ${scenario}: FAILED after $((SECONDS - start)) s"
      return 1
    fi
  done
}

if [[ -n "${HVC_SCENARIOS:-}" ]]; then
  read -r -a only <<<"$HVC_SCENARIOS"
  stage molecule run_lane "${only[@]}"
else
  side_log="$(mktemp -t hvc-side-lane.XXXXXX.log)"
  side_lane() {
    stage molecule-arm64 run_lane "${ARM64_SCENARIOS[@]}"
    stage pytest pytest -q -m "not sandbox"
    stage_summary
  }
  echo "=== side lane (molecule ${ARM64_SCENARIOS[*]}, then pytest) in the background, log: $side_log"
  side_lane >"$side_log" 2>&1 &
  side_pid=$!
  side_start=$SECONDS
  stage molecule-amd64 run_lane "${AMD64_SCENARIOS[@]}"
  [[ "${HVC_SLOW:-0}" == 1 ]] && stage molecule-slow run_lane "${SLOW_SCENARIOS[@]}"
  side_wait() {
    local code=0
    wait "$side_pid" || code=$?
    # The lane's stage lines, pytest's summary and failures; the whole tail when it failed.
    grep -E "^=== |^(FAILED|ERROR|CRITICAL)|failed=[1-9]|unreachable=[1-9]| passed| failed|^  [a-z0-9-]+ [0-9]+s " \
      "$side_log" | tail -60
    ((code == 0)) || { echo "--- side lane log tail"; tail -120 "$side_log"; }
    echo "=== side lane took $((SECONDS - side_start)) s in all"
    return "$code"
  }
  stage side-lane side_wait
fi

if [[ "${HVC_SKIP_SANDBOX:-0}" != 1 ]]; then
  stage sandbox-run bash scripts/sandbox-run.sh
  # The README snippet runs as written on the sandbox (a re-run: nothing left to change).
  stage pytest-sandbox env HVC_README_ON_SANDBOX=1 pytest -q -m sandbox
fi
stage_summary
