#!/usr/bin/env bash
# Sets up this machine for horovod-cluster: system packages for the sandbox (podman, debootstrap,
# qemu for the arm64 stand-in), then a virtualenv with the package and its dev extra.
# Idempotent and quick when everything is already there. Source it or run it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HVC_VENV:-$ROOT/.venv}"

need_apt=()
for pkg in podman debootstrap runc netavark aardvark-dns qemu-user-static binfmt-support openssh-client \
           iperf3; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  echo "setup: apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# arm64 hosts run under qemu-user through binfmt_misc.
if [[ ! -e /proc/sys/fs/binfmt_misc/status ]]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || echo "setup: warning: binfmt_misc unavailable (arm64 hosts need it)"
fi
[[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || update-binfmts --enable qemu-aarch64 || true

if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
stamp="$VENV/.hvc-installed"
if [[ ! -f "$stamp" || "$ROOT/pyproject.toml" -nt "$stamp" ]]; then
  echo "setup: pip install -e .[dev] into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -e "$ROOT[dev]" 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/python" -c "import horovod_cluster, molecule, ansible_runner" && touch "$stamp"
fi
