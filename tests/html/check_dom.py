#!/usr/bin/env python3
"""Checks the DOM Chromium rendered from the HTML report of
tests/html/specs/mixed.lua (chromium --dump-dom), against the report JSON.

    check_dom.py DOM.html REPORT.json [PAGE_DIR]

With PAGE_DIR (the page's folder), every log link must lead to a file
from there; with WANT_COMMIT set, the report and the header must name
that commit.

Prints one line per failed check and exits 1 when any failed.
"""
import html.parser
import json
import os
import sys
import urllib.parse


class Dom(html.parser.HTMLParser):
    """Collects elements (tag, attributes, the classes of their ancestors)
    and the text of the page, per element of interest."""

    VOID = {"meta", "rect", "line", "br", "img", "input", "link", "hr", "path", "circle"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.elements = []
        self.text = []
        self.texts_by_id = {}
        self.title = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, [s[0] for s in self.stack]))
        if tag not in self.VOID:
            self.stack.append((tag, a, []))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), [s[0] for s in self.stack]))

    def handle_endtag(self, tag):
        while self.stack:
            t, a, buf = self.stack.pop()
            text = "".join(buf)
            if "id" in a:
                self.texts_by_id[a["id"]] = text
            if t == "title" and [s[0] for s in self.stack] == ["html", "head"]:
                self.title = text
            if self.stack:
                self.stack[-1][2].append(text)
            if t == tag:
                break

    def handle_data(self, data):
        self.text.append(data)
        if self.stack:
            self.stack[-1][2].append(data)


def main():
    dom_path, report_path = sys.argv[1], sys.argv[2]
    page_dir = sys.argv[3] if len(sys.argv) > 3 else None
    report = json.load(open(report_path, encoding="utf-8"))
    dom = Dom()
    dom.feed(open(dom_path, encoding="utf-8").read())
    dom.close()
    text = "".join(dom.text)
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    tags = [e[0] for e in dom.elements]
    ids = {e[1].get("id") for e in dom.elements}
    # No script injection: the hostile log's markup is text, not elements.
    check("script" not in tags, "a <script> element exists")
    check("img" not in tags, "an <img> element exists")
    check("b" not in tags and "i" not in tags, "a <b> or <i> element exists")
    check("pwned" not in ids and "pwned-h1" not in ids, "an element with a hostile id exists")
    check('<script>document.title="pwned"</script>' in text, "the hostile log line is not shown as text")
    check('<b id="pwned">bold</b>' in text, "the hostile <b> line is not shown as text")
    check('</pre></details><h1 id="pwned-h1">escaped?</h1>' in text,
          "the hostile closing tags are not shown as text")
    check("\x1b" not in text and "[31m" not in text, "terminal colour codes are shown")
    check(dom.title == "tpuci run %s: failed" % report["run_id"],
          "the page title is %r" % dom.title)

    # The header: verdict, counts (as the report has them).
    check("FAILED" in dom.texts_by_id.get("h-run", text), "no FAILED verdict")
    counts = report["counts"]
    for key, label in (("passed", "passed"), ("flaky", "flaky"), ("failed", "failed"),
                       ("timeout", "timeout"), ("total", "total")):
        want = "%d %s" % (counts[key], label)
        check(want in text, "no count '%s'" % want)

    # Every instance, with its outcome, in the table; each attempt a bar.
    for inst in report["instances"]:
        check(inst["name"] in text, "instance %r is not shown" % inst["name"])
    bars = [e for e in dom.elements if e[0] == "rect" and "b" in e[1].get("class", "").split()]
    nattempts = sum(len(i["attempts"]) for i in report["instances"])
    check(len(bars) == nattempts, "%d bars for %d attempts" % (len(bars), nattempts))
    outcomes = sorted({a["outcome"] for i in report["instances"] for a in i["attempts"]})
    for o in outcomes:
        check(any(("b-" + o) in b[1].get("class", "") for b in bars), "no %s bar" % o)
    flaky_bars = [b for b in bars if "flaky" in b[1].get("class", "").split()]
    check(len(flaky_bars) == 2, "%d bars marked flaky, want 2" % len(flaky_bars))
    for k, inst in enumerate(report["instances"]):
        head = dom.texts_by_id.get("i%d-h" % k, "")
        check(inst["name"] in head and inst["outcome"] in head,
              "the heading of %r does not say %s: %r" % (inst["name"], inst["outcome"], head))
    # Failing attempts' log tails are in the page.
    check("about to fail" in text and "broken" in text, "the log tail of 'bad' is missing")
    check("first try fails" in text, "the first attempt of 'flaky' is missing")

    # tpuci's version and the spec's repository's commit.
    check(("tpuci" + report["tpuci_version"]) in text.replace("\n", ""), "no tpuci version")
    if os.environ.get("WANT_COMMIT"):
        check(report["commit"] == os.environ["WANT_COMMIT"],
              "commit %r, want %r" % (report["commit"], os.environ["WANT_COMMIT"]))
        check(any(e[0] == "code" and e[1].get("title") == report["commit"] for e in dom.elements),
              "the commit is not in the header")
    # Log links are relative and lead to the logs from the page's folder.
    links = [e[1]["href"] for e in dom.elements if e[0] == "a" and "log" in e[1].get("class", "").split()]
    nlogs = sum(1 for i in report["instances"] for a in i["attempts"] if a["log"])
    check(len(links) == nlogs and nlogs > 0, "%d log links for %d logs" % (len(links), nlogs))
    for href in links:
        check(not href.startswith("/") and "://" not in href, "log link %r is not relative" % href)
        if page_dir:
            check(os.path.isfile(os.path.join(page_dir, urllib.parse.unquote(href))),
                  "log link %r leads nowhere from %s" % (href, page_dir))
    # The filter: a radio button per choice, a label for each.
    radios = {e[1].get("id") for e in dom.elements if e[0] == "input" and e[1].get("type") == "radio"}
    labels = {e[1].get("for") for e in dom.elements if e[0] == "label"}
    check({"f-all", "f-bad", "f-failed", "f-flaky", "f-passed", "f-timeout"} <= radios, "radios %s" % radios)
    check(radios == labels, "radios %s, labels %s" % (radios, labels))

    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("dom: %d elements, %d bars, every check passed" % (len(dom.elements), len(bars)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
