#!/usr/bin/env bash
# Run a command on a controller of today: Debian 13's Python 3.13 with the newest ansible-core that pip gives it
# (this project's main controller is Python 3.11, whose newest is 2.19). The controller is a container of the
# sandbox's Debian 13 image plus python3-venv, on the host's network (it reaches the sandbox hosts as the host
# does), with the checkout, the cache folder and /tmp mounted at their own paths; its venv (pip install -e
# .[dev]) is kept in the cache folder, made again when pyproject.toml changes and pointed at this checkout
# when another one made it.
#   scripts/newest-controller.sh                  the unit tests
#   scripts/newest-controller.sh CMD [ARG...]     CMD in the checkout, with the venv active
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${HOROVOD_CLUSTER_CACHE:-$HOME/.cache/horovod-cluster}"
NODE=localhost/horovod-cluster/node:trixie-amd64
VENV="$CACHE/controller-py313"
(($#)) || set -- python -m pytest -q -p no:cacheprovider tests/unit

# The node image runs systemd and sshd; the controller adds venv and g++ (tests/compile_patches.py compiles with the
# controller's compiler), from Debian's archive. The tag carries the recipe's digest: a changed recipe builds anew.
recipe="FROM $NODE
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv g++"
IMAGE="localhost/horovod-cluster/controller:trixie-amd64-$(sha256sum <<<"$recipe" | cut -c1-12)"
if ! podman image exists "$IMAGE"; then
  podman image exists "$NODE" || "${HVC_VENV:-$ROOT/.venv}/bin/horovod-cluster" sandbox build --debian 13
  podman build -q -t "$IMAGE" -f - "$ROOT/scripts" <<<"$recipe" > /dev/null
  # earlier recipes' images go
  podman images --format '{{.Repository}}:{{.Tag}}' localhost/horovod-cluster/controller | grep -vxF "$IMAGE" \
    | xargs -r podman rmi > /dev/null || true
fi
mkdir -p "$CACHE"

# In the container: the venv when missing, a week old (the newest ansible-core moves) or made from another
# pyproject.toml, then the command. The marker holds pyproject.toml's digest (a CI clone's files are all new: no
# mtime tells) and the checkout whose src/ the editable install imports (another clone made it: only that is redone).
inside='
set -euo pipefail
digest="$(sha256sum pyproject.toml | cut -c1-64)"
marker="$VENV/.hvc-installed"
if [[ "$(head -1 "$marker" 2>/dev/null)" != "$digest" || -z "$(find "$marker" -mtime -7 2>/dev/null)" ]]; then
  rm -rf "$VENV" && python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[dev]"
  printf "%s\n%s\n" "$digest" "$PWD" > "$marker"
elif [[ "$(tail -1 "$marker")" != "$PWD" ]]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e .
  printf "%s\n%s\n" "$digest" "$PWD" > "$marker.new" && touch -r "$marker" "$marker.new" && mv "$marker.new" "$marker"
fi
source "$VENV/bin/activate"
echo "newest-controller: Python $(python -c "import platform; print(platform.python_version())"),"\
  "ansible-core $(python -c "from ansible.release import __version__; print(__version__)")"
exec "$@"
'
# By name only: podman copies the value from this environment, so index or proxy credentials stay out of argv.
env_args=()
for name in PIP_CERT PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_DEFAULT_TIMEOUT HTTPS_PROXY HTTP_PROXY \
  NO_PROXY HOROVOD_ARTIFACTS_DIR HVC_SLOW HOROVOD_CLUSTER_CACHE; do
  [[ -n "${!name:-}" ]] && env_args+=(-e "$name")
done
# pip's local find-links folders (a lab's wheel mirror) at their own paths, read-only
for link in ${PIP_FIND_LINKS:-}; do
  [[ "$link" == /* && -d "$link" ]] && env_args+=(-v "$link:$link:ro")
done
# The controller is one cgroup, weighed against each sandbox host's and every process of the other lane: at podman's
# default weight the unit and plan tests took 1771 s beside the sandbox tests and a qemu compile (410 s alone). The
# weight of four keeps its lane even; where podman may not set it (rootless without the cpu controller), the default.
weight=()
podman run --rm --cpu-shares 4096 "$IMAGE" true > /dev/null 2>&1 && weight=(--cpu-shares 4096)
exec podman run --rm "${weight[@]}" --network host -v "$ROOT:$ROOT" -v "$CACHE:$CACHE" -v /tmp:/tmp \
  -v /etc/ssl/certs:/etc/ssl/certs:ro -e "VENV=$VENV" -e "HOME=$HOME" "${env_args[@]}" -w "$ROOT" "$IMAGE" \
  bash -c "$inside" newest-controller "$@"
