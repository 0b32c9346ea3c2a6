#!/usr/bin/env bash
# Sets up this machine for horovod-cluster, starting from a bare Debian 12, Ubuntu 22.04 or
# Ubuntu 24.04 where you are root: the system packages the sandbox, the main job and the tests
# need (podman and its network stack, debootstrap, qemu for the arm64 stand-in, Python with venv),
# then a virtualenv (.venv, or HVC_VENV) with the package and its dev extra.
# Idempotent and quick when everything is already there. Every failure stops it, naming the step.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HVC_VENV:-$ROOT/.venv}"

# `step NAME CMD...`: run one step; on failure say which step failed and stop.
# The step runs in a subshell with errexit on: bash ignores `set -e` inside a function called as
# `f || ...`, so a failed command in the middle of a step (pip install) would not stop it.
step() {
  local name="$1"; shift
  local code=0
  set +e
  (set -e; "$@")
  code=$?
  set -e
  if ((code != 0)); then
    echo "setup: FAILED at step '${name}' (exit ${code})" >&2
    exit "$code"
  fi
}

# What the sandbox needs beyond a bare system. netavark (podman's network backend) needs iptables;
# Ubuntu 22.04's podman 3.4 uses CNI plugins instead of netavark and aardvark-dns.
system_packages() {
  local id version
  id="$(. /etc/os-release && echo "${ID:-}")"
  version="$(. /etc/os-release && echo "${VERSION_ID:-}")"
  local common=(podman runc iptables debootstrap qemu-user-static binfmt-support
                openssh-client iperf3 python3 python3-venv python3-dev ca-certificates g++)
  case "${id}-${version}" in
    ubuntu-22.04) echo "${common[*]} containernetworking-plugins golang-github-containernetworking-plugin-dnsname" ;;
    debian-12|ubuntu-24.04) echo "${common[*]} netavark aardvark-dns" ;;
    *)
      echo "setup: warning: ${id} ${version} is not a tested controller (Debian 12, Ubuntu 22.04/24.04)" >&2
      echo "${common[*]} netavark aardvark-dns" ;;
  esac
}

install_system_packages() {
  local need=() pkg
  for pkg in $(system_packages); do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need+=("$pkg")
  done
  ((${#need[@]})) || return 0
  if ((EUID != 0)); then
    echo "setup: missing system packages: ${need[*]}; run this script as root, or install them with" \
         "'sudo apt-get install ${need[*]}'" >&2
    return 1
  fi
  echo "setup: apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# arm64 hosts run under qemu-user through binfmt_misc. Without it only the arm64 stand-in is lost.
enable_binfmt() {
  if [[ ! -e /proc/sys/fs/binfmt_misc/status ]]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null \
      || { echo "setup: warning: binfmt_misc unavailable (arm64 hosts need it)"; return 0; }
  fi
  [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || update-binfmts --enable qemu-aarch64 \
    || echo "setup: warning: could not enable qemu-aarch64 (arm64 hosts need it)"
}

create_venv() {
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
}

pip_install() {
  local stamp="$VENV/.hvc-installed"
  if [[ -f "$stamp" && ! "$ROOT/pyproject.toml" -nt "$stamp" ]]; then
    return 0
  fi
  rm -f "$stamp"
  echo "setup: pip install -e .[dev] into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[dev]"
  "$VENV/bin/python" -c "import horovod_cluster, molecule, ansible_runner"
  touch "$stamp"
}

step "system packages (apt-get)" install_system_packages
step "binfmt_misc for arm64" enable_binfmt
step "python venv at $VENV" create_venv
step "pip install -e .[dev]" pip_install
echo "setup: ok ($VENV)"
