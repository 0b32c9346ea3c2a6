#!/usr/bin/env bash
# Fill a folder with everything tests/device/gpu_check.sh installs, for a GPU host with no network:
# the Horovod sdist (checked against the role's horovod_sdist_sha256), ansible-core and its needs for the
# controller venv, and the role's pinned build and runtime requirements (roles/horovod/defaults/main.yml).
#   tests/device/prepare.sh DIR [PYTHON_VERSION]      (default 3.12: the version of the GPU host's python3)
# Then on the GPU host: HVC_WHEELS=DIR tests/device/gpu_check.sh OUT
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${1:?usage: prepare.sh DIR [PYTHON_VERSION]}"
PYVER="${2:-3.12}"
mkdir -p "$DIR"
# One version of each: the controller's and the role's pins (cffi, PyYAML, packaging) are the same files.
CONTROLLER=(ansible-core==2.19.14 resolvelib==1.2.1 cryptography==44.0.3 jinja2==3.1.6 markupsafe==3.0.2)
mapfile -t ROLE < <(python3 - "$ROOT/roles/horovod/defaults/main.yml" <<'EOF'
import sys, yaml
defaults = yaml.safe_load(open(sys.argv[1]))
print("\n".join(defaults["horovod_build_requirements"] + defaults["horovod_runtime_requirements"]))
EOF
)
SHA="$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["horovod_sdist_sha256"])' \
  "$ROOT/roles/horovod/defaults/main.yml")"
VERSION="$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["horovod_version"])' \
  "$ROOT/roles/horovod/defaults/main.yml")"

python3 -m pip download --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_12_x86_64 --platform any -d "$DIR" "${CONTROLLER[@]}" "${ROLE[@]}"
python3 -m pip download --no-deps --no-binary=:all: -d "$DIR" "horovod==$VERSION"
echo "$SHA  $DIR/horovod-$VERSION.tar.gz" | sha256sum -c -
du -sh "$DIR"
