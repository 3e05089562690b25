#!/usr/bin/env python3
"""The time table tests/run-all.sh prints at its end.

Reads the folder run-all.sh fills: `steps` ("NAME SECONDS" per line), and
for each ctest pass NAME, `NAME.log` (ctest's lines, each prefixed with the
epoch second it was printed at) and `NAME.tests.json` (`ctest
--show-only=json-v1`: each test's labels), `cpu.start` and `cpu.end`
(/proc/stat's first line at the run's start and end) and `steps.extra`
("calibration SECONDS": a fixed loop's time). Prints each step's wall
time, then for each pass each label's wall time (from its first test's
start to its last test's end) and test time (the sum), the ten slowest
tests, and the machine's busy core-seconds and calibration.

usage: timetable.py FOLDER
"""
import json
import os
import re
import sys

START = re.compile(r"^(\d+) +Start +\d+: (\S+)")
END = re.compile(r"^(\d+) +\d+/\d+ Test +#\d+: (\S+) .*?([\d.]+) sec")


def labels_of(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    out = {}
    for t in data.get("tests", []):
        names = []
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                names = p.get("value") or []
        out[t["name"]] = names
    return out


def read_pass(folder, name):
    starts, ends, secs = {}, {}, {}
    with open(os.path.join(folder, name + ".log"), errors="replace") as f:
        for line in f:
            m = START.match(line)
            if m:
                starts[m.group(2)] = int(m.group(1))
                continue
            m = END.match(line)
            if m:
                ends[m.group(2)] = int(m.group(1))
                secs[m.group(2)] = float(m.group(3))
    return starts, ends, secs


def mmss(s):
    s = int(round(s))
    return "%d:%02d" % (s // 60, s % 60)


def main(folder):
    steps = []
    try:
        with open(os.path.join(folder, "steps")) as f:
            for line in f:
                name, _, secs = line.rstrip("\n").rpartition(" ")
                steps.append((name, int(secs)))
    except OSError:
        pass
    print("\ntime table (wall, m:ss)")
    for name, secs in steps:
        print("  %-22s %6s" % (name, mmss(secs)))
    passes = sorted(n[:-4] for n in os.listdir(folder) if n.endswith(".log") and n != "images.log")
    for name in passes:
        starts, ends, secs = read_pass(folder, name)
        if not secs:
            continue
        labels = labels_of(os.path.join(folder, name + ".tests.json"))
        by_label = {}
        for test in secs:
            for label in labels.get(test, ["(none)"]):
                by_label.setdefault(label, []).append(test)
        print("\n%s: %d tests" % (name, len(secs)))
        print("  %-10s %5s %8s %9s" % ("label", "tests", "wall", "test time"))
        for label in sorted(by_label):
            tests = by_label[label]
            first = min(starts.get(t, ends[t]) for t in tests)
            last = max(ends[t] for t in tests)
            total = sum(secs[t] for t in tests)
            print("  %-10s %5d %8s %9s" % (label, len(tests), mmss(last - first), mmss(total)))
        print("  the ten slowest:")
        for test in sorted(secs, key=lambda t: -secs[t])[:10]:
            print("    %7.1f s  %s" % (secs[test], test))
    machine(folder)
    return 0


def cpu_line(path):
    """(busy, total) clock ticks of /proc/stat's "cpu" line: busy is all
    but idle and iowait."""
    with open(path) as f:
        v = [int(x) for x in f.read().split()[1:]]
    total = sum(v[:8])
    return total - v[3] - v[4], total


def machine(folder):
    """The machine's busy time over the run, and the calibration loop."""
    try:
        b0, t0 = cpu_line(os.path.join(folder, "cpu.start"))
        b1, t1 = cpu_line(os.path.join(folder, "cpu.end"))
    except (OSError, ValueError, IndexError):
        return
    hz = os.sysconf("SC_CLK_TCK")
    cores = os.cpu_count() or 1
    if t1 > t0:
        print("\nmachine: %d cores busy %s of %s core-time (%.0f%%)"
              % (cores, mmss((b1 - b0) // hz), mmss((t1 - t0) // hz),
                 100.0 * (b1 - b0) / (t1 - t0)))
    try:
        with open(os.path.join(folder, "steps.extra")) as f:
            for line in f:
                name, _, value = line.strip().partition(" ")
                if name == "calibration":
                    print("machine: a fixed Python loop (3M steps) took %s s" % value)
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
