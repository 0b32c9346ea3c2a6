#!/usr/bin/env bash
# The main job on the sandbox: set up, bring up 3 local Debian hosts, roll out site.yml on them
# over SSH, then check the cluster.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
source "${HVC_VENV:-$ROOT/.venv}/bin/activate"
horovod-cluster sandbox up --hosts "${HVC_HOSTS:-3}"
ansible-playbook site.yml -i inventories/sandbox
