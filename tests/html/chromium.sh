#!/usr/bin/env bash
# The HTML report of a real run, rendered by headless Chromium: a spec with
# passing, failing, flaky and timed-out jobs and a log full of markup runs
# through the tpuci binary; its report becomes a page (with --report-html
# once the CLI has it, else with the tpuci-report-html driver); Chromium's
# DOM must show every instance, outcome and count, and the log's markup as
# text only. A screenshot is kept next to the page and copied, with the
# page, to $TPUCI_BUILD/artifacts/ for CI to keep.
#
# Needs /usr/bin/chromium (Debian package chromium; CI installs it): skips
# with exit 77 without it. Installs nothing.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "SKIP: $CHROMIUM is missing: install the Debian package 'chromium' to render the HTML report" >&2
  exit 77
fi
if ! command -v python3 > /dev/null; then
  echo "SKIP: python3 is missing (it checks the rendered DOM)" >&2
  exit 77
fi
. "$TESTS/e2e/lib.sh"

HTML_TESTS="$TESTS/html"
DRIVER=${TPUCI_REPORT_HTML:-${TPUCI_BUILD:+$TPUCI_BUILD/tests/html/tpuci-report-html}}
# Chromium writes its profile, caches and crash dumps under these.
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" XDG_CACHE_HOME="$WORK/home/.cache"
mkdir -p "$HOME" out

# render ARGS... URL: one headless Chromium with a fresh profile, no
# network services, capped at two minutes.
render() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --user-data-dir="$(mktemp -d "$WORK/profile.XXXXXX")" "$@"
}

# The run: six instances, one of each outcome the local runtime gives.
cli_html=0
if "$TPUCI" help run 2>&1 | grep -q -- '--report-html'; then cli_html=1; fi
if [ "$cli_html" = 1 ]; then
  OUT="$WORK/out" run_tpuci run -j 2 --report-html "$WORK/report.html" "$HTML_TESTS/specs/mixed.lua"
else
  OUT="$WORK/out" run_tpuci run -j 2 "$HTML_TESTS/specs/mixed.lua"
fi
expect_code 1 "the mixed spec fails"
expect_json 's["counts"]["passed"], s["counts"]["flaky"], s["counts"]["failed"], s["counts"]["timeout"]' \
  "(2, 1, 2, 1)"
summary="$WORK/.tpuci/runs/latest/summary.json"

# The page, from the same report through the driver; the CLI's (if any)
# must be the same bytes.
if [ -z "$DRIVER" ] || [ ! -x "$DRIVER" ]; then
  fail "the tpuci-report-html driver is missing (TPUCI_REPORT_HTML='$DRIVER')"
  finish
fi
if "$DRIVER" "$summary" "$WORK/driver.html"; then pass; else fail "the driver failed"; fi
if [ "$cli_html" = 1 ]; then
  if cmp -s "$WORK/report.html" "$WORK/driver.html"; then pass
  else fail "tpuci run --report-html and the driver wrote different pages"; fi
else
  cp "$WORK/driver.html" "$WORK/report.html"
fi
# Deterministic: the same report gives the same bytes.
"$DRIVER" "$summary" "$WORK/again.html"
if cmp -s "$WORK/report.html" "$WORK/again.html"; then pass; else fail "two renderings differ"; fi

# The DOM as Chromium built it (scripts on, as a browser would have them:
# the page has none and its policy forbids inline ones).
render --dump-dom "file://$WORK/report.html" > "$WORK/dom.html" 2> "$WORK/chromium.log"
if [ -s "$WORK/dom.html" ]; then pass; else
  fail "chromium --dump-dom printed nothing; its log:"; tail -n 20 "$WORK/chromium.log" >&2
fi
if python3 "$HTML_TESTS/check_dom.py" "$WORK/dom.html" "$summary"; then pass
else fail "the rendered DOM (above)"; fi

# The screenshot, next to the page.
render --screenshot="$WORK/report.png" --window-size=1280,900 --hide-scrollbars \
  "file://$WORK/report.html" > /dev/null 2>> "$WORK/chromium.log"
if [ -s "$WORK/report.png" ] && [ "$(head -c 8 "$WORK/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
  pass
else
  fail "no PNG screenshot; chromium's log:"; tail -n 20 "$WORK/chromium.log" >&2
fi
if [ -n "${TPUCI_BUILD:-}" ]; then
  mkdir -p "$TPUCI_BUILD/artifacts"
  cp "$WORK/report.html" "$TPUCI_BUILD/artifacts/html-report.html"
  [ -s "$WORK/report.png" ] && cp "$WORK/report.png" "$TPUCI_BUILD/artifacts/html-report.png"
  echo "kept $TPUCI_BUILD/artifacts/html-report.html and html-report.png"
fi
finish
