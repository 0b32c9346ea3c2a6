#!/usr/bin/env bash
# The test command: sets itself up, then lint, unit and integration tests, the molecule scenarios
# on real (container) hosts, and the whole site.yml + check on a 3-host sandbox.
#   HVC_SLOW=1          also run the slow tier (large downloads, e.g. Debian's CUDA toolkit)
#   HVC_SCENARIOS="a b" run only these molecule scenarios
#   HVC_SKIP_SANDBOX=1  skip the sandbox stage
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/stage.sh

# Scenarios that run on every test run, cheapest first; each shares the images built once below.
DEFAULT_SCENARIOS=(preflight preflight_arm64)
# The slow tier: documented in README, run with HVC_SLOW=1.
SLOW_SCENARIOS=()

stage setup bash scripts/setup.sh
source "${HVC_VENV:-$ROOT/.venv}/bin/activate"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0

stage images horovod-cluster sandbox build --arch amd64 --arch arm64
stage yamllint yamllint --strict .
stage ansible-lint ansible-lint
stage syntax ansible-playbook site.yml -i inventories/lab --syntax-check
stage pytest pytest -q -m "not sandbox"

scenarios=("${DEFAULT_SCENARIOS[@]}")
[[ "${HVC_SLOW:-0}" == 1 ]] && scenarios+=("${SLOW_SCENARIOS[@]}")
[[ -n "${HVC_SCENARIOS:-}" ]] && read -r -a scenarios <<<"$HVC_SCENARIOS"
for scenario in "${scenarios[@]}"; do
  stage "molecule:${scenario}" molecule test -s "$scenario"
done

if [[ "${HVC_SKIP_SANDBOX:-0}" != 1 ]]; then
  stage sandbox-run bash scripts/sandbox-run.sh
  stage pytest-sandbox pytest -q -m sandbox
fi
stage_summary
