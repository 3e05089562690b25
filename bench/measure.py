#!/usr/bin/env python3
"""Runs a command and prints its wall time, CPU time (user+sys of it and
its children) and peak RSS as one JSON line. Used by the benchmarks."""
import json
import os
import subprocess
import sys
import time

def main():
    if len(sys.argv) < 3:
        sys.exit("usage: measure.py LABEL CMD [ARGS...]")
    label, cmd = sys.argv[1], sys.argv[2:]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    print(json.dumps({
        "label": label,
        "wall_s": round(wall, 4),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 4),
        "maxrss_mb": round(ru.ru_maxrss / 1024.0, 1),
        "status": os.waitstatus_to_exitcode(status),
    }))

if __name__ == "__main__":
    main()
