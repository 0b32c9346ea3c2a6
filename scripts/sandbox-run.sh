#!/usr/bin/env bash
# The main job on the sandbox: set up, bring up 3 local Debian hosts, roll out site.yml on them
# over SSH (build Horovod once, install everywhere), then check the cluster: per-host health,
# consistency, a Horovod allreduce across the hosts with Gloo and MPI, and the bandwidth table.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
source "${HVC_VENV:-$ROOT/.venv}/bin/activate"
horovod-cluster sandbox up --hosts "${HVC_HOSTS:-3}"
horovod-cluster rollout -i inventories/sandbox --junit "${HVC_REPORTS:-/tmp}/hvc-rollout.xml"
horovod-cluster check -i inventories/sandbox --bench --json "${HVC_REPORTS:-/tmp}/hvc-check.json"
