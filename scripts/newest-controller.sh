#!/usr/bin/env bash
# Run a command on a controller of today: Debian 13's Python 3.13 with the newest ansible-core that pip gives it
# (this project's main controller is Python 3.11, whose newest is 2.19). The controller is a container of the
# sandbox's Debian 13 image plus python3-venv, on the host's network (it reaches the sandbox hosts as the host
# does), with the checkout, the cache folder and /tmp mounted at their own paths; its venv (pip install -e
# .[dev]) is kept in the cache folder and made again when pyproject.toml changes.
#   scripts/newest-controller.sh                  the unit tests and the plan tests
#   scripts/newest-controller.sh CMD [ARG...]     CMD in the checkout, with the venv active
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${HOROVOD_CLUSTER_CACHE:-$HOME/.cache/horovod-cluster}"
NODE=localhost/horovod-cluster/node:trixie-amd64
IMAGE=localhost/horovod-cluster/controller:trixie-amd64
VENV="$CACHE/controller-py313"
PLAN_TESTS=(test_settings_refused test_lab_plan test_preflight_plan test_recorded_gpu_plan
  test_minimal_inventory_plan test_preflight_bad_input test_python_env_decide)

if ! podman image exists "$IMAGE"; then
  podman image exists "$NODE" || "${HVC_VENV:-$ROOT/.venv}/bin/horovod-cluster" sandbox build --debian 13
  # the node image runs systemd and sshd; the controller needs only venv (apt from Debian's archive)
  printf 'FROM %s\nRUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv' \
    "$NODE" | podman build -q -t "$IMAGE" -f - "$ROOT/scripts" > /dev/null
fi
mkdir -p "$CACHE"
plan_tests=()
for name in "${PLAN_TESTS[@]}"; do plan_tests+=("tests/integration/$name.py"); done
(($#)) || set -- python -m pytest -q -p no:cacheprovider tests/unit "${plan_tests[@]}"

# In the container: the venv when missing or older than pyproject.toml, then the command.
inside='
set -euo pipefail
if [[ ! -f "$VENV/.hvc-installed" || pyproject.toml -nt "$VENV/.hvc-installed" ]]; then
  rm -rf "$VENV" && python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[dev]"
  touch "$VENV/.hvc-installed"
fi
source "$VENV/bin/activate"
echo "newest-controller: Python $(python -c "import platform; print(platform.python_version())"),"\
  "ansible-core $(python -c "from ansible.release import __version__; print(__version__)")"
exec "$@"
'
# By name only: podman copies the value from this environment, so index or proxy credentials stay out of argv.
env_args=()
for name in PIP_CERT PIP_INDEX_URL PIP_EXTRA_INDEX_URL HTTPS_PROXY HTTP_PROXY NO_PROXY HOROVOD_ARTIFACTS_DIR HVC_SLOW \
  HOROVOD_CLUSTER_CACHE; do
  [[ -n "${!name:-}" ]] && env_args+=(-e "$name")
done
exec podman run --rm --network host -v "$ROOT:$ROOT" -v "$CACHE:$CACHE" -v /tmp:/tmp \
  -v /etc/ssl/certs:/etc/ssl/certs:ro -e "VENV=$VENV" -e "HOME=$HOME" "${env_args[@]}" -w "$ROOT" "$IMAGE" \
  bash -c "$inside" newest-controller "$@"
