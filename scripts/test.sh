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

# Two lanes side by side keep the 2 cores busy. The molecule lane runs the scenarios: python_env
# and horovod_cluster go first because they fill the caches the sandbox shares (the CPU wheelhouse,
# the CPU Horovod wheel), then the other amd64 scenarios, then the arm64 one under qemu, then the
# unit and plan tests and a Debian 13 rollout on the controller of today. The sandbox lane runs the
# other integration tests that need no sandbox, then -- once those caches are filled, so that no
# cache is ever filled by two runs at once -- the main job on the sandbox and the tests that build
# on its cluster.
ARM64_SCENARIOS=(preflight_arm64)
AMD64_FIRST=(python_env horovod_cluster)
AMD64_THEN=(preflight toolchain)
# The slow tier, documented in docs/testing.md (toolchain_arm64: 12 min under qemu; horovod_nccl: 15 min warm, a
# 2.9 GB CUDA wheel set and an nvcc compile cold, which alone would break the cold CI budget; mpi_cluster: 8 min,
# its mesh, hostfile and MPI job across hosts are the sandbox run's too).
# Each test that needs no sandbox runs once by default, on one of two controllers: the unit tests and these plan
# tests on the controller of today (Python 3.13, the newest ansible-core: stage newest-controller, which closes the
# molecule lane), the other integration tests on this one (Python 3.11, ansible-core 2.19: stage pytest-integration,
# which opens the sandbox lane). The slow tier runs each set on the other controller too. (On both, a warm CI run took
# 76 min on 2026-12-03: one such set was about 1900 s a controller.)
NEWEST_TESTS=(tests/unit tests/integration/test_settings_refused.py tests/integration/test_lab_plan.py
  tests/integration/test_preflight_plan.py tests/integration/test_recorded_gpu_plan.py
  tests/integration/test_minimal_inventory_plan.py tests/integration/test_preflight_bad_input.py
  tests/integration/test_python_env_decide.py)
# Today's machines (issue 46), also closing the molecule lane: two Debian 13 hosts rolled out and checked from the
# controller of today.
TODAY_TEST=tests/integration/test_today_sandbox.py
SLOW_SCENARIOS=(cuda_distro toolchain_arm64 horovod_nccl mpi_cluster)

stage setup bash scripts/setup.sh
source "${HVC_VENV:-$ROOT/.venv}/bin/activate"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 ANSIBLE_NOCOLOR=1
# One Horovod wheel cache for the scenarios and the sandbox run, outside the checkout: a wheel is
# compiled at most once per platform key per machine.
export HOROVOD_ARTIFACTS_DIR="${HOROVOD_ARTIFACTS_DIR:-$HOME/.cache/horovod-cluster/wheels}"

# The JSON report of the sandbox run's check (scripts/sandbox-run.sh writes it): test_check_sandbox.py asserts
# on it rather than running the same check again.
check_report="${HVC_REPORTS:-/tmp}/hvc-check.json"

stage images horovod-cluster sandbox build --arch amd64 --arch arm64
stage images-debian13 horovod-cluster sandbox build --debian 13  # the scenarios' and newest controller's
stage yamllint yamllint --strict .
stage ansible-lint ansible-lint
stage syntax ansible-playbook site.yml -i inventories/lab --syntax-check

destroy() {  # molecule's stock destroy; once more when it failed (seen once in CI after a passing verify:
  # a container's teardown still racing podman's network removal), since a leftover host breaks the next run
  molecule destroy -s "$1" && return 0
  echo "=== molecule $1: destroy failed, trying once more"
  sleep 5
  molecule destroy -s "$1"
}

run_lane() {  # run scenarios one after another, print each one's time, stop at the first failure
  local scenario start code
  for scenario in "$@"; do
    start=$SECONDS
    code=0
    # The test sequence without its two destroys, which run around it with one retry each.
    destroy "$scenario" && molecule test -s "$scenario" --destroy never || code=$?
    destroy "$scenario" || code=$?
    if ((code == 0)); then
      echo "=== molecule ${scenario}: ok in $((SECONDS - start)) s"
    else
      echo "=== molecule ${scenario}: FAILED after $((SECONDS - start)) s"
      return 1
    fi
  done
}

wait_for() {  # wait_for FILE: until another lane creates it
  until [[ -e "$1" ]]; do sleep 5; done
}

sandbox=1
[[ "${HVC_SKIP_SANDBOX:-0}" == 1 ]] && sandbox=0
if [[ -n "${HVC_SCENARIOS:-}" ]]; then
  read -r -a only <<<"$HVC_SCENARIOS"
  stage molecule run_lane "${only[@]}"
  if ((sandbox)); then
    stage sandbox-run bash scripts/sandbox-run.sh
    stage pytest-sandbox env HVC_README_ON_SANDBOX=1 HVC_SANDBOX_CHECK_REPORT="$check_report" pytest -q -m sandbox --durations=12
  fi
else
  caches_ready="$(mktemp -u -t hvc-caches-ready.XXXXXX)"
  side_log="$(mktemp -t hvc-sandbox-lane.XXXXXX.log)"
  sandbox_lane() {
    STAGE_TIMES=()
    stage pytest-integration pytest -q -m "not sandbox" --durations=15 tests/integration \
      "${NEWEST_TESTS[@]/#/--ignore=}"
    if ((sandbox)); then
      stage wait-for-caches wait_for "$caches_ready"
      stage sandbox-run bash scripts/sandbox-run.sh
      # The README snippet runs as written on the sandbox (a re-run: nothing left to change).
      stage pytest-sandbox env HVC_README_ON_SANDBOX=1 HVC_SANDBOX_CHECK_REPORT="$check_report" pytest -q -m sandbox \
        --durations=12 --ignore="$TODAY_TEST"
    fi
    stage_summary
  }
  echo "=== sandbox lane (pytest, sandbox run, pytest -m sandbox) in the background, log: $side_log"
  set -m  # the sandbox lane gets a process group of its own, stopped with it if this script fails
  sandbox_lane >"$side_log" 2>&1 &
  side_pid=$!
  set +m
  # (|| true: under set -e a failing command in the EXIT trap would become the script's exit code)
  trap 'kill -- -"$side_pid" 2>/dev/null || true; rm -f "$caches_ready"' EXIT
  side_start=$SECONDS
  stage molecule-amd64 run_lane "${AMD64_FIRST[@]}"
  touch "$caches_ready"
  stage molecule-amd64-more run_lane "${AMD64_THEN[@]}"
  stage molecule-arm64 run_lane "${ARM64_SCENARIOS[@]}"
  # the unit tests and the plan tests on the controller of today, then a rollout from it
  stage newest-controller bash scripts/newest-controller.sh python -m pytest -q -p no:cacheprovider --durations=5 \
    "${NEWEST_TESTS[@]}"
  ((sandbox)) && stage today pytest -q -s --durations=5 "$TODAY_TEST"
  if [[ "${HVC_SLOW:-0}" == 1 ]]; then
    stage molecule-slow run_lane "${SLOW_SCENARIOS[@]}"
    stage unit-and-plan-2.19 pytest -q --durations=5 "${NEWEST_TESTS[@]}"
    # and the other integration tests that need no sandbox on the controller of today (10 min)
    stage integration-newest bash scripts/newest-controller.sh python -m pytest -q -p no:cacheprovider --durations=5 \
      -m "not sandbox" tests/integration "${NEWEST_TESTS[@]/#/--ignore=}"
  fi
  side_wait() {
    local code=0
    wait "$side_pid" || code=$?
    # The lane's stage lines, pytest's summaries, durations and failures, the rollout's and
    # check's tables; the whole tail when it failed.
    grep -E "^=== |^(FAILED|ERROR|CRITICAL)|failed=[1-9]|unreachable=[1-9]| passed| failed|^[0-9.]+s (call|setup|teardown) |^  [a-z0-9-]+ [0-9]+s " \
      "$side_log" | tail -100
    ((code == 0)) || { echo "--- sandbox lane log tail"; tail -150 "$side_log"; }
    echo "=== sandbox lane took $((SECONDS - side_start)) s in all"
    return "$code"
  }
  stage sandbox-lane side_wait
fi
stage_summary
