#!/usr/bin/env bash
# The main job on the sandbox: set up, bring up 3 local Debian hosts, roll out site.yml on them
# over SSH (build Horovod once, install everywhere), then check the cluster: per-host health,
# consistency, a Horovod allreduce across the hosts with Gloo and MPI, and the bandwidth table.
# Prints each stage's time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/stage.sh
stage setup bash scripts/setup.sh
source "${HVC_VENV:-$ROOT/.venv}/bin/activate"
stage sandbox-up horovod-cluster sandbox up --hosts "${HVC_HOSTS:-3}"
stage rollout horovod-cluster rollout -i inventories/sandbox --junit "${HVC_REPORTS:-/tmp}/hvc-rollout.xml"
stage check horovod-cluster check -i inventories/sandbox --bench --json "${HVC_REPORTS:-/tmp}/hvc-check.json" \
  --html "${HVC_REPORTS:-/tmp}/hvc-check.html"
stage_summary
