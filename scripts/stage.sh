# Sourced by the scripts: `stage NAME CMD...` runs one step and prints how long it took.
STAGE_TIMES=()
stage() {
  local name="$1"; shift
  local start=$SECONDS
  echo "=== stage ${name}: $*"
  if "$@"; then
    STAGE_TIMES+=("${name} $((SECONDS - start))s ok")
    echo "=== stage ${name}: ok in $((SECONDS - start)) s"
  else
    local code=$?
    STAGE_TIMES+=("${name} $((SECONDS - start))s FAILED")
    echo "=== stage ${name}: FAILED (exit ${code}) after $((SECONDS - start)) s"
    stage_summary
    exit "$code"
  fi
}
stage_summary() {
  echo "=== stage times"
  printf '  %s\n' "${STAGE_TIMES[@]}"
}
