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
# The spec is in tpuci's repository: the report names its commit.
want_commit=$(git -C "$HTML_TESTS" rev-parse HEAD 2>/dev/null || true)
if WANT_COMMIT=$want_commit python3 "$HTML_TESTS/check_dom.py" "$WORK/dom.html" "$summary" "$WORK"; then pass
else fail "the rendered DOM (above)"; fi

# The page in the run folder (report.html) links to the logs beside it.
run_page="$(readlink -f "$WORK/.tpuci/runs/latest")/report.html"
render --dump-dom "file://$run_page" > "$WORK/dom-run.html" 2>> "$WORK/chromium.log"
if python3 "$HTML_TESTS/check_dom.py" "$WORK/dom-run.html" "$summary" "$(dirname "$run_page")"; then pass
else fail "the run folder's page (above)"; fi
grep -q 'href="bad/attempt-1.log"' "$run_page" && pass || fail "report.html's link to bad's log is not bad/attempt-1.log"

# Moved together (a downloaded CI artifact), page and logs still meet.
mkdir -p "$WORK/artifact" && cp -r "$WORK/.tpuci" "$WORK/report.html" "$WORK/artifact/"
render --dump-dom "file://$WORK/artifact/report.html" > "$WORK/dom-moved.html" 2>> "$WORK/chromium.log"
if python3 "$HTML_TESTS/check_dom.py" "$WORK/dom-moved.html" "$summary" "$WORK/artifact"; then pass
else fail "the moved page (above)"; fi

# The filter works without a script in the page: a page of ours (scripts
# allowed there, file access for the frame) clicks each choice in the
# report, which it loads in a frame, and writes down which instances the
# report's own CSS leaves visible.
cat > "$WORK/filter.html" <<'HTML'
<!DOCTYPE html><html><body><pre id="out">pending</pre>
<iframe id="f" src="report.html" width="1200" height="800"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var d = this.contentDocument, res = {};
  ["f-all", "f-bad", "f-failed", "f-flaky", "f-passed", "f-timeout"].forEach(function (id) {
    d.getElementById(id).click();
    var vis = function (sel, name) {
      return Array.prototype.filter.call(d.querySelectorAll(sel), function (e) {
        return d.defaultView.getComputedStyle(e).display !== "none";
      }).map(function (e) { return e.querySelector(name).textContent.trim(); });
    };
    res[id] = {rows: vis("#instances tbody tr", "th a"), problems: vis("#problems article", "h3 a"),
               logs: vis("#logs > section", "h3").length};
  });
  document.getElementById("out").textContent = JSON.stringify(res);
});
</script></body></html>
HTML
render --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom \
  "file://$WORK/filter.html" > "$WORK/dom-filter.html" 2>> "$WORK/chromium.log"
check=$(python3 - "$WORK/dom-filter.html" "$summary" <<'PY'
import html, json, re, sys
m = re.search(r'<pre id="out">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
res = json.loads(html.unescape(m.group(1))) if m and m.group(1) != "pending" else None
report = json.load(open(sys.argv[2]))
names = lambda pred: [i["name"] for i in report["instances"] if pred(i["outcome"])]
want = {"f-all": names(lambda o: True), "f-bad": names(lambda o: o != "passed"),
        "f-failed": names(lambda o: o == "failed"), "f-flaky": names(lambda o: o == "flaky"),
        "f-passed": names(lambda o: o == "passed"), "f-timeout": names(lambda o: o == "timeout")}
bad = []
for k, v in want.items():
    got = res and res.get(k)
    if not got or got["rows"] != v or got["logs"] != len(v) or \
            got["problems"] != [n for n in v if n not in names(lambda o: o == "passed")]:
        bad.append(f"{k}: got {got}, want rows {v}")
print("ok" if res and not bad else "; ".join(bad) or "the frame never reported")
PY
)
[ "$check" = ok ] && pass || fail "the outcome filter: $check"

# The filter per test (issue 24.10): a report whose instances hold tests
# of several outcomes. Choosing "flaky" shows every instance that holds a
# flaky test (the failed one too), and in each only its flaky tests;
# "failed" the failed tests, "not run" the tests that never ran.
python3 - "$WORK/tests-summary.json" <<'PY'
import json, sys
def att(o): return [{"number": 1, "outcome": o, "exit_code": 1, "cause": o, "duration_ms": 10}]
def t(i, o, flaky=False): return {"id": i, "outcome": o, "flaky": flaky, "runs": 1, "duration_s": 0.1, "message": "m"}
insts = [
  {"name": "mixed", "outcome": "failed", "attempts": att("failed"),
   "tests": [t("a::fails", "failed"), t("a::wobbly", "passed", True), t("a::never", "not-run"), t("a::ok", "passed")]},
  {"name": "wobbly", "outcome": "flaky", "attempts": att("flaky"), "tests": [t("b::wobbly", "passed", True)]},
  {"name": "hung", "outcome": "timeout", "attempts": att("timeout"), "tests": [t("c::errs", "error"), t("c::hangs", "not-run")]},
  {"name": "fine", "outcome": "passed", "attempts": att("passed"), "tests": [t("d::ok", "passed")]},
]
json.dump({"version": 1, "run_id": "r", "verdict": "failed", "exit_code": 1,
           "counts": {"passed": 1, "flaky": 1, "failed": 1, "timeout": 1}, "instances": insts}, open(sys.argv[1], "w"))
PY
"$DRIVER" "$WORK/tests-summary.json" "$WORK/tests.html" && pass || fail "the driver failed on the tests report"
sed -e 's/src="report.html"/src="tests.html"/' -e 's/\["f-all", "f-bad", "f-failed", "f-flaky", "f-passed", "f-timeout"\]/["f-flaky", "f-failed", "f-not-run", "f-timeout"]/' \
  -e 's|logs: vis("#logs > section", "h3").length|tests: vis("#problems tbody tr", "code")|' \
  -e 's|return d.defaultView.getComputedStyle(e).display !== "none";|return e.getClientRects().length > 0;|' \
  "$WORK/filter.html" > "$WORK/filter-tests.html"
grep -q 'getClientRects' "$WORK/filter-tests.html" && grep -q 'tests: vis' "$WORK/filter-tests.html" && pass || fail "the per-test filter page was not made"
render --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom \
  "file://$WORK/filter-tests.html" > "$WORK/dom-filter-tests.html" 2>> "$WORK/chromium.log"
check=$(python3 - "$WORK/dom-filter-tests.html" <<'PY'
import html, json, re, sys
m = re.search(r'<pre id="out">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
res = json.loads(html.unescape(m.group(1))) if m and m.group(1) != "pending" else None
want = {
  "f-flaky": {"rows": ["mixed", "wobbly"], "problems": ["mixed", "wobbly"], "tests": ["a::wobbly", "b::wobbly"]},
  "f-failed": {"rows": ["mixed", "hung"], "problems": ["mixed", "hung"], "tests": ["a::fails", "c::errs"]},
  "f-not-run": {"rows": ["mixed", "hung"], "problems": ["mixed", "hung"], "tests": ["a::never", "c::hangs"]},
  "f-timeout": {"rows": ["hung"], "problems": ["hung"], "tests": ["c::errs", "c::hangs"]},
}
bad = [f"{k}: got {res and res.get(k)}, want {v}" for k, v in want.items() if not res or res.get(k) != v]
print("ok" if res and not bad else "; ".join(bad) or "the frame never reported")
PY
)
[ "$check" = ok ] && pass || fail "the per-test filter: $check"
# Its count is the header's (no instance is not-run); the two it shows
# for holding a test that never ran are said apart (issue 31.8).
grep -q '<label for="f-not-run">not run (0; +2 holding not run tests)</label>' "$WORK/tests.html" && pass ||
  fail "the not-run choice does not say the instances that hold a test that never ran apart"

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
