#!/usr/bin/env bash
# This project's execution environment, as AWX / Automation Controller / ansible-navigator users run it:
#   scripts/execution-environment.sh build                the image of execution-environment.yml (ansible-builder)
#   scripts/execution-environment.sh run PLAYBOOK [ARG...] ansible-navigator run PLAYBOOK in it, from the checkout
# The image is named after the definition's hash (localhost/horovod-cluster/ee:<hash>) and built when missing.
# Its base is EE_BASE_IMAGE, by default the sandbox's Debian 13 image built here (the system of the definition's
# debian:trixie, for a machine that reaches no registry). ansible-builder and ansible-navigator live in a venv of
# the cache folder. The EE runs on the host's network (it reaches the sandbox hosts as the host does), as root
# (it writes the cache folder), with the cache folder and /tmp mounted at their own paths.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${HOROVOD_CLUSTER_CACHE:-$HOME/.cache/horovod-cluster}"
TOOLS="$CACHE/ee-tools"
BASE="${EE_BASE_IMAGE:-localhost/horovod-cluster/debian-base:trixie-amd64}"
IMAGE="localhost/horovod-cluster/ee:$(sha256sum < "$ROOT/execution-environment.yml" | cut -c1-12)"
cd "$ROOT"

if [[ ! -x "$TOOLS/bin/ansible-navigator" ]]; then
  rm -rf "$TOOLS" && python3 -m venv "$TOOLS"
  "$TOOLS/bin/python" -m pip install -q --disable-pip-version-check 'ansible-builder>=3.1,<4' 'ansible-navigator>=25,<27'
fi

build() {
  podman image exists "$IMAGE" && return
  if ! podman image exists "$BASE" && [[ "$BASE" == localhost/horovod-cluster/* ]]; then
    "${HVC_VENV:-$ROOT/.venv}/bin/horovod-cluster" sandbox build --debian 13
  fi
  # The machine's CA bundle joins the image's trust store (ca-certificates reads /usr/local/share/ca-certificates),
  # so pip in the build reaches the index through a TLS-inspecting proxy, as this machine does.
  local bundle="${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}" extra="--network host" context
  [[ -f "$bundle" ]] && extra+=" --volume $bundle:/usr/local/share/ca-certificates/hvc-build-ca.crt:ro"
  context="$(mktemp -d)"
  trap 'rm -rf "$context"' RETURN
  "$TOOLS/bin/ansible-builder" build -f execution-environment.yml -c "$context" -t "$IMAGE" \
    --container-runtime podman --build-arg "EE_BASE_IMAGE=$BASE" --extra-build-cli-args "$extra" -v 1
}

case "${1:-}" in
  build) build; echo "execution environment: $IMAGE" ;;
  run)
    shift
    build
    # ansible-navigator refuses podman without POSIX message queues' folder, which a container host may lack
    [[ -d /dev/mqueue ]] || mkdir -p /dev/mqueue
    # Navigator's own log stays at warnings, and no playbook artifact is written into the checkout unless the
    # caller asks (--pae true --pas FILE, given after these defaults, wins): both hold every task's results.
    exec "$TOOLS/bin/ansible-navigator" run --pae false --ll warning "$@" --ee true --eei "$IMAGE" \
      --pull-policy never --mode stdout --lf "$CACHE/ee-navigator.log" --co=--network=host --co=--user=0 \
      --eev "$CACHE:$CACHE" --eev /tmp:/tmp --senv "HOROVOD_CLUSTER_CACHE=$CACHE" ;;
  *) echo "usage: $0 build | run PLAYBOOK [ARG...]" >&2; exit 2 ;;
esac
