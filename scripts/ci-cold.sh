#!/usr/bin/env bash
# Runs the README's two commands the way a brand-new machine would (issue 11's cold proof):
# removes every podman container, network and image, ~/.cache/horovod-cluster, the pip cache and
# iptables, then from a fresh clone of this checkout's HEAD runs scripts/sandbox-run.sh and
# `CI=true bash .ci/run`, printing each one's time. DESTRUCTIVE for this machine's podman state:
# meant for a CI-like machine, not a workstation. Usage: scripts/ci-cold.sh [CLONE_DIR] [--test-only]
# --test-only: skip the main command, so the test command itself starts from nothing (what CI sees).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLONE="${1:-/tmp/hvc-ci-cold}"
TEST_ONLY="${2:-}"
start=$SECONDS
echo "=== cold: removing podman containers, networks, images; caches; iptables"
if command -v podman >/dev/null; then
  podman ps -aq | xargs -r podman rm -f -t 1 >/dev/null 2>&1
  podman ps -aq | xargs -r podman rm -f -t 1 >/dev/null 2>&1  # a dead conmon needs a second rm
  podman network ls --format '{{.Name}}' | grep -vx podman | xargs -r podman network rm -f >/dev/null
  podman images -q | xargs -r podman rmi -f >/dev/null
fi
rm -rf "${HOROVOD_CLUSTER_CACHE:-$HOME/.cache/horovod-cluster}" "$HOME/.cache/pip"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq iptables >/dev/null
rm -rf "$CLONE" && git clone -q "$ROOT" "$CLONE" && cd "$CLONE" || exit 2
echo "=== cold: $(git log --oneline -1)"
if [ "$TEST_ONLY" != --test-only ]; then
  s=$SECONDS
  bash scripts/sandbox-run.sh || { echo "=== cold: main command FAILED after $((SECONDS - s)) s"; exit 1; }
  echo "=== cold: main command ok in $((SECONDS - s)) s"
fi
s=$SECONDS
CI=true bash .ci/run </dev/null || { echo "=== cold: test command FAILED after $((SECONDS - s)) s"; exit 1; }
echo "=== cold: test command ok in $((SECONDS - s)) s; total $((SECONDS - start)) s"
